"""OpenTelemetry spans around the operations users watch (a memory search), and which operations embed.

`@observed(...)` marks a front method: it runs inside a span named for it when the OpenTelemetry API is
installed (the `otel` extra; with no tracer provider set, OpenTelemetry's own no-op), and `embeds` says that
it may call the store's embedder, which `AsyncSessionStore` then runs off its event loop. A span holds the
call's choices and counts, never user content: no owner, namespace label, key, query, filter value or
memory; a failure sets the span's status to the exception's type name alone (messages can quote input)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
TRACER = "agent_session_store"

Attributes = dict[str, str | int | float | bool]


@dataclass(frozen=True)
class Observed:
    """How a front method is watched: its span's name, its attributes from the call's arguments (bound,
    defaults applied) and from its result, and whether it embeds."""

    span: str
    before: Callable[[Mapping[str, Any]], Attributes]
    after: Callable[[Any], Attributes]
    embeds: bool


def tracer_provider() -> Any:
    """OpenTelemetry's global tracer provider, or None without the OpenTelemetry API."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer_provider()


@contextmanager
def opened(
    watch: Observed | None, method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Iterator[Callable[[Any], None]]:
    """A span for one call of `method` (none when `watch` is None or OpenTelemetry is absent: then nothing of
    the call is looked at); the callable it yields records the result's attributes."""
    provider = tracer_provider() if watch is not None else None
    if provider is None or watch is None:
        yield lambda _result: None
        return
    from opentelemetry.trace import Status, StatusCode

    tracer = provider.get_tracer(TRACER)
    attributes = watch.before(bound(method, args, kwargs))
    with tracer.start_as_current_span(
        watch.span, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield lambda result: span.set_attributes(watch.after(result))
        except BaseException as exc:
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise


def watch_of(method: Callable[..., Any]) -> Observed | None:
    """How `method` is watched, or None."""
    return getattr(method, "__observed__", None)


def bound(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Mapping[str, Any]:
    """The call's arguments by name, defaults applied (an unbindable call: none; the method will refuse it)."""
    try:
        call = inspect.signature(method).bind(*args, **kwargs)
    except TypeError:
        return {}
    call.apply_defaults()
    return call.arguments


def observed(
    span: str,
    *,
    before: Callable[[Mapping[str, Any]], Attributes],
    after: Callable[[Any], Attributes],
    embeds: bool = False,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the method inside a span `span` (see the module docstring); `embeds`: it may call the embedder."""
    watch = Observed(span, before, after, embeds)

    def wrap(method: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(method)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            with opened(watch, method, args, kwargs) as done:
                result = method(*args, **kwargs)
                done(result)
                return result

        call.__observed__ = watch  # type: ignore[attr-defined]
        return call

    return wrap
