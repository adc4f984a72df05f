"""bench/scale.py measures what one call costs as an owner's sessions and a session's messages grow, and
its report is computed from those measurements."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.scale_report import targets, write_report

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_scale_run_measures_every_call(tmp_path: Path) -> None:
    args = ["--owners", "3", "60", "--messages", "2", "--sessions", "40", "400", "--forks", "5", "1100"]
    args += ["--imports", "0"]
    subprocess.run(
        [sys.executable, "-m", "bench.scale", *args, "--out", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    results: dict[str, Any] = json.loads((tmp_path / "scale.json").read_text())
    small, large = results["search"]
    assert small["first"]["sessions_searched"] == 3 and small["first"]["messages_searched"] == 6
    # 60 sessions: one call reads the budget's 50 (newest first), the continuation the other 10
    assert large["first"]["sessions_searched"] == 50 and large["continuation"]["sessions_searched"] == 10
    assert large["first"]["calls"] == "51 Query"  # the index page, then one Query per session
    short, long = results["sessions"]
    assert long["load_full"]["messages_returned"] == 400 and long["live_context"]["messages_returned"] == 50
    assert long["live_context"]["requests"] == short["live_context"]["requests"] == 2
    assert long["load_full"]["bytes_received"] > 5 * long["live_context"]["bytes_received"]
    assert long["delete"]["messages_left_for_the_cascade"] == 0  # no deadline pressure at this size
    small_fork, long_fork = results["forks"]
    assert not small_fork["fork"]["copying"] and long_fork["fork"]["copying"]  # over 1,000: the cascade's
    assert "3 TransactWriteItems" in long_fork["fork"]["calls"], "the claim, the state, the fork: no message copied"
    assert long_fork["fork"]["requests"] <= small_fork["fork"]["requests"]
    assert long_fork["cascade"]["messages_in_the_fork"] == 1100 and not long_fork["cascade"]["copying_after"]
    assert long_fork["first_read"]["messages_returned"] == 100
    report = (tmp_path / "scale.md").read_text()
    assert "| 60 × 2 | first | 51 (51 Query) |" in report
    assert "| 1,100 | fork_session |" in report and "copied by the copy job" in report
    # the report follows the measurements: change one, and its row and target change with it
    results["sessions"][1]["live_context"]["requests"] = 9
    write_report(results, tmp_path)
    assert "| 400 | load_full(last=50) | 9 |" in (tmp_path / "scale.md").read_text()
    assert [ok for name, ok, _ in targets(results) if name.startswith("live-context")] == [False]
