"""Calling a sync or an async store from a framework's async methods."""

from __future__ import annotations

import asyncio
from typing import Any

from store.async_session_store import AsyncSessionStore
from store.session_store import SessionStore

AnyStore = SessionStore | AsyncSessionStore


async def call(store: AnyStore, method: str, *args: Any, **kwargs: Any) -> Any:
    """`store.method(*args, **kwargs)`: awaited on an AsyncSessionStore, run in a worker thread on a
    SessionStore (so a blocking AWS request never stalls the event loop)."""
    bound = getattr(store, method)
    if isinstance(store, AsyncSessionStore):
        return await bound(*args, **kwargs)
    return await asyncio.to_thread(bound, *args, **kwargs)
