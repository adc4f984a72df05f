"""Running the contract suite against `AsyncSessionStore`: the same tests call a synchronous facade that
runs each coroutine on an event loop in a background thread (aiobotocore needs moto's server mode)."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

from store import AsyncArtifactReader, AsyncSessionStore
from store.backend import AsyncBackend, Backend
from store.requests import Request

T = TypeVar("T")
R = TypeVar("R")


class LoopThread:
    """An event loop running in a daemon thread until `stop`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="async-store-loop", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=300)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)


class SyncReader:
    """An `AsyncArtifactReader` read from synchronous test code."""

    def __init__(self, reader: AsyncArtifactReader, loop: LoopThread) -> None:
        self._reader, self._loop, self.version = reader, loop, reader.version

    def read(self, n: int = -1) -> bytes:
        return self._loop.run(self._reader.read(n))

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self.read(1024 * 1024):
            yield chunk

    def __enter__(self) -> SyncReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.run(self._reader.aclose())


class OnLoop(Backend):
    """An async backend, each request run to completion on `loop`'s thread."""

    def __init__(self, backend: AsyncBackend, loop: LoopThread) -> None:
        self.inner, self._loop = backend, loop
        self.name, self.supports = backend.name, backend.supports

    def execute(self, request: Request[R]) -> R:
        return self._loop.run(self.inner.execute(request))


class SyncOverAsync:
    """`AsyncSessionStore` with each coroutine method run to completion: what a contract test calls."""

    def __init__(self, store: AsyncSessionStore, loop: LoopThread) -> None:
        self.async_store = store
        self._loop = loop

    @property
    def backend(self) -> Backend:
        """The async store's backend as a sync one (each request run to completion on the loop), so that
        what builds its own front over a store's backend (`as_async`, `ScopedBackend`) works on this one."""
        return OnLoop(self.async_store.backend, self._loop)

    @property
    def settings(self) -> Any:
        return self.async_store.settings

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.async_store, name)
        if not inspect.iscoroutinefunction(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            result = self._loop.run(attr(*args, **kwargs))
            return SyncReader(result, self._loop) if isinstance(result, AsyncArtifactReader) else result

        return call
