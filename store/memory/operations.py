"""The in-memory backend: search and the health check."""

from __future__ import annotations

from store.memory.core import MemoryCore
from store.models import SessionHit
from store.search import Ranked, rank, session_hits


class MemoryOperations(MemoryCore):
    """Search and the health check, in memory."""

    def search(self, owner: str, query: str, limit: int) -> list[SessionHit]:
        needle = query.casefold()
        hits: list[Ranked] = []
        with self._lock:
            for sid in list(self._sessions):
                entry = self._live(sid, owner)
                if entry is not None:
                    hits.extend(session_hits(entry.session, entry.messages, needle))
        return rank(hits, limit)

    def health_check(self) -> None:
        return None
