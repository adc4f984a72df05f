"""A small load run of every kind (`python -m bench.load` runs 16 writers x 500 appends): writers as
threads and as processes, to one session and to 100, through the library and the HTTP API; nothing lost,
nothing duplicated, sequence numbers gapless."""

from __future__ import annotations

import pytest

from bench.load import measure


@pytest.mark.parametrize("via", ["library", "http"])
@pytest.mark.parametrize("workers", ["threads", "processes"])
@pytest.mark.parametrize("many", [False, True], ids=["one-session", "100-sessions"])
def test_small_load(via: str, workers: str, many: bool) -> None:
    result = measure(via, workers, many, writers=4, appends=8)
    assert (result.lost, result.duplicated, result.gapless) == (0, 0, True), result
    assert result.appends == 32
