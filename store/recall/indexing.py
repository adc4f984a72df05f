"""Indexing a session's messages: a flow of the store's operations, run by the stream's function on DynamoDB
(and in-process by the memory backend before it searches), never on a turn's write path.

A run reads where the index stands (`get_message_index_state`), then the messages after it a page at a time,
and hands each page to `write_message_index` (which embeds their words in one call and puts them). It is
idempotent (an entry is keyed by its sequence number; a run fired twice finds nothing new) and bounded
(MAX_RUN messages; the next trigger goes on). A transcript changed under the index (a popped message, a
rewind: the message the index last took is no longer there as it was) is indexed again from its start. An
owner who switched the index off (`set_message_index`) is not indexed."""

from __future__ import annotations

from typing import Any

from store.calls import CALLS
from store.core import message_index as mi
from store.core.steps import ask
from store.errors import SessionNotFound
from store.extraction.steps import Flow
from store.models import MessageIndexState

PAGE = 100  # messages one write indexes (one embedding call, four BatchWriteItems)
MAX_RUN = 2000  # messages one run indexes
CHOICE_KIND = "message-index-choice"  # the owner records that hold the owner's on/off choice


def enabled_in(records: list[Any]) -> bool:
    """The owner's choice the records keep (on when there is none)."""
    first = records[0] if records else None
    return not (isinstance(first, dict) and first.get("enabled") is False)


def enabled_choice(owner: str) -> Flow[bool]:
    """Whether the owner has the message index on."""
    records = yield from ask(CALLS.load_owner_records, owner, CHOICE_KIND)
    return enabled_in(records)


def index_state(session_id: str, owner: str | None = None) -> Flow[MessageIndexState]:
    """Where the session's index stands (SessionNotFound when the session is not live, or not `owner`'s)."""
    session = yield from ask(CALLS.get_session, session_id, owner=owner)
    if session is None:
        raise SessionNotFound(session_id)
    records = yield from ask(CALLS.load_records, session_id, mi.RECORDS_KIND, owner=owner)
    through, mid = mi.indexed_through(records)
    return MessageIndexState(
        session_id=session_id, owner=session.owner, last_seq=session.last_seq, indexed_seq=through, indexed_id=mid
    )


def index_session(session_id: str, owner: str | None = None) -> Flow[MessageIndexState]:
    """Index the session's messages the index does not hold yet (at most MAX_RUN): where it then stands."""
    state = yield from index_state(session_id, owner)
    if not (yield from enabled_choice(state.owner)):
        return state.model_copy(update={"enabled": False})
    after, restart = state.indexed_seq, False
    if after > 0:  # the message the index took last must still be there, as it was
        anchor = yield from ask(CALLS.list_messages, session_id, after_seq=after - 1, limit=1, owner=owner)
        kept = anchor.items[0] if anchor.items else None
        if kept is None or kept.seq != after or kept.id != state.indexed_id:
            after, restart = 0, True
    done, last_id = 0, state.indexed_id
    while done < MAX_RUN and (after < state.last_seq or restart):
        page = yield from ask(CALLS.list_messages, session_id, after_seq=after, limit=PAGE, owner=owner)
        if page.items or restart:
            yield from ask(CALLS.write_message_index, session_id, page.items, restart=restart, owner=owner)
        restart = False
        if not page.items:
            after, last_id = (after, last_id) if done else (0, "")
            break
        after, last_id, done = page.items[-1].seq, page.items[-1].id, done + len(page.items)
        yield from ask(
            CALLS.save_records, session_id, mi.RECORDS_KIND, mi.progress_records(after, last_id), owner=owner
        )
    return state.model_copy(update={"indexed_seq": after, "indexed_id": last_id})
