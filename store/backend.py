"""The interface every backend implements: `execute` one checked request (`store/requests.py`).

Requests arrive validated and normalised by the public fronts (`store/front/`); backends implement
semantics, not argument checking. A `Backend` returns each result; an `AsyncBackend` returns an awaitable
of it, so both say what a caller gets."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, TypeVar, cast

from store.core.streams import adrain, is_async_source
from store.errors import InvalidInput
from store.requests import PutArtifact, Request, operations

R = TypeVar("R")

EVERY_OPERATION: frozenset[str] = frozenset(operations())


class Backend(ABC):
    """Storage semantics of the public API: `execute(request)` carries out the request's operation and
    returns its result (each promise is stated on the `SessionStore` method it serves). `supports` names
    the operations it carries out: any other is refused with InvalidInput, at once and writing nothing."""

    name: str
    supports: frozenset[str] = EVERY_OPERATION

    @abstractmethod
    def execute(self, request: Request[R]) -> R:
        """The result of `request`'s operation; a StoreError when it fails."""

    def close(self) -> None:  # noqa: B027 (optional: most backends hold nothing to release)
        """Release clients and connections (nothing to do by default)."""


class AsyncBackend(ABC):
    """`Backend`, awaitable: `await execute(request)` is the result of the request's operation."""

    name: str
    supports: frozenset[str] = EVERY_OPERATION

    @abstractmethod
    async def execute(self, request: Request[R]) -> R:
        """The result of `request`'s operation; a StoreError when it fails."""

    async def aclose(self) -> None:  # noqa: B027 (optional: most backends hold nothing to release)
        """Release clients and connections (nothing to do by default)."""


async def drained(request: Request[R]) -> Request[R]:
    """The request, with an artifact's async source (an async caller's) read into bytes on its loop."""
    if isinstance(request, PutArtifact) and is_async_source(request.data):
        return cast(Request[R], replace(request, data=await adrain(request.data)))
    return request


class Awaited(AsyncBackend):
    """A sync backend behind the async interface: each call runs at once (the memory backend, which never
    blocks), or with `in_thread` in a worker thread (a backend whose requests block on the network, so that
    they never stall the event loop)."""

    def __init__(self, backend: Backend, *, in_thread: bool = False) -> None:
        self.backend = backend
        self.name = backend.name
        self.supports = backend.supports
        self.in_thread = in_thread

    async def execute(self, request: Request[R]) -> R:
        ready = await drained(request)
        if self.in_thread:
            return await asyncio.to_thread(self.backend.execute, ready)
        return self.backend.execute(ready)

    async def aclose(self) -> None:
        self.backend.close()


class Methods:
    """`execute` by name: the request's `operation` is the method of this backend that carries it out."""

    def execute(self, request: Request[R]) -> R:
        method = getattr(self, request.operation)
        return cast(R, method(request))


class Echo(Backend):
    """Returns each request in place of its result: what `AsyncSessionStore` runs `SessionStore`'s checks
    against, to obtain the request it then awaits on its own backend."""

    name = "echo"

    def execute(self, request: Request[R]) -> R:
        return cast(R, request)


def refuse_unsupported(backend: Backend | AsyncBackend, request: Request[Any]) -> None:
    """InvalidInput when `backend` does not carry out `request`'s operation (its declared gap)."""
    if request.operation not in backend.supports:
        raise InvalidInput(f"{request.operation} is not offered by the {backend.name} backend")


__all__ = [
    "EVERY_OPERATION",
    "AsyncBackend",
    "Awaited",
    "Backend",
    "Echo",
    "Methods",
    "refuse_unsupported",
]
