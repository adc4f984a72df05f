"""The in-memory backend: a session's message index, kept among the owner's memories as the DynamoDB table
keeps it (`core.message_index`), so that both find the same messages and rank them alike. It indexes in-process,
before it searches, what the stack's stream function indexes on DynamoDB."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from store.backend import Backend
from store.core import memories as m
from store.core import message_index as mi
from store.errors import SessionNotFound
from store.memory.memories import InProcessMemories
from store.models import MessageHits
from store.recall.driving import drive
from store.recall.indexing import index_session
from store.requests import (
    DropMessageIndex,
    PutMemory,
    SearchMessages,
    SearchSessionMessages,
    WriteMessageIndex,
    memory_search_of,
)
from store.settings import Settings

StoreView = Callable[[Backend, Settings], Any]
_store_view: list[StoreView] = []


def index_through(view: StoreView) -> None:
    """Name how this backend builds a store over itself to run the indexing flow, which calls the store's
    public operations as the stack's stream function does: `store.session_store` names `SessionStore` as it
    is imported, before any store over this backend can search."""
    _store_view[:] = [view]


class InProcessMessageIndex(InProcessMemories):
    """Index, search and drop a session's messages; a session deleted here takes its index with it."""

    def _owner_of(self, session_id: str, owner: str | None) -> str:
        with self._lock:
            entry = self._live(session_id, owner)
            if entry is None:
                raise SessionNotFound(session_id)
            return entry.session.owner

    def _drop_index_of(self, owner: str, session_id: str) -> None:
        self.drop_message_index(DropMessageIndex(owner=owner, session_id=session_id))

    def write_message_index(self, request: WriteMessageIndex) -> int:
        with self._lock:
            who = self._owner_of(request.session_id, request.owner)
            if request.restart:
                self._drop_index_of(who, request.session_id)
            for ns, key, value, text, indexed in mi.entry_memories(request.session_id, request.entries):
                self.put_memory(PutMemory(owner=who, namespace=ns, key=key, value=value, text=text, indexed=indexed))
        return len(request.entries)

    def drop_message_index(self, request: DropMessageIndex) -> bool:
        with self._lock:
            found = self._memories.get(request.owner, {})
            low, high = m.prefix_range(mi.session_namespace(request.session_id))
            for sk in [k for k in found if low <= k[len(m.MEMORY_PREFIX) :] < high]:
                del found[sk]
        return True

    def _catch_up(self, owner: str, session_ids: list[str]) -> None:
        """Index the sessions' new messages now, in-process (what the stack's stream function does on
        DynamoDB), with the store's embedder: the same flow, on a store over this backend."""
        view = _store_view[0](cast(Backend, self), self.settings)
        for session_id in session_ids:
            drive(view, None, index_session(session_id, owner))

    def search_session_messages(self, request: SearchSessionMessages) -> MessageHits:
        who = self._owner_of(request.session_id, request.owner)
        m.search_cursor(request.cursor, who)  # a bad cursor is refused before anything is indexed
        self._catch_up(who, [request.session_id])
        return mi.message_hits(self.search_memories(memory_search_of(request, who)))

    def search_messages(self, request: SearchMessages) -> MessageHits:
        m.search_cursor(request.cursor, request.owner)  # a bad cursor is refused before anything is indexed
        with self._lock:
            mine = [sid for sid in self._sessions if self._live(sid, request.owner) is not None]
        self._catch_up(request.owner, mine)
        found = self.search_memories(memory_search_of(request, request.owner))
        with self._lock:
            live = {s for s in mi.sessions_of(found) if self._live(s, request.owner) is not None}
        return mi.message_hits(found, live)
