"""Calling a sync or an async store from a framework's async methods."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from store.async_session_store import AsyncSessionStore
from store.errors import SessionExists, SessionNotFound
from store.session_store import SessionStore

AnyStore = SessionStore | AsyncSessionStore


async def call(store: AnyStore, method: str, *args: Any, **kwargs: Any) -> Any:
    """`store.method(*args, **kwargs)`: awaited on an AsyncSessionStore, run in a worker thread on a
    SessionStore (so a blocking AWS request never stalls the event loop)."""
    bound = getattr(store, method)
    if isinstance(store, AsyncSessionStore):
        return await bound(*args, **kwargs)
    return await asyncio.to_thread(bound, *args, **kwargs)


async def call_or(missing: Any, store: AnyStore, method: str, *args: Any, **kwargs: Any) -> Any:
    """`call(...)`, or `missing` when the session does not exist (or is another owner's)."""
    try:
        return await call(store, method, *args, **kwargs)
    except SessionNotFound:
        return missing


async def ensure_session(
    store: AnyStore, owner: str, session_id: str, metadata: dict[str, Any], retention: Any = None
) -> None:
    """Create the session unless it exists (made meanwhile by another writer, or earlier)."""
    with contextlib.suppress(SessionExists):
        await call(store, "create_session", owner, session_id=session_id, metadata=metadata, retention=retention)
