"""The public operations on search across an owner's sessions, and the health check.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from store import validation as v
from store.errors import InvalidInput
from store.front.base import Domain
from store.models import SessionHit
from store.requests import HealthCheck, Search

MAX_QUERY = 256


class Operations(Domain):
    """Search across an owner's sessions, and the health check."""

    def search(self, owner: str, query: str, *, limit: int = 20) -> list[SessionHit]:
        """Case-insensitive search of one owner's session titles and message text (cost: docs/data-model.md)."""
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
            raise InvalidInput(f"query must be a non-blank string of at most {MAX_QUERY} characters")
        v.text(query, "query", MAX_QUERY)
        return self._backend.execute(
            Search(owner=v.owner(owner), query=query.strip(), limit=v.limit(limit, maximum=100) or 20)
        )

    def health_check(self) -> None:
        """Return when every table answers; StoreUnavailable names what does not."""
        return self._backend.execute(HealthCheck())
