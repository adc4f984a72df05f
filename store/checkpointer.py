"""`Checkpointer`: checkpoint saves for agent loops, which must never crash the loop."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any, Protocol

logger = logging.getLogger("store.checkpointer")


class _SavesCheckpoints(Protocol):
    def save_checkpoint(
        self, scope: str, key: str, data: Any, *, ttl: timedelta | int | None = None, owner: str | None = None
    ) -> Any: ...


class Checkpointer:
    """Wraps a store's `save_checkpoint`: `save` returns False instead of raising, logs the failure
    and counts it in `failures`."""

    def __init__(self, store: _SavesCheckpoints, *, owner: str | None = None) -> None:
        self.store = store
        self.owner = owner
        self.failures = 0
        self._lock = threading.Lock()

    def save(self, scope: str, key: str, data: Any, ttl: timedelta | int | None = None) -> bool:
        """Save a checkpoint; True on success, False (logged, counted) on any failure."""
        try:
            self.store.save_checkpoint(scope, key, data, ttl=ttl, owner=self.owner)
        except Exception:
            with self._lock:
                self.failures += 1
            logger.warning("checkpoint save failed (scope=%s, key=%s)", scope, key, exc_info=True)
            return False
        return True
