"""Memory extraction's steps, written once and driven by both fronts: a run is a generator of `StoreCall`s (the
store's public operations, asked with `store.core.steps.ask(CALLS.<method>, ...)`, checked by mypy), `Ask`
(the model), `Sleep` and `Now`; `drive` performs them with a `SessionStore`, `drive_async` awaits them with an
`AsyncSessionStore` (the model asked in a worker thread)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from store.core.steps import Sleep, Stepper, StoreCall
from store.extraction.models import ModelError, ModelRejected, ModelReply, ModelRequest

T = TypeVar("T")


@dataclass(frozen=True)
class Ask:
    """Ask the model; the answer is a `ModelReply`, or a `ModelError` thrown in."""

    request: ModelRequest


@dataclass(frozen=True)
class Now:
    """The store's clock; the answer is a datetime."""


Step = StoreCall | Ask | Sleep | Now
Flow = Generator[Step, Any, T]  # a flow whose value is a T


def model_reply(request: ModelRequest) -> Flow[ModelReply]:
    """The model's reply to `request` (its ModelError raised here)."""
    reply = yield Ask(request)
    return cast(ModelReply, reply)


def now() -> Flow[datetime]:
    """The store's clock."""
    at = yield Now()
    return cast(datetime, at)


def pause(seconds: float) -> Flow[None]:
    """Wait `seconds` before asking the model again."""
    yield Sleep(seconds, what="model")


def asked(model: Any, request: ModelRequest) -> ModelReply:
    """`model`'s reply to `request`; whatever a caller's model raises that is not a ModelError is ModelRejected."""
    try:
        return cast(ModelReply, model(request))
    except ModelError:
        raise
    except Exception as exc:
        raise ModelRejected(f"the model failed: {type(exc).__name__}") from None


def drive(store: Any, model: Any, flow: Flow[T]) -> T:
    """Run `flow`'s steps with `store`'s methods and `model`, synchronously: its value."""
    stepper = Stepper(flow)
    while not stepper.done:
        step = stepper.current
        try:
            if isinstance(step, StoreCall):
                outcome: Any = getattr(store, step.method)(*step.args, **step.kwargs)
            elif isinstance(step, Ask):
                outcome = asked(model, step.request)
            elif isinstance(step, Sleep):
                time.sleep(step.seconds)
                outcome = None
            else:
                outcome = store.settings.clock()
        except Exception as exc:  # handed to the flow, which decides (a model's failure) or passes it on
            outcome = exc
        stepper.advance(outcome)
    return stepper.result


async def drive_async(store: Any, model: Any, flow: Flow[T]) -> T:
    """`drive` for an `AsyncSessionStore`: its methods awaited, the model asked in a worker thread (a model's
    client blocks), sleeps on the loop."""
    stepper = Stepper(flow)
    while not stepper.done:
        step = stepper.current
        try:
            if isinstance(step, StoreCall):
                outcome: Any = await getattr(store, step.method)(*step.args, **step.kwargs)
            elif isinstance(step, Ask):
                outcome = await asyncio.to_thread(asked, model, step.request)
            elif isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
                outcome = None
            else:
                outcome = store.settings.clock()
        except Exception as exc:
            outcome = exc
        stepper.advance(outcome)
    return stepper.result
