"""The public operations on create, get, list, update and delete sessions.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from store.core import validation as v
from store.core.paging import SessionQuery
from store.core.timeutil import aware, to_duration
from store.front.base import Domain
from store.models import Page, Session
from store.requests import UNSET, CreateSession, DeleteSession, GetSession, ListSessions, Unset, UpdateSession


class Sessions(Domain):
    """Create, get, list, update and delete sessions."""

    def create_session(
        self,
        owner: str,
        *,
        session_id: str | None = None,
        title: str | None = None,
        model: str | None = None,
        metadata: dict[str, Any] | None = None,
        retention: timedelta | int | None = None,
    ) -> Session:
        """Create a session (a fresh id unless one is given; SessionExists if it is taken). With `retention`,
        the session expires after that long without activity."""
        return self._backend.execute(
            CreateSession(
                owner=v.owner(owner),
                session_id=v.new_id() if session_id is None else v.ident(session_id, "session_id"),
                title=v.text(title, "title", v.MAX_TITLE),
                model=v.text(model, "model", v.MAX_MODEL),
                metadata=v.metadata(metadata),
                retention=to_duration(retention, "retention"),
            )
        )

    def get_session(self, session_id: str, *, owner: str | None = None) -> Session | None:
        """The session, or None when it does not exist (or has expired, or belongs to another owner)."""
        return self._backend.execute(
            GetSession(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )

    def list_sessions(
        self,
        owner: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        metadata: dict[str, Any] | None = None,
        conversations_only: bool = False,
    ) -> Page[Session]:
        """An owner's sessions, most recently updated first, filtered by creation time (exclusive bounds)
        and by metadata equality; resume with `cursor=page.next_cursor`. With `conversations_only`, the
        sessions framework adapters keep for their own bookkeeping (a LangGraph thread's checkpoint log,
        Strands' shared storage, ADK's app and user state: `store.conversation.sessions.INTERNAL`) are
        left out."""
        query = SessionQuery(
            limit=v.limit(limit) or 50,
            cursor=cursor,
            created_after=aware(created_after, "created_after"),
            created_before=aware(created_before, "created_before"),
            metadata=v.metadata_filter(metadata),
            conversations_only=bool(conversations_only),
        )
        return self._backend.execute(ListSessions(owner=v.owner(owner), query=query))

    def update_session(
        self,
        session_id: str,
        *,
        title: str | Unset | None = UNSET,
        model: str | Unset | None = UNSET,
        metadata: dict[str, Any] | Unset | None = UNSET,
        owner: str | None = None,
    ) -> Session:
        """Change the fields given (None clears title or model; metadata is replaced whole)."""
        return self._backend.execute(
            UpdateSession(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                title=UNSET if title is UNSET else v.text(title, "title", v.MAX_TITLE),
                model=UNSET if model is UNSET else v.text(model, "model", v.MAX_MODEL),
                metadata=UNSET if metadata is UNSET else v.metadata(metadata),
            )
        )

    def delete_session(self, session_id: str, *, owner: str | None = None) -> None:
        """Remove the session and everything it owns before returning; idempotent."""
        return self._backend.execute(
            DeleteSession(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )
