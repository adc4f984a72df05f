"""Contract: a delete inside a request's time budget returns in time whatever the session's size: the
session is gone from view at once, and what the budget did not cover is finished by the cascade (the
sessions table's stream); outside a budget the call finishes the job itself (run on every backend)."""

from __future__ import annotations

from store import SessionStore, deadline
from tests.conftest import Harness


def big(store: SessionStore, owner: str, messages: int, *, item_each: bool = False) -> str:
    """A session of `messages` messages, a state and an artifact; with `item_each`, messages with ids of their
    own (on DynamoDB, an item each: small messages without ids share items)."""
    sid = store.create_session(owner, title="big").id
    for start in range(0, messages, 90):
        count = min(90, messages - start)
        batch = [{"role": "user", "content": f"m{start + i}"} for i in range(count)]
        store.append_messages(sid, [{**m, "id": f"m{start + i}"} if item_each else m for i, m in enumerate(batch)])
    store.save_state(sid, {"step": 1})
    store.put_artifact(sid, "a.txt", b"a")
    return sid


def test_a_delete_out_of_time_is_invisible_at_once_and_finished_by_the_cascade(harness: Harness) -> None:
    store = harness.store
    keep = store.create_session("ann", title="keep").id
    sid = big(store, "ann", 300)
    with deadline(0):  # the request's time is already spent
        store.delete_session(sid)
    assert store.get_session(sid) is None
    assert [s.id for s in store.list_sessions("ann").items] == [keep]
    assert [h.session_id for h in store.search("ann", "big")] == []
    harness.cascade()
    store.delete_session(keep)
    harness.cascade()
    assert harness.leftovers() == []
    store.create_session("ann", session_id=sid)  # the id is free again, and holds nothing old
    assert store.list_messages(sid).items == [] and store.load_state(sid) is None


def test_a_delete_with_time_finishes_before_it_returns(harness: Harness) -> None:
    sid = big(harness.store, "bo", 200)
    with deadline(60):
        harness.store.delete_session(sid)
    assert harness.leftovers() == []  # nothing was left for the cascade
