"""The public operations on a session's message index: its messages written to the index (`write_message_index`,
what `index_messages` calls), removed from it (`drop_message_index`, what the cascade calls when a session goes),
and searched by meaning and by words (`search_messages`, `search_session_messages`). A part of `SessionStore`
(and, wrapped, of `AsyncSessionStore`): each operation checks its arguments, embeds what it must, then hands a
request to the backend. The index's layout: `store.core.message_index`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store.conversation.preview import spoken
from store.core import memories as m
from store.core import message_index as mi
from store.core import validation as v
from store.core.message_index import IndexEntry
from store.embeddings import embed
from store.errors import InvalidInput
from store.front.memories import Memories
from store.front.observed import Attributes, observed
from store.models import MessageHits, MessageRecord
from store.requests import DropMessageIndex, SearchMessages, SearchSessionMessages, WriteMessageIndex


def _search_call(arguments: Mapping[str, Any]) -> Attributes:
    """A message search's choices, never its content (no owner, session or query)."""
    mode, limit = arguments.get("mode"), arguments.get("limit")
    return {
        "agent_store.messages.mode": mode if mode in m.MODES else "invalid",
        "agent_store.messages.in_session": arguments.get("session_id") is not None,
        "agent_store.messages.limit": limit if isinstance(limit, int) and not isinstance(limit, bool) else -1,
    }


def _search_result(page: Any) -> Attributes:
    items = getattr(page, "items", None)
    return {"agent_store.messages.hits": len(items) if isinstance(items, list) else 0}


def _write_call(arguments: Mapping[str, Any]) -> Attributes:
    given = arguments.get("messages")
    return {"agent_store.messages.indexed": len(given) if isinstance(given, (list, tuple)) else -1}


def entries_of(messages: Sequence[MessageRecord]) -> list[IndexEntry]:
    """The index entries of `messages` (their words, unembedded); InvalidInput for anything but stored
    messages in order."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidInput("messages must be a list of stored messages (list_messages' items)")
    out: list[IndexEntry] = []
    for record in messages:
        if not isinstance(record, MessageRecord) or (out and record.seq <= out[-1].seq):
            raise InvalidInput("messages must be stored messages (list_messages' items), in order")
        role, words = spoken(record) if record.kind == "message" else ("system", "")
        out.append(IndexEntry(seq=record.seq, role=role, text=words[: mi.MAX_TEXT]))
    return out


class MessageIndex(Memories):
    """Write, drop and search a session's message index."""

    @observed("agent_store.messages.index", before=_write_call, after=lambda _n: {}, embeds=True)
    def write_message_index(
        self, session_id: str, messages: Sequence[MessageRecord], *, restart: bool = False, owner: str | None = None
    ) -> int:
        """Index `messages` (the session's, as `list_messages` returns them, in order; their words embedded in one
        call when the store has an embedder); with `restart`, what the index held is removed first.
        `index_messages` is how the store calls it (and records how far it went): a caller rarely needs to. The
        number of messages written."""
        entries = entries_of(messages)
        if not entries and not restart:
            raise InvalidInput("messages must hold at least one message (or restart the index)")
        embedder = self.settings.embedder
        spoken_texts = [e.text for e in entries if e.text.strip()]
        vectors = iter(embed(embedder, spoken_texts) if embedder is not None and spoken_texts else [])
        eid = m.embedder_id(embedder) if embedder is not None else ""
        indexed = tuple(
            IndexEntry(e.seq, e.role, e.text, m.Indexed(next(vectors), eid) if embedder and e.text.strip() else None)
            for e in entries
        )
        request = WriteMessageIndex(
            session_id=v.ident(session_id, "session_id"),
            owner=v.optional_owner(owner),
            entries=indexed,
            restart=v.flag(restart, "restart"),
        )
        return self._backend.execute(request)

    def drop_message_index(self, owner: str, session_id: str) -> bool:
        """Remove the message index of the owner's session `session_id` (its id as stored: the session may be
        gone), at most 1,000 messages a call: True when nothing is left. The stack's cascade calls it when a
        session is deleted or expires."""
        return self._backend.execute(
            DropMessageIndex(owner=v.owner(owner), session_id=v.ident(session_id, "session_id"))
        )

    @observed("agent_store.messages.search", before=_search_call, after=_search_result, embeds=True)
    def search_messages(
        self,
        owner: str,
        query: str,
        *,
        session_id: str | None = None,
        mode: str = "auto",
        limit: int = 10,
        cursor: str | None = None,
    ) -> MessageHits:
        """The owner's indexed messages that match `query`, best first: within the session `session_id` (which
        must be the owner's), or across all the owner's live sessions. `mode` as `search_memories`'s (`auto`:
        hybrid when the store has an embedder, else keyword); each hit names its session and sequence number.
        Bounded at any size: one or two vector searches of at most 100 candidates (and one read of the session,
        or of the sessions a page names). Messages are indexed off the write path (`index_messages`): the
        newest may not be found for a few seconds on DynamoDB."""
        who = v.owner(owner)
        if session_id is not None:
            return self.search_session_messages(session_id, query, mode=mode, limit=limit, cursor=cursor, owner=who)
        return self._backend.execute(SearchMessages(owner=who, **self._message_search(query, mode, limit, cursor, who)))

    @observed("agent_store.messages.search", before=_search_call, after=_search_result, embeds=True)
    def search_session_messages(
        self,
        session_id: str,
        query: str,
        *,
        mode: str = "auto",
        limit: int = 10,
        cursor: str | None = None,
        owner: str | None = None,
    ) -> MessageHits:
        """`search_messages` within one session (with `owner`, it must be theirs; without, any session: the
        operator's view)."""
        who = v.optional_owner(owner)
        found = self._message_search(query, mode, limit, cursor, who)
        named = v.ident(session_id, "session_id")
        return self._backend.execute(SearchSessionMessages(session_id=named, owner=who, **found))

    def _message_search(self, query: Any, mode: Any, limit: Any, cursor: Any, owner: str | None) -> dict[str, Any]:
        """A message search's checked arguments, its query embedded (for `owner`) unless it is by words only."""
        text = m.query(query)
        if text is None:
            raise InvalidInput("query must be a non-blank string")
        chosen = m.mode(mode)
        if cursor is not None and not isinstance(cursor, str):
            raise InvalidInput("cursor must be a string")
        return {
            "query": text,
            "indexed": self._query_indexed(text, owner) if chosen != "keyword" else None,
            "mode": chosen,
            "limit": v.limit(limit, maximum=m.MAX_SEARCH_LIMIT) or 10,
            "cursor": cursor,
        }
