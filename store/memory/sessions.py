"""The in-memory backend: sessions."""

from __future__ import annotations

from typing import Any

from store.conversation.sessions import is_internal
from store.core import cursor as cursors
from store.core.timeutil import expiry, iso
from store.core.validation import matches_metadata
from store.errors import SessionExists
from store.memory.core import MemoryCore, SessionEntry
from store.models import Page, Session
from store.requests import UNSET, CreateSession, DeleteSession, GetSession, ListSessions, UpdateSession


class MemorySessions(MemoryCore):
    """Sessions, in memory."""

    def create_session(self, request: CreateSession) -> Session:
        owner, session_id, title = request.owner, request.session_id, request.title
        model, metadata, retention = request.model, request.metadata, request.retention
        with self._lock:
            if self._live(session_id, None) is not None:
                raise SessionExists(session_id)
            now = self._now()
            session = Session(
                id=session_id,
                owner=owner,
                title=title,
                model=model,
                metadata=self._copy(metadata),
                created_at=now,
                updated_at=now,
                retention=retention,
                expires_at=expiry(now, retention) if retention is not None else None,
            )
            self._sessions[session_id] = SessionEntry(session=session)
            return session.model_copy(deep=True)

    def get_session(self, request: GetSession) -> Session | None:
        session_id, owner = request.session_id, request.owner
        with self._lock:
            entry = self._live(session_id, owner)
            return None if entry is None else entry.session.model_copy(deep=True)

    def list_sessions(self, request: ListSessions) -> Page[Session]:
        owner, query = request.owner, request.query
        with self._lock:
            live = [e.session for sid in list(self._sessions) if (e := self._live(sid, owner)) is not None]

        def position(s: Session) -> str:
            return f"{iso(s.updated_at)}#{s.id}"

        ordered = sorted(live, key=position, reverse=True)
        if query.cursor is not None:
            after = str(cursors.decode(query.cursor, "sessions", owner).get("g"))
            ordered = [s for s in ordered if position(s) < after]
        chosen = [
            s
            for s in ordered
            if (query.created_after is None or s.created_at > query.created_after)
            and (query.created_before is None or s.created_at < query.created_before)
            and matches_metadata(s.metadata, query.metadata)
            and not (query.conversations_only and is_internal(s.metadata))
        ]
        page = chosen[: query.limit]
        next_cursor = None
        if len(chosen) > query.limit:
            next_cursor = cursors.encode("sessions", owner, {"g": position(page[-1]), "i": page[-1].id})
        return Page[Session](items=[s.model_copy(deep=True) for s in page], next_cursor=next_cursor)

    def update_session(self, request: UpdateSession) -> Session:
        session_id, owner, title = request.session_id, request.owner, request.title
        model, metadata = request.model, request.metadata
        with self._lock:
            entry = self._need(session_id, owner)
            changes: dict[str, Any] = {}
            if title is not UNSET:
                changes["title"] = title
            if model is not UNSET:
                changes["model"] = model
            if metadata is not UNSET:
                changes["metadata"] = self._copy(metadata)
            self._touch(entry, **changes)
            return entry.session.model_copy(deep=True)

    def delete_session(self, request: DeleteSession) -> None:
        session_id, owner = request.session_id, request.owner
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None and (owner is None or entry.session.owner == owner):
                self._finish_copies_out_of(entry)  # forks of it keep their messages
                self._let_go(entry, session_id)
                del self._sessions[session_id]
                self._drop_index_of(entry.session.owner, session_id)
