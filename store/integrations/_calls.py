"""Calling a sync or an async store from a framework's async methods."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar, cast

from store.async_session_store import AsyncSessionStore
from store.backend import AsyncBackend, Awaited, Backend
from store.errors import SessionExists, SessionNotFound
from store.requests import Request
from store.session_store import SessionStore

AnyStore = SessionStore | AsyncSessionStore
# how many times an adapter's read-change-write loop tries again after another writer changed the session
# first: each retry follows that writer's success and is made at once (the store backs off contention itself)
CHANGE_ATTEMPTS = 64
T = TypeVar("T")
R = TypeVar("R")
M = TypeVar("M")
Runner = Callable[[Coroutine[Any, Any, Any]], Any]


class Blocking(Backend):
    """An async backend behind the sync interface: each request run to completion on `runner`, or on an
    event loop of its own (started on first use, on a daemon thread). An AsyncSessionStore's clients stay
    bound to the loop they were first used on, so give a bridged store its own clients, or pass the runner
    of the loop they belong to. (`Awaited` is the other direction.)"""

    def __init__(self, backend: AsyncBackend, runner: Runner | None = None) -> None:
        self.inner = backend
        self.name = backend.name
        self.supports = backend.supports
        self._runner = runner
        self._loop: asyncio.AbstractEventLoop | None = None
        self._guard = threading.Lock()

    def execute(self, request: Request[R]) -> R:
        pending = self.inner.execute(request)
        if self._runner is not None:
            return cast(R, self._runner(pending))
        return asyncio.run_coroutine_threadsafe(pending, self._own_loop()).result()

    def _own_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="agent-store-bridge", daemon=True).start()
            return self._loop


def as_sync(store: AnyStore, runner: Runner | None = None) -> SessionStore:
    """`store` with the sync front's typed methods: a SessionStore itself, or an AsyncSessionStore's own
    backend and settings behind the sync front, each request run to completion (`Blocking`). What sync
    adapter methods call, on either store."""
    if isinstance(store, SessionStore):
        return store
    return SessionStore(backend=Blocking(store.backend, runner), settings=store.settings)


class SyncBridge:
    """A store's methods by name, from synchronous code, on either store (`as_sync`): for the LangGraph
    saver's flows, which name the call they need."""

    def __init__(self, store: AnyStore, runner: Runner | None = None) -> None:
        self.store = store
        self.sync_store = as_sync(store, runner)

    def __call__(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """`store.method(*args, **kwargs)`, run to completion."""
        return getattr(self.sync_store, method)(*args, **kwargs)


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


async def at_home(home: asyncio.AbstractEventLoop | None, pending: Coroutine[Any, Any, T]) -> T:
    """`pending` (a store call) run on `home` (the loop an AsyncSessionStore's clients belong to) when the
    caller runs on another loop, as frameworks that run their async code on a loop of their own do;
    awaited in place otherwise."""
    if home is None or home is asyncio.get_running_loop():
        return await pending
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(pending, home))


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


async def ensure_session(
    store: AnyStore, owner: str, session_id: str, metadata: dict[str, Any], retention: Any = None
) -> None:
    """Create the session unless it exists (made meanwhile by another writer, or earlier)."""
    with contextlib.suppress(SessionExists):
        await as_async(store).create_session(owner, session_id=session_id, metadata=metadata, retention=retention)
