"""A time budget for every call made within a block: a Lambda handler gives each request one, so that
no call spends the request's time waiting out contention (`Settings.retry_budget` bounds each call; a
deadline bounds them all together, and whichever ends first applies)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("agent_session_store_deadline", default=None)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within the block (this thread, or this asyncio task), a call retrying under contention gives up
    with Conflict once `seconds` have passed since the block began. Nested blocks keep the earlier end."""
    end = time.monotonic() + max(0.0, seconds)
    outer = _DEADLINE.get()
    token = _DEADLINE.set(end if outer is None else min(outer, end))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current_deadline() -> float | None:
    """The monotonic time the enclosing `deadline` block ends, or None outside one."""
    return _DEADLINE.get()
