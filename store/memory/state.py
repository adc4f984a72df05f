"""The in-memory backend: state, full loads and saves, interrupts and records."""

from __future__ import annotations

from typing import Any

from store.core import codec, rules
from store.core.slots import INTERRUPT_SLOT, records_slot
from store.core.windows import Widening, state_position, window_start
from store.errors import SessionNotFound
from store.memory.core import MemoryCore, SessionEntry
from store.models import FullSession, Session, StateSnapshot
from store.requests import (
    ClearInterrupt,
    LoadFull,
    LoadInterrupt,
    LoadRecords,
    LoadState,
    SaveFull,
    SaveInterrupt,
    SaveRecords,
    SaveState,
)


class MemoryState(MemoryCore):
    """State, full loads and saves, interrupts and records, in memory."""

    def save_state(self, request: SaveState) -> int:
        session_id, owner, state = request.session_id, request.owner, request.state
        expected_version = request.expected_version
        with self._lock:
            entry = self._need(session_id, owner)
            stored = self._copy(state)
            version = entry.session.state_version
            rules.expect(rules.stale_version("save_state", expected_version, version))
            entry.state = StateSnapshot(
                version=version + 1, state=stored, seq=entry.session.last_seq, saved_at=self._now()
            )
            self._touch(entry, state_version=version + 1)
            return version + 1

    def _keep_state(self, entry: SessionEntry, snapshot: StateSnapshot) -> None:
        """Keep a state `save_full` wrote in the session's ring of `settings.state_history` slots (by version,
        as the DynamoDB backend keeps them), for rewinds."""
        entry.states_kept[snapshot.version % self.settings.state_history] = snapshot.model_copy(deep=True)

    def load_state(self, request: LoadState) -> StateSnapshot | None:
        session_id, owner = request.session_id, request.owner
        with self._lock:
            entry = self._need(session_id, owner)
            return None if entry.state is None else entry.state.model_copy(deep=True)

    def save_full(self, request: SaveFull) -> StateSnapshot:
        session_id, owner, messages = request.session_id, request.owner, request.messages
        state, expected_seq = request.state, request.expected_seq
        with self._lock:
            entry = self._need(session_id, owner)
            encoded = self._encode_all([*(m.body() for m in messages), state], "save_full")
            rules.expect(rules.stale_seq("save_full", expected_seq, entry.session.last_seq))
            records = self._as_records(session_id, messages, encoded[:-1], entry.session.last_seq + 1)
            version = entry.session.state_version + 1
            entry.state = StateSnapshot(
                version=version,
                state=codec.decode(*encoded[-1]),
                seq=entry.session.last_seq + len(records),
                saved_at=self._now(),
            )
            self._commit(entry, records, state_version=version)
            if request.keep_state and rules.keeps_state(len(messages), self.settings.state_history):
                self._keep_state(entry, entry.state)
            return entry.state.model_copy(deep=True)

    def load_full(self, request: LoadFull) -> FullSession:
        with self._lock:
            entry = self._need(request.session_id, request.owner)
            session = entry.session
            after = state_position(entry.state.state if entry.state else None, request.after_seq_at)
            lo = window_start(session.last_seq, session.compaction_seq, request.since_compaction, request.last, after)
            window = Widening(entry.messages[lo - 1 :])
            window.take(entry.messages[i] for i in range(lo - 2, -1, -1))  # older, newest first, no copy
            states: dict[str, StateSnapshot | None] = {}
            sessions: dict[str, Session | None] = {}
            for other, owner in request.with_states:
                try:
                    other_entry = self._need(other, request.owner if owner is None else owner)
                except SessionNotFound:
                    states[other] = sessions[other] = None
                    continue
                found = other_entry.state
                states[other] = found.model_copy(deep=True) if found else None
                sessions[other] = other_entry.session.model_copy(deep=True)
            return FullSession(
                session=session.model_copy(deep=True),
                messages=[m.model_copy(deep=True) for m in window.window()],
                state=entry.state.model_copy(deep=True) if entry.state else None,
                states=states,
                sessions=sessions,
            )

    def save_interrupt(self, request: SaveInterrupt) -> None:
        session_id, owner, interrupt = request.session_id, request.owner, request.interrupt
        self._put_slot(session_id, owner, INTERRUPT_SLOT, interrupt)

    def load_interrupt(self, request: LoadInterrupt) -> dict[str, Any] | None:
        session_id, owner = request.session_id, request.owner
        found: dict[str, Any] | None = self._load_slot(session_id, owner, INTERRUPT_SLOT, None)
        return found

    def clear_interrupt(self, request: ClearInterrupt) -> None:
        session_id, owner = request.session_id, request.owner
        self._put_slot(session_id, owner, INTERRUPT_SLOT, None)

    def save_records(self, request: SaveRecords) -> None:
        session_id, owner, kind, records = request.session_id, request.owner, request.kind, request.records
        self._put_slot(session_id, owner, records_slot(kind), records)

    def load_records(self, request: LoadRecords) -> list[Any]:
        session_id, owner, kind = request.session_id, request.owner, request.kind
        found: list[Any] = self._load_slot(session_id, owner, records_slot(kind), [])
        return found

    def _put_slot(self, session_id: str, owner: str | None, slot: str, value: Any) -> None:
        """Store a JSON value in a named slot of the session (None empties it), recording activity."""
        with self._lock:
            entry = self._need(session_id, owner)
            if value is None:
                entry.slots.pop(slot, None)
            else:
                entry.slots[slot] = self._copy(value)
            self._touch(entry)

    def _load_slot(self, session_id: str, owner: str | None, slot: str, default: Any) -> Any:
        """The value in a slot, or `default` when the slot is empty."""
        with self._lock:
            slots = self._need(session_id, owner).slots
            return self._copy(slots[slot]) if slot in slots else default
