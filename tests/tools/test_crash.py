"""SIGKILL a writer process mid-workflow, five times; the invariant checker finds the store consistent
after each kill, and nothing unreferenced after the reclaim step (`python -m infra.cli crash` runs longer)."""

from __future__ import annotations

import pytest

from infra.reliability.crash import run


@pytest.mark.extended
def test_killed_writers_leave_a_consistent_store(moto_endpoint: str) -> None:
    problems, done = run(moto_endpoint, kills=5, seed=7)
    assert problems == []
    assert done > 0  # the writers were working when they died
