"""The in-memory backend: checkpoints."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from store.memory.core import MemoryCore
from store.models import Checkpoint
from store.timeutil import expiry, is_expired


class MemoryCheckpoints(MemoryCore):
    """Checkpoints, in memory."""

    def save_checkpoint(self, scope: str, key: str, data: Any, ttl: timedelta, owner: str | None) -> Checkpoint:
        with self._lock:
            now = self._now()
            cp = Checkpoint(
                scope=scope,
                key=key,
                data=self._copy(data),
                saved_at=now,
                expires_at=expiry(now, ttl),
            )
            if scope == "session":
                entry = self._need(key, owner)
                cp = cp.model_copy(update={"seq": entry.session.last_seq})
                entry.checkpoint = cp
            else:
                self._checkpoints[(scope, owner, key)] = cp
            return cp.model_copy(deep=True)

    def load_checkpoint(self, scope: str, key: str, owner: str | None) -> Checkpoint | None:
        with self._lock:
            where = (scope, owner, key)
            cp = self._need(key, owner).checkpoint if scope == "session" else self._checkpoints.get(where)
            if cp is None or is_expired(cp.expires_at, self._now()):
                return None
            return cp.model_copy(deep=True)

    def delete_checkpoint(self, scope: str, key: str, owner: str | None) -> None:
        with self._lock:
            if scope == "session":
                self._need(key, owner).checkpoint = None
                return
            self._checkpoints.pop((scope, owner, key), None)
