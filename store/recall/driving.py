"""Methods made of a flow (a generator of the store's operations, `store.core.steps`): `flowed` makes the sync
method that drives it with the store it is called on; `SessionStore`'s flowed methods become
`AsyncSessionStore`'s with `awaited_flow`, which drives the same flow with awaited operations. The flow's
builder checks the arguments and reads the settings only: the steps do the rest."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from store.extraction.steps import Flow, drive, drive_async

__all__ = ["awaited_flow", "drive", "flowed"]

S = TypeVar("S")
A = TypeVar("A")
P = ParamSpec("P")
T = TypeVar("T")


def flowed(build: Callable[Concatenate[S, P], Flow[T]]) -> Callable[Concatenate[S, P], T]:
    """The method that drives `build`'s flow with the store it is called on: the flow's value."""

    @functools.wraps(build)
    def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return drive(self, None, build(self, *args, **kwargs))

    run.__flow__ = build  # type: ignore[attr-defined]
    return run


def awaited_flow(method: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[A, P], Coroutine[Any, Any, T]]:
    """A `flowed` method of `SessionStore` as a coroutine method of `AsyncSessionStore`: the same flow, its
    operations awaited."""
    build = cast(Callable[..., Flow[T]], method.__flow__)  # type: ignore[attr-defined]

    @functools.wraps(method)
    async def call(self: A, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return cast(T, await drive_async(self, None, build(self, *args, **kwargs)))

    return call
