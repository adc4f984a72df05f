"""The public operations on the versioned state, a transcript and its state together, the pending interrupt.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from store.core import validation as v
from store.front.base import Domain
from store.models import FullSession, Message, StateSnapshot
from store.requests import ClearInterrupt, LoadFull, LoadInterrupt, LoadState, SaveFull, SaveInterrupt, SaveState

SAVE_FULL_MAX = 97  # the head, the state, an upload intent, and the messages
LOAD_LAST_MAX = 10_000  # the longest window `load_full(last=...)` returns (before widening)


class State(Domain):
    """The versioned state, a transcript and its state together, the pending interrupt."""

    def save_state(
        self, session_id: str, state: Any, *, expected_version: int | None = None, owner: str | None = None
    ) -> int:
        """Store a new version of the session's state (any JSON); returns the new version number."""
        return self._backend.execute(
            SaveState(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                state=v.json_value(state, "state"),
                expected_version=v.seq(expected_version, "expected_version"),
            )
        )

    def load_state(self, session_id: str, *, owner: str | None = None) -> StateSnapshot | None:
        """The current state, or None if none was saved."""
        return self._backend.execute(
            LoadState(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )

    def save_full(
        self,
        session_id: str,
        messages: Iterable[Message | dict[str, Any]],
        state: Any,
        *,
        expected_seq: int | None = None,
        owner: str | None = None,
        keep_state: bool = True,
    ) -> StateSnapshot:
        """Append messages (up to 97) and store the state after them, in one transaction. With `keep_state`
        (the default), a copy of the state is kept too (the session's last `Settings.state_history`), so that
        `rewind_session` to this point brings it back; a caller that never rewinds (or rewinds its own way,
        as ADK does) saves that write with False."""
        return self._backend.execute(
            SaveFull(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                messages=v.messages(messages, maximum=SAVE_FULL_MAX),
                state=v.json_value(state, "state"),
                expected_seq=v.seq(expected_seq, "expected_seq"),
                keep_state=v.flag(keep_state, "keep_state"),
            )
        )

    def load_full(
        self,
        session_id: str,
        *,
        since_compaction: bool = False,
        last: int | None = None,
        after_seq_at: str | None = None,
        with_states: Mapping[str, str | None] | Iterable[str] | None = None,
        owner: str | None = None,
    ) -> FullSession:
        """The session, its messages and its state as of one instant. The live context only: from the
        latest compaction (`since_compaction`) and/or the last `last` messages (at most 10,000); such a
        window is widened so that every tool result in it has its call (see `store/core/windows.py`).
        `after_seq_at`: a dotted path into the state holding the sequence number after which messages are
        read. `with_states`: up to 4 other sessions (ids, or a mapping of id to the owner to read it as)
        whose states are read in the same request, in `states` by id (None when absent to that owner, or
        without a state), and those sessions themselves in `sessions` (None when absent to that owner)."""
        return self._backend.execute(
            LoadFull(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                since_compaction=bool(since_compaction),
                last=v.limit(last, "last", allow_none=True, maximum=LOAD_LAST_MAX),
                after_seq_at=v.state_path(after_seq_at, "after_seq_at"),
                with_states=v.session_owners(with_states, "with_states"),
            )
        )

    def save_interrupt(self, session_id: str, interrupt: dict[str, Any], *, owner: str | None = None) -> None:
        """Record a pending interrupt (e.g. a tool call awaiting approval), replacing any."""
        return self._backend.execute(
            SaveInterrupt(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                interrupt=v.json_object(interrupt, "interrupt"),
            )
        )

    def load_interrupt(self, session_id: str, *, owner: str | None = None) -> dict[str, Any] | None:
        """The pending interrupt, or None."""
        return self._backend.execute(
            LoadInterrupt(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )

    def clear_interrupt(self, session_id: str, *, owner: str | None = None) -> None:
        """Remove the pending interrupt; idempotent."""
        return self._backend.execute(
            ClearInterrupt(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )
