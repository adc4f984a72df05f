"""The public operations on checkpoints (short-lived loop state) and a session's records.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from store.core import validation as v
from store.core.timeutil import to_duration
from store.front.base import Domain
from store.models import Checkpoint
from store.requests import (
    DeleteCheckpoint,
    LoadCheckpoint,
    LoadOwnerRecords,
    LoadRecords,
    SaveCheckpoint,
    SaveOwnerRecords,
    SaveRecords,
)


class Checkpoints(Domain):
    """Checkpoints (short-lived loop state) and a session's records."""

    def save_checkpoint(
        self,
        scope: str,
        key: str,
        data: Any,
        *,
        ttl: timedelta | int | None = None,
        owner: str | None = None,
    ) -> Checkpoint:
        """Store or renew a checkpoint that expires `ttl` from now (default `settings.checkpoint_ttl`)."""
        return self._backend.execute(
            SaveCheckpoint(
                scope=v.scope(scope),
                key=v.ident(key, "key"),
                data=v.json_value(data, "checkpoint data"),
                ttl=to_duration(ttl, "ttl") or self.settings.checkpoint_ttl,
                owner=v.optional_owner(owner),
            )
        )

    def load_checkpoint(self, scope: str, key: str, *, owner: str | None = None) -> Checkpoint | None:
        """The checkpoint, or None when absent or expired."""
        return self._backend.execute(
            LoadCheckpoint(scope=v.scope(scope), key=v.ident(key, "key"), owner=v.optional_owner(owner))
        )

    def delete_checkpoint(self, scope: str, key: str, *, owner: str | None = None) -> None:
        """Remove the checkpoint; idempotent."""
        return self._backend.execute(
            DeleteCheckpoint(scope=v.scope(scope), key=v.ident(key, "key"), owner=v.optional_owner(owner))
        )

    def save_records(self, session_id: str, kind: str, records: Iterable[Any], *, owner: str | None = None) -> None:
        """Replace the session's records of `kind` (run records, verification reports, subagent tasks, ...)."""
        return self._backend.execute(
            SaveRecords(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                kind=v.ident(kind, "kind"),
                records=v.record_list(records),
            )
        )

    def load_records(self, session_id: str, kind: str, *, owner: str | None = None) -> list[Any]:
        """The session's records of `kind` (empty when none were saved)."""
        return self._backend.execute(
            LoadRecords(
                session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner), kind=v.ident(kind, "kind")
            )
        )

    def save_owner_records(self, owner: str, kind: str, records: Iterable[Any]) -> None:
        """Replace the owner's records of `kind`: what code above the store keeps for an owner rather than for a
        session (memory extraction keeps the owner's on/off choice here). Small (at most 64 KiB stored); one
        write; `forget_owner` leaves them."""
        return self._backend.execute(
            SaveOwnerRecords(owner=v.owner(owner), kind=v.ident(kind, "kind"), records=v.record_list(records))
        )

    def load_owner_records(self, owner: str, kind: str) -> list[Any]:
        """The owner's records of `kind` (empty when none were saved). One read."""
        return self._backend.execute(LoadOwnerRecords(owner=v.owner(owner), kind=v.ident(kind, "kind")))
