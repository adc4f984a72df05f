"""The in-memory backend: search, the health check, and reclaim (no stream: nothing to reclaim)."""

from __future__ import annotations

from store.memory.core import MemoryCore
from store.models import SessionHit
from store.requests import HealthCheck, Reclaim, Search
from store.search import Ranked, rank, session_hits


class MemoryOperations(MemoryCore):
    """Search and the health check, in memory."""

    def search(self, request: Search) -> list[SessionHit]:
        owner, query, limit = request.owner, request.query, request.limit
        needle = query.casefold()
        hits: list[Ranked] = []
        with self._lock:
            for sid in list(self._sessions):
                entry = self._live(sid, owner)
                if entry is not None:
                    hits.extend(session_hits(entry.session, entry.messages, needle))
        return rank(hits, limit)

    def health_check(self, request: HealthCheck) -> None:
        return None

    def reclaim(self, request: Reclaim) -> int:
        """Nothing is released without a stream: deletes and replacements free memory at once."""
        return 0
