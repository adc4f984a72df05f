"""How long a task's writes wait for the checkpoint that follows them (store.integrations.langgraph_held),
on a clock the test moves."""

from __future__ import annotations

import pytest

from store.integrations.langgraph_held import LINGER, MAX_HOLD, RECENT, Held, HeldWrites


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _held(held: HeldWrites, cid: str, *, ns: str = "", thread: str = "t") -> Held:
    return held.hold(Held(thread, ns, cid, {"cp": cid}, f"key-{cid}", None))


def test_writes_for_a_checkpoint_stored_earlier_wait_linger_from_their_arrival() -> None:
    clock = Clock()
    held = HeldWrites(clock)
    held.begin("t", "", "c1")
    held.end("t", "", "c1")
    clock.now += 30  # the task ran for 30 s after its checkpoint was stored
    writes = _held(held, "c1")
    assert held.left(writes) == pytest.approx(LINGER)
    clock.now += LINGER / 2
    assert held.left(writes) == pytest.approx(LINGER / 2)
    clock.now += LINGER / 2
    assert held.left(writes) <= 0
    assert held.release(writes) is True  # written alone
    assert held.take("t", "", "c1", None) == []


def test_writes_for_a_checkpoint_still_being_stored_wait_until_linger_after_it_is() -> None:
    clock = Clock()
    held = HeldWrites(clock)
    held.begin("t", "", "c1")
    held.end("t", "", "c1")
    writes = _held(held, "c2")  # LangGraph has not begun to put c2 yet (its puts go one after another)
    clock.now += 3 * LINGER
    assert held.left(writes) > 0
    held.begin("t", "", "c2")
    clock.now += 3 * LINGER
    assert held.left(writes) > 0  # being stored
    held.end("t", "", "c2")
    assert held.left(writes) == pytest.approx(LINGER)
    clock.now += LINGER
    assert held.left(writes) <= 0


def test_writes_never_wait_longer_than_max_hold() -> None:
    clock = Clock()
    held = HeldWrites(clock)
    held.begin("t", "", "c1")
    writes = _held(held, "c1")
    clock.now += MAX_HOLD
    assert held.left(writes) <= 0


def test_writes_for_a_thread_this_saver_never_stored_wait_linger() -> None:
    clock = Clock()
    held = HeldWrites(clock)
    writes = _held(held, "c9", thread="other")
    assert held.left(writes) == pytest.approx(LINGER)


def test_a_checkpoint_takes_only_the_writes_put_for_its_parent_in_its_namespace_from_its_kind_of_caller() -> None:
    held = HeldWrites(Clock())
    first, second = _held(held, "c1"), _held(held, "c1")
    other_parent, other_ns, other_thread = _held(held, "c0"), _held(held, "c1", ns="sub"), _held(held, "c1", thread="u")
    assert held.take("t", "", None, None) == []  # a first checkpoint has no parent
    taken = held.take("t", "", "c1", None)
    assert taken == [first, second]  # in the order they were put
    assert held.take("t", "", "c1", None) == []
    assert held.release(first) is False  # claimed: its call waits for the checkpoint's end
    first.finish(None)
    assert first.done.is_set() and first.error is None
    boom = RuntimeError("store down")
    second.finish(boom)
    assert second.error is boom
    for writes in (other_parent, other_ns, other_thread):
        assert held.release(writes) is True
    assert held.take("t", "", "c0", None) == []  # released writes are no longer waiting


def test_a_claimed_writes_waits_for_its_checkpoint_however_long_it_takes() -> None:
    clock = Clock()
    held = HeldWrites(clock)
    writes = _held(held, "c1")
    assert held.take("t", "", "c1", None) == [writes]
    clock.now += 10 * MAX_HOLD
    assert held.left(writes) > 0


def test_only_the_latest_checkpoints_are_remembered() -> None:
    clock = Clock()
    held = HeldWrites(clock)
    for n in range(RECENT + 1):
        held.begin("t", "", f"c{n:02}")
        held.end("t", "", f"c{n:02}")
    clock.now += 1
    writes = _held(held, "c00")  # forgotten: counted from its arrival
    assert held.left(writes) == pytest.approx(LINGER)
