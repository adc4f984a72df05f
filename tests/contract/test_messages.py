"""Contract: the transcript (run on every backend)."""

from __future__ import annotations

from typing import Any

import pytest

from store import Conflict, Message, MessageNotFound, MessageRecord, SessionNotFound, SessionStore, TokenUsage
from tests.conftest import Harness


def texts(records: list[MessageRecord]) -> list[Any]:
    return [r.content for r in records]


def test_append_numbers_gaplessly_and_returns_records(store: SessionStore, session_id: str) -> None:
    first = store.append_messages(
        session_id, [{"role": "user", "content": "a"}, Message(role="assistant", content="b")]
    )
    second = store.append_messages(session_id, [{"role": "user", "content": "c"}])
    assert [r.seq for r in first + second] == [1, 2, 3]
    assert all(r.session_id == session_id and r.kind == "message" and r.id for r in first + second)
    assert len({r.id for r in first + second}) == 3
    assert store.get_session(session_id).last_seq == 3
    assert texts(store.list_messages(session_id).items) == ["a", "b", "c"]


def test_append_keeps_caller_ids(store: SessionStore, session_id: str) -> None:
    recs = store.append_messages(session_id, [{"role": "user", "content": "a", "id": "msg-1"}])
    assert recs[0].id == "msg-1"
    assert store.get_message(session_id, "msg-1").content == "a"


def test_append_to_missing_session(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.append_messages("ghost", [{"role": "user", "content": "a"}])


def test_expected_seq(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "a"}], expected_seq=0)
    store.append_messages(session_id, [{"role": "user", "content": "b"}], expected_seq=1)
    before = harness.snapshot()
    with pytest.raises(Conflict):
        store.append_messages(session_id, [{"role": "user", "content": "stale"}], expected_seq=1)
    with pytest.raises(Conflict):
        store.append_messages(session_id, [{"role": "user", "content": "future"}], expected_seq=5)
    assert harness.snapshot() == before
    assert texts(store.list_messages(session_id).items) == ["a", "b"]


def test_expected_seq_is_checked_even_when_another_store_moved_the_session(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "a"}])
    # another writer appends behind this store's back (for DynamoDB: a second store instance)
    other = harness.twin()
    other.append_messages(session_id, [{"role": "user", "content": "b"}])
    with pytest.raises(Conflict):
        store.append_messages(session_id, [{"role": "user", "content": "c"}], expected_seq=1)
    appended = store.append_messages(session_id, [{"role": "user", "content": "c"}])
    assert appended[0].seq == 3


def test_idempotency_key_returns_original_and_writes_nothing(harness: Harness, session_id: str) -> None:
    store = harness.store
    batch = [{"role": "user", "content": "once"}, {"role": "assistant", "content": "only once"}]
    first = store.append_messages(session_id, batch, idempotency_key="req-42")
    before = harness.snapshot()
    again = store.append_messages(session_id, batch, idempotency_key="req-42")
    assert again == first
    assert harness.snapshot() == before
    assert store.get_session(session_id).last_seq == 2
    with pytest.raises(Conflict):
        store.append_messages(session_id, [{"role": "user", "content": "different"}], idempotency_key="req-42")
    other = store.append_messages(session_id, batch, idempotency_key="req-43")
    assert [r.seq for r in other] == [3, 4]


def test_idempotency_key_expires(harness: Harness, session_id: str) -> None:
    store, clock = harness.store, harness.clock
    store.append_messages(session_id, [{"role": "user", "content": "x"}], idempotency_key="k")
    clock.advance(store.settings.idempotency_ttl.total_seconds() + 1)
    again = store.append_messages(session_id, [{"role": "user", "content": "x"}], idempotency_key="k")
    assert again[0].seq == 2


def test_list_messages_ranges_and_directions(store: SessionStore, session_id: str) -> None:
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(1, 11)])
    assert texts(store.list_messages(session_id, after_seq=7).items) == [8, 9, 10]
    assert texts(store.list_messages(session_id, before_seq=3).items) == [1, 2]
    assert texts(store.list_messages(session_id, after_seq=2, before_seq=6).items) == [3, 4, 5]
    assert texts(store.list_messages(session_id, newest_first=True, limit=3).items) == [10, 9, 8]
    assert texts(store.list_messages(session_id, after_seq=10).items) == []
    assert texts(store.list_messages(session_id, after_seq=5, before_seq=6).items) == []


@pytest.mark.parametrize("newest_first", [False, True])
def test_list_messages_cursor_walks_everything_once(store: SessionStore, session_id: str, newest_first: bool) -> None:
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(1, 24)])
    seen: list[int] = []
    cursor = None
    while True:
        page = store.list_messages(session_id, limit=5, cursor=cursor, newest_first=newest_first)
        assert len(page.items) <= 5
        seen.extend(r.seq for r in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    expected = list(range(1, 24))
    assert seen == (expected[::-1] if newest_first else expected)


def test_cursor_from_other_listing_is_rejected(store: SessionStore, session_id: str) -> None:
    from store import InvalidInput

    other = store.create_session("alice").id
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(3)])
    cursor = store.list_messages(session_id, limit=1).next_cursor
    assert cursor
    with pytest.raises(InvalidInput):
        store.list_messages(other, cursor=cursor)
    with pytest.raises(InvalidInput):
        store.list_messages(session_id, cursor=cursor, newest_first=True)
    with pytest.raises(InvalidInput):
        store.list_messages(session_id, cursor="not-a-cursor!")


def test_roles_filter(store: SessionStore, session_id: str) -> None:
    roles = ["user", "assistant", "tool", "assistant", "user", "tool", "assistant"]
    store.append_messages(session_id, [{"role": r, "content": f"{r}{i}"} for i, r in enumerate(roles)])
    got = store.list_messages(session_id, roles=["assistant"])
    assert texts(got.items) == ["assistant1", "assistant3", "assistant6"]
    page = store.list_messages(session_id, roles=["user", "tool"], limit=2)
    assert texts(page.items) == ["user0", "tool2"] and page.next_cursor
    rest = store.list_messages(session_id, roles=["user", "tool"], limit=2, cursor=page.next_cursor)
    assert texts(rest.items) == ["user4", "tool5"]


def test_last_messages(store: SessionStore, session_id: str) -> None:
    assert store.last_messages(session_id, 3) == []
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(1, 8)])
    assert texts(store.last_messages(session_id, 3)) == [5, 6, 7]
    assert texts(store.last_messages(session_id, 50)) == list(range(1, 8))


def test_get_message(store: SessionStore, session_id: str) -> None:
    recs = store.append_messages(session_id, [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    assert store.get_message(session_id, recs[1].id) == recs[1]
    assert store.get_message(session_id, "missing") is None
    with pytest.raises(SessionNotFound):
        store.get_message("ghost", recs[1].id)


def test_usage_on_append_and_update_keeps_totals(store: SessionStore, session_id: str) -> None:
    recs = store.append_messages(
        session_id,
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a", "usage": {"input_tokens": 10, "output_tokens": 5, "cost": 0.25}},
        ],
    )
    assert recs[1].usage == TokenUsage(input_tokens=10, output_tokens=5, cost=0.25)
    assert store.get_session(session_id).usage == TokenUsage(input_tokens=10, output_tokens=5, cost=0.25)
    updated = store.update_usage(session_id, recs[0].id, TokenUsage(input_tokens=3, cache_read_tokens=7))
    assert updated.usage == TokenUsage(input_tokens=3, cache_read_tokens=7)
    assert store.get_message(session_id, recs[0].id).usage == updated.usage
    store.update_usage(session_id, recs[1].id, {"input_tokens": 12, "output_tokens": 5, "cost": 0.5})
    total = store.get_session(session_id).usage
    assert total == TokenUsage(input_tokens=15, output_tokens=5, cache_read_tokens=7, cost=0.5)
    messages = store.list_messages(session_id).items
    summed = TokenUsage()
    for m in messages:
        summed = summed.plus(m.usage)
    assert summed == total
    with pytest.raises(MessageNotFound):
        store.update_usage(session_id, "missing", {"input_tokens": 1})


def test_compaction(store: SessionStore, session_id: str) -> None:
    assert store.get_latest_compaction(session_id) is None
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(1, 6)])
    summary = store.append_messages(session_id, [{"role": "assistant", "content": "summary of 1-5"}])[0]
    store.append_messages(session_id, [{"role": "user", "content": 7}])
    marked = store.mark_compaction(session_id, summary.id)
    assert marked.kind == "compaction" and marked.seq == 6
    assert store.get_latest_compaction(session_id) == marked
    live = store.list_messages(session_id, since_compaction=True).items
    assert [m.seq for m in live] == [6, 7] and live[0].kind == "compaction"
    assert len(store.list_messages(session_id).items) == 7
    full = store.load_full(session_id, since_compaction=True)
    assert [m.seq for m in full.messages] == [6, 7]
    # marking an older message keeps the latest compaction as the start of the live context
    older = store.list_messages(session_id).items[1]
    store.mark_compaction(session_id, older.id)
    assert store.get_latest_compaction(session_id).seq == 6
    with pytest.raises(MessageNotFound):
        store.mark_compaction(session_id, "missing")


def test_since_compaction_without_compaction_is_everything(store: SessionStore, session_id: str) -> None:
    store.append_messages(session_id, [{"role": "user", "content": i} for i in range(3)])
    assert len(store.list_messages(session_id, since_compaction=True).items) == 3


def test_idempotent_retry_with_expected_seq_replays(harness: Harness, session_id: str) -> None:
    """A retried call is the same call: its expected_seq is stale by then, yet it returns the original."""
    store = harness.store
    batch = [{"role": "user", "content": "exactly once"}]
    first = store.append_messages(session_id, batch, expected_seq=0, idempotency_key="turn-1")
    before = harness.snapshot()
    assert harness.twin().append_messages(session_id, batch, expected_seq=0, idempotency_key="turn-1") == first
    assert store.append_messages(session_id, batch, expected_seq=0, idempotency_key="turn-1") == first
    assert harness.snapshot() == before
    with pytest.raises(Conflict):  # a new request with a stale expected_seq still conflicts
        store.append_messages(session_id, batch, expected_seq=0, idempotency_key="turn-2")


def test_token_totals_add_up_when_a_call_reports_only_its_parts(harness: Harness) -> None:
    """A call that reports input and output but no total counts its sum as its total, so a session's totals
    add up (a session of 550/60 and 300/15/315 once read "in 850 · out 75 · total 315")."""
    store = harness.store
    sid = store.create_session("alice").id
    parts = {"input_tokens": 550, "output_tokens": 60}
    (first,) = store.append_messages(sid, [{"role": "assistant", "content": "a", "usage": parts}])
    assert first.usage is not None and first.usage.total_tokens == 610
    reported = {"input_tokens": 300, "output_tokens": 15, "total_tokens": 315}
    store.append_messages(sid, [{"role": "assistant", "content": "b", "usage": reported}])
    totals = store.get_session(sid).usage
    assert (totals.input_tokens, totals.output_tokens, totals.total_tokens) == (850, 75, 925)
    store.update_usage(sid, first.id, {"input_tokens": 50, "output_tokens": 10})
    totals = store.get_session(sid).usage
    assert (totals.input_tokens, totals.output_tokens, totals.total_tokens) == (350, 25, 375)
    assert store.get_message(sid, first.id).usage.total_tokens == 60
