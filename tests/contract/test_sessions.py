"""Contract: sessions (run on every backend)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from store import SessionExists, SessionNotFound, SessionStore
from tests.conftest import Harness


def test_create_and_get_round_trip(store: SessionStore) -> None:
    s = store.create_session("alice", title="Plan a trip", model="claude", metadata={"team": "ops", "n": 3})
    got = store.get_session(s.id)
    assert got == s
    assert got.owner == "alice" and got.title == "Plan a trip" and got.model == "claude"
    assert got.metadata == {"team": "ops", "n": 3}
    assert got.last_seq == 0 and got.expires_at is None
    assert got.created_at.tzinfo is not None and got.created_at == got.updated_at
    assert type(s).model_validate_json(s.model_dump_json()) == s


def test_create_with_explicit_id_and_duplicate(harness: Harness) -> None:
    """One id space for every owner (the library's tables), or one per owner (the HTTP API, ScopedBackend):
    either way an id is taken once in its space, and its session stays its owner's."""
    store = harness.store
    store.create_session("alice", session_id="chat-1")
    with pytest.raises(SessionExists):
        store.create_session("alice", session_id="chat-1")
    if harness.ids_per_owner:
        assert store.create_session("bob", session_id="chat-1").id == "chat-1"
        assert store.get_session("chat-1", owner="bob").owner == "bob"
    else:
        with pytest.raises(SessionExists):
            store.create_session("bob", session_id="chat-1")
        assert store.get_session("chat-1", owner="bob") is None
    assert store.get_session("chat-1", owner="alice").owner == "alice"


def test_get_missing_is_none(store: SessionStore) -> None:
    assert store.get_session("nope") is None


def test_owner_scoping_makes_other_owners_sessions_absent(store: SessionStore, session_id: str) -> None:
    assert store.get_session(session_id, owner="alice") is not None
    assert store.get_session(session_id, owner="mallory") is None
    with pytest.raises(SessionNotFound):
        store.append_messages(session_id, [{"role": "user", "content": "x"}], owner="mallory")
    with pytest.raises(SessionNotFound):
        store.update_session(session_id, title="pwned", owner="mallory")
    with pytest.raises(SessionNotFound):
        store.list_messages(session_id, owner="mallory")
    store.delete_session(session_id, owner="mallory")  # absent for mallory: nothing to do
    assert store.get_session(session_id) is not None


@pytest.mark.parametrize("owner", ["auth0|5f1c2b", "user@example.com", "Ünïcode owner", "O#S#HEAD", "a" * 256])
def test_jwt_subjects_and_odd_owners_work_and_stay_isolated(store: SessionStore, owner: str) -> None:
    mine = store.create_session(owner, title="findable").id
    theirs = store.create_session("someone-else", title="findable").id
    assert [s.id for s in store.list_sessions(owner).items] == [mine]
    assert [h.session_id for h in store.search(owner, "findable")] == [mine]
    assert store.get_session(theirs, owner=owner) is None
    store.append_messages(mine, [{"role": "user", "content": "hi"}], owner=owner)
    assert store.last_messages(mine, 1, owner=owner)[0].content == "hi"


def test_update_session_fields_and_updated_at(harness: Harness, session_id: str) -> None:
    store = harness.store
    before = store.get_session(session_id)
    updated = store.update_session(session_id, title="New", metadata={"k": "v"})
    assert updated.title == "New" and updated.metadata == {"k": "v"} and updated.model is None
    assert updated.updated_at > before.updated_at
    cleared = store.update_session(session_id, title=None)
    assert cleared.title is None and cleared.metadata == {"k": "v"}
    assert store.get_session(session_id) == cleared
    with pytest.raises(SessionNotFound):
        store.update_session("missing", title="x")


def test_updated_at_moves_on_every_write(store: SessionStore, session_id: str) -> None:
    stamps = [store.get_session(session_id).updated_at]
    writes: list[Callable[[], object]] = [
        lambda: store.append_messages(session_id, [{"role": "user", "content": "hi"}]),
        lambda: store.save_state(session_id, {"a": 1}),
        lambda: store.save_interrupt(session_id, {"tool": "rm"}),
        lambda: store.clear_interrupt(session_id),
        lambda: store.save_records(session_id, "runs", [{"r": 1}]),
        lambda: store.update_session(session_id, model="m"),
    ]
    for write in writes:
        write()
        stamps.append(store.get_session(session_id).updated_at)
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


def test_list_sessions_most_recent_first_with_cursor(harness: Harness) -> None:
    store = harness.store
    ids = [store.create_session("alice", session_id=f"s{i}").id for i in range(7)]
    store.create_session("bob", session_id="other")
    store.append_messages("s2", [{"role": "user", "content": "bump"}])  # s2 becomes most recent
    expected = ["s2", "s6", "s5", "s4", "s3", "s1", "s0"]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = store.list_sessions("alice", limit=3, cursor=cursor)
        pages += 1
        seen.extend(s.id for s in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == expected and pages == 3
    assert sorted(ids) == sorted(seen)
    assert [s.id for s in store.list_sessions("bob").items] == ["other"]
    assert store.list_sessions("nobody").items == []


def test_list_sessions_exact_page_has_no_cursor(store: SessionStore) -> None:
    for i in range(3):
        store.create_session("alice", session_id=f"x{i}")
    page = store.list_sessions("alice", limit=3)
    assert len(page.items) == 3 and page.next_cursor is None


def test_list_sessions_filters(harness: Harness) -> None:
    store, clock = harness.store, harness.clock
    a = store.create_session("alice", session_id="a", metadata={"env": "prod", "tier": 1})
    clock.advance(10)
    store.create_session("alice", session_id="b", metadata={"env": "dev", "tier": 1})
    clock.advance(10)
    c = store.create_session("alice", session_id="c", metadata={"env": "prod", "tier": 2, "tags": ["x"]})
    assert [s.id for s in store.list_sessions("alice", metadata={"env": "prod"}).items] == ["c", "a"]
    assert [s.id for s in store.list_sessions("alice", metadata={"env": "prod", "tier": 1}).items] == ["a"]
    assert [s.id for s in store.list_sessions("alice", metadata={"tags": ["x"]}).items] == ["c"]
    assert [s.id for s in store.list_sessions("alice", created_after=a.created_at).items] == ["c", "b"]
    assert [s.id for s in store.list_sessions("alice", created_before=c.created_at).items] == ["b", "a"]
    window = store.list_sessions("alice", created_after=a.created_at, created_before=c.created_at)
    assert [s.id for s in window.items] == ["b"]
    # a filter that rejects most items still fills pages correctly
    pages = store.list_sessions("alice", metadata={"env": "prod"}, limit=1)
    assert [s.id for s in pages.items] == ["c"] and pages.next_cursor
    rest = store.list_sessions("alice", metadata={"env": "prod"}, limit=1, cursor=pages.next_cursor)
    assert [s.id for s in rest.items] == ["a"]


def test_delete_cascades_and_is_idempotent(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": f"m{i}"} for i in range(30)])
    store.save_state(session_id, {"s": 1})
    store.save_interrupt(session_id, {"i": 1})
    store.save_records(session_id, "runs", [1, 2])
    store.save_checkpoint("session", session_id, {"c": 1})
    store.append_messages(session_id, [{"role": "user", "content": "k"}], idempotency_key="key-1")
    store.delete_session(session_id)
    assert store.get_session(session_id) is None
    store.delete_session(session_id)  # idempotent
    with pytest.raises(SessionNotFound):
        store.list_messages(session_id)
    # re-creating the same id finds nothing old
    again = store.create_session("alice", session_id=session_id)
    assert again.last_seq == 0
    assert store.list_messages(session_id).items == []
    assert store.load_state(session_id) is None
    assert store.load_interrupt(session_id) is None
    assert store.load_records(session_id, "runs") == []
    assert store.load_checkpoint("session", session_id) is None
    fresh = store.append_messages(session_id, [{"role": "user", "content": "k"}], idempotency_key="key-1")
    assert fresh[0].seq == 1 and fresh[0].content == "k"
    store.delete_session(session_id)
    assert harness.leftovers() == [], "delete must leave no item and no object behind"


def test_retention_expiry_reads_as_absent(harness: Harness) -> None:
    store, clock = harness.store, harness.clock
    s = store.create_session("alice", session_id="short", retention=timedelta(minutes=5))
    assert s.expires_at is not None and s.expires_at > s.created_at
    clock.advance(200)
    store.append_messages("short", [{"role": "user", "content": "keep me alive"}])  # activity renews it
    clock.advance(200)
    assert store.get_session("short") is not None
    renewed = store.get_session("short").expires_at
    assert renewed is not None and renewed > s.expires_at
    clock.advance(400)
    assert store.get_session("short") is None
    assert store.list_sessions("alice").items == []
    with pytest.raises(SessionNotFound):
        store.append_messages("short", [{"role": "user", "content": "too late"}])
    with pytest.raises(SessionNotFound):
        store.load_state("short")
    # the id can be taken again, and nothing of the expired session is found
    store.create_session("alice", session_id="short", retention=60)
    assert store.list_messages("short").items == []


def test_retention_accepts_seconds(store: SessionStore) -> None:
    s = store.create_session("alice", retention=90)
    assert s.retention == timedelta(seconds=90)
