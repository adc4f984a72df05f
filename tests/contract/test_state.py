"""Contract: state, save_full/load_full, interrupts and records (run on every backend)."""

from __future__ import annotations

from typing import Any

import pytest

from store import Conflict, InvalidInput, SessionNotFound, SessionStore
from tests.conftest import Harness


def test_state_versions(store: SessionStore, session_id: str) -> None:
    assert store.load_state(session_id) is None
    assert store.save_state(session_id, {"step": 1}) == 1
    store.append_messages(session_id, [{"role": "user", "content": "x"}])
    assert store.save_state(session_id, {"step": 2, "nested": {"l": [1, 2.5, None, True, "ü"]}}) == 2
    snap = store.load_state(session_id)
    assert snap.version == 2 and snap.seq == 1 and snap.state == {"step": 2, "nested": {"l": [1, 2.5, None, True, "ü"]}}
    assert store.get_session(session_id).state_version == 2
    assert type(snap).model_validate_json(snap.model_dump_json()) == snap


def test_state_accepts_any_json(store: SessionStore, session_id: str) -> None:
    values: list[Any] = [[1, 2], "text", 3.5, None, {"": {}}]
    for value in values:
        store.save_state(session_id, value)
        assert store.load_state(session_id).state == value


def test_expected_version(harness: Harness, session_id: str) -> None:
    store = harness.store
    assert store.save_state(session_id, {"v": 1}, expected_version=0) == 1
    assert store.save_state(session_id, {"v": 2}, expected_version=1) == 2
    before = harness.snapshot()
    with pytest.raises(Conflict):
        store.save_state(session_id, {"v": "stale"}, expected_version=1)
    assert harness.snapshot() == before
    assert store.load_state(session_id).state == {"v": 2}


def test_expected_version_against_another_writer(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.save_state(session_id, {"v": 1})
    harness.twin().save_state(session_id, {"v": "other"})
    with pytest.raises(Conflict):
        store.save_state(session_id, {"v": 2}, expected_version=1)
    assert store.save_state(session_id, {"v": 3}) == 3


def test_state_seq_tracks_messages_written_by_others(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "a"}])
    harness.twin().append_messages(session_id, [{"role": "user", "content": "b"}])
    store.save_state(session_id, {"x": 1})
    assert store.load_state(session_id).seq == 2


def test_save_full_and_load_full(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.append_messages(session_id, [{"role": "user", "content": "hello"}])
    snap = store.save_full(
        session_id,
        [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "go"}],
        {"phase": "running"},
        expected_seq=1,
    )
    assert snap.version == 1 and snap.seq == 3 and snap.state == {"phase": "running"}
    full = store.load_full(session_id)
    assert full.session.last_seq == 3 and [m.content for m in full.messages] == ["hello", "hi", "go"]
    assert full.state == snap
    before = harness.snapshot()
    with pytest.raises(Conflict):
        store.save_full(session_id, [{"role": "user", "content": "stale"}], {"phase": "bad"}, expected_seq=1)
    assert harness.snapshot() == before, "a failed save_full leaves nothing behind"
    assert type(full).model_validate_json(full.model_dump_json()) == full


def test_load_full_is_one_instant(store: SessionStore, session_id: str) -> None:
    store.save_full(session_id, [{"role": "user", "content": "a"}], {"n": 1})
    full = store.load_full(session_id)
    assert full.state is not None and full.state.seq == full.session.last_seq == len(full.messages)
    assert full.session.state_version == full.state.version


def test_load_full_of_missing_session(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.load_full("ghost")
    with pytest.raises(SessionNotFound):
        store.save_full("ghost", [{"role": "user", "content": "a"}], {})


def test_interrupts(store: SessionStore, session_id: str) -> None:
    assert store.load_interrupt(session_id) is None
    store.save_interrupt(session_id, {"tool": "delete_db", "args": {"force": True}})
    assert store.load_interrupt(session_id) == {"tool": "delete_db", "args": {"force": True}}
    store.save_interrupt(session_id, {"tool": "other"})
    assert store.load_interrupt(session_id) == {"tool": "other"}
    store.clear_interrupt(session_id)
    store.clear_interrupt(session_id)
    assert store.load_interrupt(session_id) is None
    with pytest.raises(SessionNotFound):
        store.save_interrupt("ghost", {"a": 1})
    with pytest.raises(SessionNotFound):
        store.clear_interrupt("ghost")


def test_records_by_kind(store: SessionStore, session_id: str) -> None:
    assert store.load_records(session_id, "runs") == []
    store.save_records(session_id, "runs", [{"run": 1}, {"run": 2}])
    store.save_records(session_id, "verification", [{"ok": True}])
    assert store.load_records(session_id, "runs") == [{"run": 1}, {"run": 2}]
    store.save_records(session_id, "runs", [{"run": 3}])
    assert store.load_records(session_id, "runs") == [{"run": 3}]
    assert store.load_records(session_id, "verification") == [{"ok": True}]
    with pytest.raises(SessionNotFound):
        store.load_records("ghost", "runs")


def test_stored_values_are_copies(store: SessionStore, session_id: str) -> None:
    state = {"list": [1]}
    store.save_state(session_id, state)
    state["list"].append(2)
    loaded = store.load_state(session_id)
    assert loaded.state == {"list": [1]}
    loaded.state["list"].append(3)
    assert store.load_state(session_id).state == {"list": [1]}


def test_load_full_reads_other_sessions_states_in_the_same_request(store: SessionStore) -> None:
    """`with_states`: the states of up to 4 other sessions of the caller, and those sessions, read with the
    session's own (a state None for one without a state, both None for one absent or another owner's); bad
    names are InvalidInput, before any read."""
    main = store.create_session("alice").id
    plans = store.create_session("alice").id
    store.save_state(plans, {"trip": "Lisbon"}, owner="alice")
    empty = store.create_session("alice").id
    bobs = store.create_session("bob").id
    store.save_state(bobs, {"secret": 1}, owner="bob")
    store.save_state(main, {"turn": 3}, owner="alice")
    full = store.load_full(main, with_states=[plans, empty, bobs, "ghost"], owner="alice")
    assert full.state is not None and full.state.state == {"turn": 3}
    assert set(full.states) == {plans, empty, bobs, "ghost"}
    found = full.states[plans]
    assert found is not None and found.state == {"trip": "Lisbon"} and found.version == 1
    assert full.states[empty] is None and full.states[bobs] is None and full.states["ghost"] is None
    assert store.load_full(main, owner="alice").states == {}
    # the sessions themselves, as get_session gives them (their last sequence number, say), in the same instant
    store.append_messages(
        plans, [{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}], owner="alice"
    )
    full = store.load_full(main, with_states=[plans, empty, bobs, "ghost"], owner="alice")
    assert set(full.sessions) == {plans, empty, bobs, "ghost"}
    assert full.sessions[plans] == store.get_session(plans, owner="alice")
    assert full.sessions[plans] is not None and full.sessions[plans].last_seq == 2
    assert full.sessions[empty] is not None and full.sessions[empty].id == empty
    assert full.sessions[bobs] is None and full.sessions["ghost"] is None
    assert type(full).model_validate_json(full.model_dump_json()) == full
    bads: list[Any] = [[plans, empty, bobs, "ghost", "fifth"], [plans, plans], "plans", [1], {plans: 7}]
    for bad in bads:
        with pytest.raises(InvalidInput):
            store.load_full(main, with_states=bad, owner="alice")
