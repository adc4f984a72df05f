"""What a forget leaves of a session's run records (`store.extraction.run_records.forgotten`): how far each strategy
read, nothing of what it wrote; anything that does not read as a finished run is dropped; applying it again
changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from store.extraction.run_records import FORGET_TRIGGER, MAX_FORGOTTEN, forgotten, stored_runs

NOW = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)


def _run(strategy: Any, last: Any, status: str = "succeeded", **more: Any) -> dict[str, Any]:
    return {
        "run_id": f"{strategy}-{last}",
        "session_id": "s1",
        "strategy": strategy,
        "trigger": "messages",
        "first_seq": 1,
        "last_seq": last,
        "status": status,
        "model": "anthropic.claude",
        "model_calls": 2,
        "input_tokens": 900,
        "changes": [{"namespace": ["facts"], "key": "k1", "action": "add"}],
        "started_at": "2026-12-01T10:00:00Z",
        "finished_at": "2026-12-01T10:00:01Z",
        **more,
    }


def test_each_strategy_keeps_the_furthest_it_read_and_nothing_of_what_it_wrote() -> None:
    records = [_run("facts", 10), _run("facts", 20), _run("facts", 30, "failed"), _run("summary", 12, "refused")]
    left = stored_runs(forgotten(records, NOW))
    assert [(r.strategy, r.first_seq, r.last_seq, r.status) for r in left] == [
        ("facts", 1, 20, "succeeded"),  # the failed run's range was not read
        ("summary", 1, 12, "succeeded"),
    ]
    assert all(r.trigger == FORGET_TRIGGER and r.changes == [] and r.model == "" and r.model_calls == 0 for r in left)
    assert all(r.input_tokens == 0 and r.finished_at == NOW for r in left)


def test_a_second_forget_leaves_the_same_records() -> None:
    once = forgotten([_run("facts", 7), _run("preferences", 3)], NOW)
    assert forgotten(once, NOW + timedelta(days=3)) == once
    grown = forgotten([*once, _run("facts", 9)], NOW + timedelta(days=3))  # a run after the forget
    assert [(r["strategy"], r["last_seq"], r["finished_at"]) for r in grown] == [
        ("facts", 9, "2026-12-09T09:00:00.000000Z"),
        ("preferences", 3, "2026-12-06T09:00:00.000000Z"),
    ]


def test_what_does_not_read_as_a_finished_run_is_dropped() -> None:
    hostile: list[Any] = [
        "facts",
        None,
        {"strategy": "facts", "last_seq": 5},  # no status, no session
        _run("facts", True),  # a bool is not a position
        _run("facts", -3),
        _run("facts", "12"),
        _run(["x"], 4),
        {**_run("facts", 4), "session_id": 7},
    ]
    assert forgotten(hostile, NOW) == []
    assert forgotten({"not": "a list"}, NOW) == []  # type: ignore[arg-type]


def test_at_most_the_strategies_read_furthest_are_kept() -> None:
    records = [_run(f"s{i:03}", i + 1) for i in range(MAX_FORGOTTEN + 30)]
    left = forgotten(records, NOW)
    assert len(left) == MAX_FORGOTTEN
    assert min(r["last_seq"] for r in left) == 31  # the 30 read least are dropped
