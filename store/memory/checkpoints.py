"""The in-memory backend: checkpoints."""

from __future__ import annotations

from store.core.timeutil import expiry, is_expired
from store.memory.core import MemoryCore
from store.models import Checkpoint
from store.requests import DeleteCheckpoint, LoadCheckpoint, SaveCheckpoint


class MemoryCheckpoints(MemoryCore):
    """Checkpoints, in memory."""

    def save_checkpoint(self, request: SaveCheckpoint) -> Checkpoint:
        scope, key, data, ttl, owner = request.scope, request.key, request.data, request.ttl, request.owner
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

    def load_checkpoint(self, request: LoadCheckpoint) -> Checkpoint | None:
        scope, key, owner = request.scope, request.key, request.owner
        with self._lock:
            where = (scope, owner, key)
            cp = self._need(key, owner).checkpoint if scope == "session" else self._checkpoints.get(where)
            if cp is None or is_expired(cp.expires_at, self._now()):
                return None
            return cp.model_copy(deep=True)

    def delete_checkpoint(self, request: DeleteCheckpoint) -> None:
        scope, key, owner = request.scope, request.key, request.owner
        with self._lock:
            if scope == "session":
                self._need(key, owner).checkpoint = None
                return
            self._checkpoints.pop((scope, owner, key), None)
