"""What every function shares: one store per Lambda container, built from the environment on first use."""

from __future__ import annotations

from store import SessionStore

_store: SessionStore | None = None


def store() -> SessionStore:
    """The container's store (SESSIONS_TABLE, MESSAGES_TABLE, ARTIFACTS_BUCKET; clients reused across calls)."""
    global _store
    if _store is None:
        _store = SessionStore.from_env()
    return _store


def use_store(instance: SessionStore | None) -> None:
    """Serve events with `instance` (the local stack and tests); None goes back to the environment's."""
    global _store
    _store = instance
