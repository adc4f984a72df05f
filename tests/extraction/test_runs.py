"""What a session keeps of its extraction runs: one small record however many runs it has had, with each
strategy's newest run (where that strategy's next run starts) always in it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from store.extraction.run_records import (
    RUNS_BYTES,
    ExtractionRun,
    MemoryChange,
    finished_up_to,
    runs_to_keep,
    stored_runs,
)


def run(i: int, strategy: str) -> ExtractionRun:
    now = datetime(2026, 12, 6, tzinfo=UTC)
    change = MemoryChange(namespace=("facts",), key=f"facts-{i:024d}", action="add")
    return ExtractionRun(
        run_id=f"{i:020d}",
        session_id="s",
        strategy=strategy,
        trigger="messages",
        first_seq=i,
        last_seq=i,
        status="succeeded",
        model="m",
        changes=[change],
        started_at=now,
        finished_at=now,
    )


def test_the_runs_kept_stay_small_and_keep_each_strategys_newest() -> None:
    runs = [run(1, "summary")] + [run(i, "facts" if i % 2 else "preferences") for i in range(2, 500)]
    record = runs_to_keep(runs)
    assert len(json.dumps(record)) <= RUNS_BYTES + 1000 and 5 < len(record) < 40
    back = stored_runs(record)
    assert [r.last_seq for r in back] == sorted(r.last_seq for r in back)  # oldest first
    assert {r.strategy for r in back} == {"summary", "facts", "preferences"}
    for strategy in ("summary", "facts", "preferences"):
        assert finished_up_to(back, strategy) == finished_up_to(runs, strategy)
    assert back[-1] == runs[-1]
