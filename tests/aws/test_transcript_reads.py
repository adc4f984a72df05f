"""A transcript read is one round trip: the session head and the first page of messages are asked for side by
side (store/aws/plans/partitions.py `head_and_range`), the page's range told from the position the store last
saw. When another store moved the transcript since (a rewind to another partition), the read is made again
after the head, and what it returns is the head's; a session the caller may not read returns nothing of it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from store import SessionNotFound
from store.aws.calls import Call, Parallel
from tests.aws.test_plan_replay import Recording, pure_store
from tests.conftest import Harness


def recorded(dyn: Harness) -> tuple[Any, Recording]:
    clients = {"dynamodb": dyn.store._backend.driver._clients["dynamodb"]}  # type: ignore[attr-defined]
    if dyn.s3 is not None:
        clients["s3"] = dyn.s3
    recording = Recording(clients)
    return pure_store(dyn, datetime(2026, 12, 7, 12, 0, tzinfo=UTC), recording), recording


def operations(recording: Recording) -> list[Any]:
    """Each round trip the reads made: a call's operation, or the operations of calls made side by side."""
    out: list[Any] = []
    for step, _ in recording.log:
        if isinstance(step, Parallel):
            out.append(tuple(c.op for c in step.calls))
        elif isinstance(step, Call):
            out.append(step.op)
    return out


@pytest.mark.parametrize("read", ["list_messages", "last_messages"])
def test_the_head_and_the_messages_are_read_in_one_round_trip(dyn: Harness, read: str) -> None:
    dyn.store.create_session("alice", session_id="s")
    dyn.store.append_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(5)])
    store, recording = recorded(dyn)
    for _ in range(2):  # a store that never saw the session, then one that did
        found = (
            store.list_messages("s", owner="alice").items
            if read == "list_messages"
            else store.last_messages("s", 3, owner="alice")
        )
        assert [m.content for m in found] == (
            ["m0", "m1", "m2", "m3", "m4"] if read == "list_messages" else ["m2", "m3", "m4"]
        )
    assert operations(recording) == [("get_item", "query")] * 2


def test_a_transcript_moved_by_another_store_is_read_again_after_the_head(dyn: Harness) -> None:
    """Another store rewinds the session (its transcript now in a partition of its own, which this store's
    position does not know) and writes after it: this store's read asks the head and its old partition side by
    side, sees the head's, and reads that: the messages it returns are the session's as they are."""
    dyn.store.create_session("alice", session_id="s")
    dyn.store.append_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(4)])
    store, recording = recorded(dyn)
    assert len(store.list_messages("s", owner="alice").items) == 4  # this store's position: the first partition
    other = dyn.store
    other.rewind_session("s", 2, branch="first")
    other.append_messages("s", [{"role": "user", "content": "after the rewind"}])
    recording.log.clear()
    assert [m.content for m in store.list_messages("s", owner="alice").items] == ["m0", "m1", "after the rewind"]
    assert operations(recording) == [("get_item", "query"), "query"]
    recording.log.clear()
    assert [m.content for m in store.last_messages("s", 1, owner="alice")] == ["after the rewind"]
    assert operations(recording) == [("get_item", "query")]  # now it knows


def test_a_session_the_caller_may_not_read_returns_nothing_of_it(dyn: Harness) -> None:
    dyn.store.create_session("alice", session_id="s")
    dyn.store.append_messages("s", [{"role": "user", "content": "alice's secret"}])
    store, _ = recorded(dyn)
    with pytest.raises(SessionNotFound):
        store.list_messages("s", owner="mallory")
    with pytest.raises(SessionNotFound):
        store.last_messages("s", 5, owner="mallory")
    with pytest.raises(SessionNotFound):
        store.list_messages("nobody-has-this", owner="alice")
