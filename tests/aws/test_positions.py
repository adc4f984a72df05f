"""The store's cache of session positions stays bounded and keeps the most recently used."""

from __future__ import annotations

from store.aws.plans.base import Position, Positions


def test_positions_evict_least_recently_used() -> None:
    cache = Positions(size=3)
    for i in range(3):
        cache.put(f"s{i}", Position(i, 0, None))
    assert cache.get("s0") == Position(0, 0, None)  # s0 becomes most recent
    cache.put("s3", Position(3, 0, None))
    assert len(cache) == 3
    assert cache.get("s1") is None  # the least recently used went
    assert [cache.get(k) is not None for k in ("s0", "s2", "s3")] == [True, True, True]
    cache.drop("s0")
    assert cache.get("s0") is None and len(cache) == 2
