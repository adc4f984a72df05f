"""The contention benchmark (bench/append_contention.py): one small measurement, the baseline it compares
against taken from git, and the report's table written from the measurements."""

from __future__ import annotations

import json
from pathlib import Path

from bench import append_contention
from bench.report import section


def test_a_small_measurement_checks_what_it_reports(contended_endpoint: str) -> None:
    row = append_contention.measure(contended_endpoint, 3, 4, "benchtest")
    assert row["appends"] == 12 and row["conflicts"] == 0 and row["other_errors"] == 0
    assert row["gapless"] and row["missing"] == 0 and row["duplicated"] == 0
    assert 1 <= row["attempts_mean"] <= row["attempts_max"] <= 4  # the writer queue's bound
    assert row["per_second"] > 0 and row["p50_ms"] <= row["p99_ms"]


def test_the_baseline_is_the_store_as_it_was() -> None:
    with append_contention.baseline_store(append_contention.BASELINE) as before:
        old = (before / "store" / "aws" / "plans" / "base.py").read_text()
        assert "def write_session(" in old and "plans import turns" not in old  # the design before the queue
        assert not (before / "store" / "aws" / "plans" / "turns.py").exists()


def test_the_report_shows_every_run() -> None:
    results = json.loads((Path(append_contention.__file__).parent / "results.json").read_text())
    lines = section("Many writers on one session", results)
    runs = results["contention"]["runs"]
    rows = [line for line in lines if line.startswith("| ") and line.split("|")[1].strip().endswith(" ms")]
    assert len(rows) == len(runs) and all("| yes |" in r for r in rows)
    assert section("Many writers on one session", {}) == [
        "Not measured in this run: `python -m bench.append_contention` adds it.",
        "",
    ]
