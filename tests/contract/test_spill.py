"""Bodies too large for a DynamoDB item: stored in S3 behind a pointer, read back transparently."""

from __future__ import annotations

import base64
import os

import pytest

from store import PayloadTooLarge
from tests.conftest import Harness

MB = 1024 * 1024


def blob(n: int) -> str:
    """About `n` bytes of text that does not compress."""
    return base64.b64encode(os.urandom(n * 3 // 4)).decode()


def test_two_megabyte_message_and_state_round_trip(harness: Harness, session_id: str) -> None:
    store = harness.store
    big = blob(2 * MB)
    rec = store.append_messages(session_id, [{"role": "tool", "content": big, "tool_call_id": "t1"}])[0]
    assert rec.content == big
    small = store.append_messages(session_id, [{"role": "assistant", "content": "done"}])[0]
    assert store.get_message(session_id, rec.id).content == big
    assert [m.content for m in store.list_messages(session_id).items] == [big, "done"]
    assert [m.content for m in store.last_messages(session_id, 2)] == [big, "done"]
    assert store.save_state(session_id, {"blob": big}) == 1
    assert store.load_state(session_id).state == {"blob": big}
    full = store.load_full(session_id)
    assert [m.content for m in full.messages] == [big, "done"] and full.state.state == {"blob": big}
    assert small.seq == 2


def test_every_kind_of_body_spills(harness: Harness, session_id: str) -> None:
    store = harness.store
    big = blob(500 * 1024)
    store.save_interrupt(session_id, {"tool": big})
    assert store.load_interrupt(session_id) == {"tool": big}
    store.save_records(session_id, "runs", [big, "x"])
    assert store.load_records(session_id, "runs") == [big, "x"]
    store.save_checkpoint("session", session_id, {"c": big})
    assert store.load_checkpoint("session", session_id).data == {"c": big}
    store.save_checkpoint("run", "run-1", {"c": big})
    assert store.load_checkpoint("run", "run-1").data == {"c": big}
    snap = store.save_full(session_id, [{"role": "user", "content": big}], {"s": big})
    full = store.load_full(session_id)
    assert full.messages[-1].content == big and full.state.state == {"s": big} and snap.state == {"s": big}
    hit = store.append_messages(session_id, [{"role": "tool", "content": big + " needle-word"}])[0]
    assert any(h.seq == hit.seq for h in store.search("alice", "needle-word"))


def test_many_medium_messages_fit_one_call(harness: Harness, session_id: str) -> None:
    """Each fits an item but together they exceed a transaction's 4 MB: the largest move out."""
    store = harness.store
    many = [{"role": "tool", "content": blob(300 * 1024)} for _ in range(16)]
    if harness.request_bytes is not None:  # one HTTP request carries at most this much: refused, as a whole
        before = harness.leftovers()
        with pytest.raises(PayloadTooLarge, match="at most"):
            store.append_messages(session_id, many)
        assert harness.leftovers() == before
        records = store.append_messages(session_id, many[:8]) + store.append_messages(session_id, many[8:])
    else:
        records = store.append_messages(session_id, many)
    assert [r.seq for r in records] == list(range(1, 17))
    assert [m.content for m in store.list_messages(session_id).items] == [m["content"] for m in many]


@pytest.mark.settings(spill_item_bytes=10_000)
def test_spill_threshold_is_a_setting(harness: Harness, session_id: str) -> None:
    store = harness.store
    body = blob(20_000)
    store.append_messages(session_id, [{"role": "user", "content": body}])
    assert store.last_messages(session_id, 1)[0].content == body


def test_failed_commit_removes_its_objects(harness: Harness, session_id: str) -> None:
    """A spilled write whose condition fails (stale expected_seq) leaves no object and no intent."""
    from store import Conflict

    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "first"}])
    before = harness.snapshot()
    with pytest.raises(Conflict):
        store.append_messages(session_id, [{"role": "user", "content": blob(MB)}], expected_seq=0)
    with pytest.raises(Conflict):
        store.save_state(session_id, {"b": blob(MB)}, expected_version=7)
    assert harness.snapshot() == before
