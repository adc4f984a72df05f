"""Contract: pop_message removes the latest message atomically (run on every backend)."""

from __future__ import annotations

import secrets

import pytest

from store import Conflict, InvalidInput, SessionNotFound, SessionStore, TokenUsage
from tests.conftest import Harness

pytestmark = pytest.mark.needs("pop_message")


def contents(store: SessionStore, session_id: str) -> list[object]:
    return [m.content for m in store.list_messages(session_id).items]


def test_pop_returns_the_latest_and_moves_the_head_back(harness: Harness, session_id: str) -> None:
    store = harness.store
    appended = store.append_messages(
        session_id,
        [
            {"role": "user", "content": "a", "usage": {"input_tokens": 3}},
            {"role": "assistant", "content": {"text": "b"}, "usage": {"input_tokens": 5, "output_tokens": 7}},
        ],
    )
    popped = store.pop_message(session_id)
    assert popped == appended[1]
    assert contents(store, session_id) == ["a"]
    head = store.get_session(session_id)
    assert head.last_seq == 1
    assert head.usage == TokenUsage(input_tokens=3, output_tokens=0)
    # the freed sequence number is taken by the next append; nothing is left of the popped message
    again = store.append_messages(session_id, [{"role": "user", "content": "c"}])
    assert again[0].seq == 2 and again[0].id != popped.id
    assert store.get_message(session_id, popped.id) is None
    assert contents(store, session_id) == ["a", "c"]


def test_pop_until_empty_then_none(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(3)])
    assert [store.pop_message(session_id).content for _ in range(3)] == [2, 1, 0]
    before = harness.snapshot()
    assert store.pop_message(session_id) is None
    assert harness.snapshot() == before
    assert store.get_session(session_id).last_seq == 0


def test_pop_expected_seq(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    before = harness.snapshot()
    with pytest.raises(Conflict):
        store.pop_message(session_id, expected_seq=1)
    assert harness.snapshot() == before
    assert store.pop_message(session_id, expected_seq=2).content == "b"


def test_pop_sees_another_writers_append(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "a"}])
    harness.twin().append_messages(session_id, [{"role": "user", "content": "from elsewhere"}])
    assert store.pop_message(session_id).content == "from elsewhere"
    assert store.pop_message(session_id).content == "a"


def test_pop_refuses_a_message_the_state_has_seen(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "a"}])
    store.save_state(session_id, {"seen": 1})
    before = harness.snapshot()
    with pytest.raises(Conflict):
        store.pop_message(session_id)
    assert harness.snapshot() == before
    store.append_messages(session_id, [{"role": "user", "content": "b"}])
    assert store.pop_message(session_id).content == "b"  # not seen by the state


def test_pop_of_the_compaction_marker_restores_the_previous_one(harness: Harness, session_id: str) -> None:
    store = harness.store
    first = store.append_messages(session_id, [{"role": "assistant", "content": "summary 1"}])[0]
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(3)])
    second = store.append_messages(session_id, [{"role": "assistant", "content": "summary 2"}])[0]
    store.mark_compaction(session_id, first.id)
    store.mark_compaction(session_id, second.id)
    assert store.get_latest_compaction(session_id).seq == 5
    assert store.pop_message(session_id).content == "summary 2"
    assert store.get_latest_compaction(session_id).id == first.id
    assert [m.seq for m in store.list_messages(session_id, since_compaction=True).items] == [1, 2, 3, 4]
    for _ in range(4):
        store.pop_message(session_id)
    assert store.get_latest_compaction(session_id) is None


def test_replaying_an_append_whose_messages_were_popped_is_a_conflict(harness: Harness, session_id: str) -> None:
    store = harness.store
    batch = [{"role": "user", "content": "once"}]
    store.append_messages(session_id, batch, idempotency_key="req-1")
    store.pop_message(session_id)
    store.append_messages(session_id, [{"role": "user", "content": "someone else's"}])
    with pytest.raises(Conflict):
        store.append_messages(session_id, batch, idempotency_key="req-1")
    assert contents(store, session_id) == ["someone else's"]


def test_pop_of_a_spilled_message_returns_its_body(harness: Harness, session_id: str) -> None:
    store = harness.store
    big = secrets.token_urlsafe(450_000)  # incompressible: stored in S3 on the DynamoDB backend
    store.append_messages(session_id, [{"role": "tool", "content": big}])
    assert store.pop_message(session_id).content == big
    assert store.list_messages(session_id).items == []


def test_pop_checks_session_owner_and_input(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "a"}])
    with pytest.raises(SessionNotFound):
        store.pop_message("ghost")
    with pytest.raises(SessionNotFound):
        store.pop_message(session_id, owner="someone-else")
    with pytest.raises(InvalidInput):
        store.pop_message("../bad id")
    with pytest.raises(InvalidInput):
        store.pop_message(session_id, expected_seq=-1)
    assert contents(store, session_id) == ["a"]
