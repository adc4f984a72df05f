"""The public operations on search across an owner's sessions, and the health check.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from store.core import validation as v
from store.errors import InvalidInput
from store.front.base import Domain
from store.models import SearchHits
from store.requests import HealthCheck, Search

MAX_QUERY = 256


class Operations(Domain):
    """Search across an owner's sessions, and the health check."""

    def search(self, owner: str, query: str, *, limit: int = 20, cursor: str | None = None) -> SearchHits:
        """Case-insensitive search of one owner's session titles and message text, bounded per call: it
        reads the newest sessions first, at most `settings.search_sessions` sessions and
        `settings.search_messages` messages (a long session's newest first), and ranks the hits within
        what it read. The result is a list of hits that also says how far it got (`sessions_searched`,
        `messages_searched`); `next_cursor` continues into older sessions (None: all were read). Cost and
        limits: docs/data-model.md."""
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
            raise InvalidInput(f"query must be a non-blank string of at most {MAX_QUERY} characters")
        v.text(query, "query", MAX_QUERY)
        if cursor is not None and not isinstance(cursor, str):
            raise InvalidInput("cursor must be a string")
        request = Search(
            owner=v.owner(owner), query=query.strip(), limit=v.limit(limit, maximum=100) or 20, cursor=cursor
        )
        return self._backend.execute(request)

    def health_check(self) -> None:
        """Return when every table answers; StoreUnavailable names what does not."""
        return self._backend.execute(HealthCheck())
