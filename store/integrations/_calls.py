"""Calling a sync or an async store from a framework's async methods."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from store.async_session_store import AsyncSessionStore
from store.backend import Awaited
from store.errors import SessionExists, SessionNotFound
from store.session_store import SessionStore

AnyStore = SessionStore | AsyncSessionStore
# how many times an adapter's read-change-write loop tries again after another writer changed the session
# first: each retry follows that writer's success and is made at once (the store backs off contention itself)
CHANGE_ATTEMPTS = 64
T = TypeVar("T")
M = TypeVar("M")
Runner = Callable[[Coroutine[Any, Any, Any]], Any]


class SyncBridge:
    """Calls a store's methods from synchronous code: a `SessionStore` directly, an `AsyncSessionStore` by
    running each coroutine on `runner`, or on an event loop of the bridge's own (started on first use, on a
    daemon thread). An AsyncSessionStore's clients stay bound to the loop they were first used on, so give
    a bridged store its own clients, or pass the runner of the loop they belong to."""

    def __init__(self, store: AnyStore, runner: Runner | None = None) -> None:
        self.store = store
        self._runner = runner
        self._loop: asyncio.AbstractEventLoop | None = None
        self._guard = threading.Lock()

    def __call__(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """`store.method(*args, **kwargs)`, awaited where it is a coroutine."""
        bound = getattr(self.store, method)
        if not isinstance(self.store, AsyncSessionStore):
            return bound(*args, **kwargs)
        if self._runner is not None:
            return self._runner(bound(*args, **kwargs))
        return asyncio.run_coroutine_threadsafe(bound(*args, **kwargs), self._own_loop()).result()

    def _own_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="agent-store-bridge", daemon=True).start()
            return self._loop


def as_async(store: AnyStore) -> AsyncSessionStore:
    """`store` with the async front's typed methods: an AsyncSessionStore itself, or a SessionStore's own
    backend and settings behind the async front, each request carried out in a worker thread (a blocking
    AWS request never stalls the event loop). What async adapters call, on either store."""
    if isinstance(store, AsyncSessionStore):
        return store
    return AsyncSessionStore(backend=Awaited(store.backend, in_thread=True), settings=store.settings)


async def or_missing(missing: M, pending: Awaitable[T]) -> T | M:
    """What `pending` (a store call) answers, or `missing` when its session does not exist (or is another
    owner's)."""
    try:
        return await pending
    except SessionNotFound:
        return missing


async def call(store: AnyStore, method: str, *args: Any, **kwargs: Any) -> Any:
    """`store.method(*args, **kwargs)`: awaited on an AsyncSessionStore, run in a worker thread on a
    SessionStore (so a blocking AWS request never stalls the event loop)."""
    bound = getattr(store, method)
    if isinstance(store, AsyncSessionStore):
        return await bound(*args, **kwargs)
    return await asyncio.to_thread(bound, *args, **kwargs)


async def call_at(
    home: asyncio.AbstractEventLoop | None, store: AnyStore, method: str, *args: Any, **kwargs: Any
) -> Any:
    """`call(...)`, sent to `home` (the loop an AsyncSessionStore's clients belong to) when the caller runs
    on another loop, as frameworks that run their async code on a loop of their own do; awaited in place
    otherwise."""
    if home is None or not isinstance(store, AsyncSessionStore) or home is asyncio.get_running_loop():
        return await call(store, method, *args, **kwargs)
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(store, method, *args, **kwargs), home))


async def settled(awaitable: Coroutine[Any, Any, T]) -> T:
    """The awaitable's outcome even when the caller is cancelled meanwhile: a write in flight is never cut
    off half-known; the caller's cancellation is raised once the write has settled (as the OpenAI Agents
    SDK's own sessions do)."""
    task = asyncio.ensure_future(awaitable)
    interrupted = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():  # the write itself was cancelled, not only the caller
                raise
            interrupted = True
    if interrupted:
        raise asyncio.CancelledError
    return result


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
        await as_async(store).create_session(owner, session_id=session_id, metadata=metadata, retention=retention)
