"""The in-memory backend: search, the health check, and reclaim (no stream: nothing to reclaim)."""

from __future__ import annotations

from store.core.paging import SessionQuery
from store.core.search import Ranked, SessionToRead, allot, results, search_start, session_hits, sessions_cursor
from store.memory.sessions import MemorySessions
from store.models import SearchHits
from store.requests import HealthCheck, ListSessions, Reclaim, Search


class MemoryOperations(MemorySessions):
    """Search (over the sessions listing), the health check and reclaim, in memory."""

    def search(self, request: Search) -> SearchHits:
        owner, needle, settings = request.owner, request.query.casefold(), self.settings
        start = search_start(request.cursor, owner)
        with self._lock:
            candidates: list[SessionToRead] = []
            partial = self._live(start.partial, owner) if start.partial is not None else None
            if partial is not None and start.below > 1:
                candidates.append(SessionToRead(partial.session, start.below - 1, False, start.listing))
            wanted = SessionQuery(limit=max(1, settings.search_sessions - len(candidates)), cursor=start.listing)
            page = self.list_sessions(ListSessions(owner=owner, query=wanted))
            candidates += [SessionToRead(s, s.last_seq, True, sessions_cursor(owner, s)) for s in page.items]
            readings, next_cursor = allot(owner, candidates, page.next_cursor, settings.search_messages)
            hits: list[Ranked] = []
            for r in readings:
                entry = self._live(r.session.id, owner)
                if entry is not None:
                    window = reversed(entry.messages[r.lo - 1 : r.hi])  # newest first, as the DynamoDB plan reads
                    hits.extend(session_hits(entry.session, window, needle, title=r.title))
        return results(hits, request.limit, readings, next_cursor)

    def health_check(self, request: HealthCheck) -> None:
        return None

    def reclaim(self, request: Reclaim) -> int:
        """What the stack's functions do, in memory: nothing is released (deletes and replacements free
        memory at once), and every copy going on takes one step (a long fork's or rewind's transcript comes
        in a step at a time, as the stack's copy job brings it), when the request's jobs include "copy"."""
        if "copy" in request.jobs:
            self.step_copies()
        return 0
