"""The contract workflows at 10% and 30% injected faults (throttling, 500s, timeouts, resets, and writes
whose response is lost after the server applied them), on moto's server: every call succeeds or raises
a StoreError, no message is duplicated or lost, no save_full is half applied, the invariants hold, and no
unreferenced object survives the reclaim step. (`python -m infra.cli faults` runs longer versions.)"""

from __future__ import annotations

import pytest

from infra.reliability.chaos import run_against


@pytest.mark.extended
@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_workflows_under_faults(moto_endpoint: str, rate: float) -> None:
    outcome, problems = run_against(moto_endpoint, rate, sessions=3, turns=8, seed=11)
    assert problems == []
    assert sum(outcome.injected.values()) >= rate * outcome.requests / 2, outcome.injected  # faults did happen
    assert set(outcome.injected) == {"throttle", "server-error", "timeout", "reset", "lost-response"} or rate < 0.3
