"""A session's messages found by meaning and by words (DESIGN.md, "Context for a turn, and reach"), the same
assertions on every backend that offers the message index: indexed off the write path (the stream's function
on DynamoDB, `index` here; in-process on the memory backend), searched within a session and across an owner's
sessions, each hit naming its session and sequence number; the store's own namespaces out of every memory
listing; another owner's messages absent; a transcript changed under the index indexed again; deleting a
session and forgetting an owner take the index with them; the owner's switch; bad input refused."""

from __future__ import annotations

import pytest

from store import InvalidInput, SessionNotFound, SessionStore
from store.backends.scoped import ScopedBackend
from store.embeddings import WordLlamaEmbedder
from store.models import MessageIndexState
from tests.conftest import Harness

pytestmark = pytest.mark.needs("search_messages", "put_memory")
WORDLLAMA = WordLlamaEmbedder()

TRIP = [
    {"role": "user", "content": "We are planning a trip to Lisbon in May, flying from Berlin."},
    {"role": "assistant", "content": "Lisbon in May is warm. Do you want a hotel in Alfama?"},
    {"role": "user", "content": "Yes, and my daughter is allergic to peanuts, remember that for restaurants."},
    {"role": "assistant", "content": "Noted: no peanuts. I will look for restaurants near the castle."},
]
WORK = [
    {"role": "user", "content": "Draft the quarterly budget report for the finance team."},
    {"role": "assistant", "content": "Here is a first draft of the quarterly budget report."},
]


def index(harness: Harness, owner: str, session_id: str) -> MessageIndexState:
    """What the stack's stream function does after a session's writes: index its new messages (in-process
    stores index before they search; calling it there changes nothing)."""
    operator = harness.operator()
    view = (
        SessionStore(backend=ScopedBackend(operator.backend, owner), settings=operator.settings)
        if harness.ids_per_owner and operator is not harness.store
        else harness.store
    )
    return view.index_messages(session_id, owner=owner)


def conversation(harness: Harness, owner: str, session_id: str, messages: list[dict[str, str]]) -> None:
    harness.store.create_session(owner, session_id=session_id)
    harness.store.append_messages(session_id, messages, owner=owner)
    index(harness, owner, session_id)


def test_messages_are_found_by_their_words_within_a_session_and_across_the_owners(harness: Harness) -> None:
    store = harness.store
    conversation(harness, "alice", "trip", TRIP)
    conversation(harness, "alice", "work", WORK)
    conversation(harness, "bob", "bobs", [{"role": "user", "content": "peanuts and the quarterly budget"}])
    found = store.search_messages("alice", "peanuts", mode="keyword")
    assert [(h.session_id, h.seq, h.role) for h in found.items][:2] == [("trip", 3, "user"), ("trip", 4, "assistant")]
    assert found.mode == "keyword" and "allergic to peanuts" in found.items[0].text
    everywhere = store.search_messages("alice", "quarterly budget", mode="keyword")
    assert {h.session_id for h in everywhere.items} == {"work"}  # bob's never, the trip has no such words
    within = store.search_messages("alice", "budget", session_id="trip", mode="keyword")
    assert within.items == []
    assert [h.seq for h in store.search_messages("alice", "Alfama", session_id="trip").items] == [2]
    with pytest.raises(SessionNotFound):
        store.search_messages("alice", "peanuts", session_id="bobs")


@pytest.mark.settings(embedder=WORDLLAMA)
def test_messages_are_found_by_meaning_and_hybrid_has_both(harness: Harness) -> None:
    store = harness.store
    conversation(harness, "alice", "trip", TRIP)
    conversation(harness, "alice", "work", WORK)
    by_meaning = store.search_messages("alice", "food intolerance of my child", mode="semantic", limit=3)
    assert by_meaning.mode == "semantic"
    assert (by_meaning.items[0].session_id, by_meaning.items[0].seq) == ("trip", 3)
    hybrid = store.search_messages("alice", "which hotel district", limit=2)
    assert hybrid.mode == "hybrid" and hybrid.items[0].seq == 2 and hybrid.items[0].session_id == "trip"
    assert all(h.score is not None for h in hybrid.items)


def test_the_index_is_none_of_the_owners_memories(harness: Harness) -> None:
    store = harness.store
    conversation(harness, "alice", "trip", TRIP)
    store.put_memory("alice", ("preferences",), "seat", {"text": "window seat, and Lisbon is lovely"})
    assert store.search_messages("alice", "Lisbon", mode="keyword").items  # indexed
    listed = store.search_memories("alice", ())
    assert [(h.namespace, h.key) for h in listed.items] == [(("preferences",), "seat")]
    searched = store.search_memories("alice", (), query="Lisbon", mode="keyword")
    assert [h.key for h in searched.items] == ["seat"]
    assert store.list_namespaces("alice").items == [("preferences",)]
    with pytest.raises(InvalidInput):
        store.put_memory("alice", ("\x1fmessages", "trip"), "1", {"text": "forged"})


def test_indexing_is_incremental_idempotent_and_follows_a_changed_transcript(harness: Harness) -> None:
    store = harness.store
    conversation(harness, "alice", "trip", TRIP[:2])
    state = store.get_message_index_state("trip", owner="alice")
    assert (state.last_seq, state.owner) == (2, "alice")
    store.append_messages("trip", TRIP[2:], owner="alice")
    index(harness, "alice", "trip")
    index(harness, "alice", "trip")  # a trigger fired twice finds nothing new
    assert store.get_message_index_state("trip", owner="alice").indexed_seq == 4
    assert [h.seq for h in store.search_messages("alice", "peanuts", mode="keyword").items] == [3, 4]
    if "pop_message" in store.backend.supports:
        store.pop_message("trip", owner="alice")
        store.append_messages("trip", [{"role": "assistant", "content": "Noted: no walnuts either."}], owner="alice")
        index(harness, "alice", "trip")
        assert [h.text for h in store.search_messages("alice", "Noted", mode="keyword").items] == [
            "Noted: no walnuts either."
        ]


def test_deleting_a_session_or_forgetting_the_owner_takes_the_index(harness: Harness) -> None:
    store = harness.store
    conversation(harness, "alice", "trip", TRIP)
    conversation(harness, "alice", "work", WORK)
    store.delete_session("trip", owner="alice")
    assert store.search_messages("alice", "peanuts Lisbon", mode="keyword").items == []
    assert [h.session_id for h in store.search_messages("alice", "budget", mode="keyword").items] == ["work", "work"]
    assert store.forget_owner("alice") is True
    assert store.search_messages("alice", "budget", mode="keyword").items == []


def test_an_owner_who_switched_the_index_off_is_not_indexed(harness: Harness) -> None:
    store = harness.store
    store.set_message_index("alice", enabled=False)
    assert store.message_index_enabled("alice") is False and store.message_index_enabled("bob") is True
    conversation(harness, "alice", "trip", TRIP)
    assert store.search_messages("alice", "peanuts", mode="keyword").items == []
    assert index(harness, "alice", "trip").enabled is False
    store.set_message_index("alice", enabled=True)
    index(harness, "alice", "trip")
    assert store.search_messages("alice", "peanuts", mode="keyword").items


def test_bad_searches_are_refused_and_write_nothing(harness: Harness) -> None:
    store = harness.store
    conversation(harness, "alice", "trip", TRIP)
    before = harness.leftovers()
    for bad in ("", "   ", "x" * 50_000, None, 7):
        with pytest.raises(InvalidInput):
            store.search_messages("alice", bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.search_messages("alice", "peanuts", mode="fuzzy")
    with pytest.raises(InvalidInput):
        store.search_messages("alice", "peanuts", limit=0)
    with pytest.raises(InvalidInput):
        store.search_messages("", "peanuts")
    with pytest.raises(SessionNotFound):
        store.index_messages("nobody-has-this", owner="alice")
    assert harness.leftovers() == before
