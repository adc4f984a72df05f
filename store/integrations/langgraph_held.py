"""LangGraph: a task's writes held for a moment for the checkpoint that follows them.

LangGraph saves a task's writes (`put_writes`) when the task ends and, once every task of the step has
ended, the step's checkpoint (`put`), whose parent is the checkpoint those writes were put for. Each save
runs in the background (LangGraph's default durability, "async"), and the two come within a few
milliseconds of each other when the step's last task ends. Held for LINGER seconds, the writes are written
with that checkpoint, in its record (one store write, not two). LangGraph puts a thread's checkpoints one
after another, so when the checkpoint the writes were put for is still being stored (its put has begun and
not ended, or has not begun: the writes name a checkpoint newer than any this saver began or read), the
writes wait until LINGER after it is stored, for MAX_HOLD seconds at most. Writes after which the run stops
(an interrupt, an error) wait only for that: no checkpoint follows them. Either way a task's writes follow
the checkpoint they were put for in the log, however LangGraph's background saves are scheduled.

A `put_writes` call returns only once its writes are stored (with the checkpoint or, when none came in
time, on their own), so a caller that waits for it (LangGraph at the end of a run) waits for them: what a
crash can lose is what LangGraph's own default can lose, the saves still in flight.

Sync callers (threads) and async callers (tasks of one event loop) are held apart: a checkpoint takes only
writes of its own kind of caller (an event loop's writes are taken on that loop)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from store.core.lru import Lru

LINGER = 0.05  # seconds a task's writes wait for the checkpoint that follows them
MAX_HOLD = 1.0  # seconds at most, whatever is still being stored
LINES = 4096  # threads and namespaces whose checkpoints are followed (the latest used)
RECENT = 16  # checkpoints whose end of storing is remembered, per thread and namespace


@dataclass(eq=False)
class Held:
    """One `put_writes` call waiting: its writes' record body, its key, and how it learns the outcome."""

    thread_id: str
    ns: str
    checkpoint_id: str
    body: dict[str, Any]
    key: str
    loop: asyncio.AbstractEventLoop | None  # None: a sync caller
    fold: bool = True  # False: writes after which the run stops (no checkpoint follows): they only wait
    # for the checkpoint they were put for to be stored, so that they follow it in the log
    since: float = 0.0  # when it began to wait (`HeldWrites.hold`)
    claimed: bool = False  # by a checkpoint (written in its record) or by the call itself (written alone)
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)
    done_async: asyncio.Event = field(default_factory=asyncio.Event)

    def finish(self, error: BaseException | None) -> None:
        """The checkpoint that took these writes was stored (or failed with `error`): wake the call."""
        self.error = error
        if self.loop is None:
            self.done.set()
        else:
            self.done_async.set()  # (on its loop: a checkpoint takes only its own loop's writes)


@dataclass
class _Line:
    """The checkpoints of one thread and namespace this saver is storing and has stored."""

    newest: str = ""  # the newest checkpoint whose put began
    storing: set[str] = field(default_factory=set)
    stored: dict[str, float] = field(default_factory=dict)  # the latest RECENT: checkpoint -> when stored
    written: dict[str, None] = field(default_factory=dict)  # the latest RECENT checkpoints writes were put for


class HeldWrites:
    """Writes waiting for their checkpoint, per thread, and the checkpoints being stored; every change
    under one lock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._waiting: dict[str, list[Held]] = {}
        self._lines: Lru[_Line] = Lru(LINES)  # (thread, namespace) -> its line (bounded: the latest used)
        self._guard = threading.Lock()

    def left(self, held: Held) -> float:
        """Seconds `held` may still wait before it is written alone (0: now)."""
        now = self._clock()
        cap = held.since + MAX_HOLD - now
        with self._guard:
            if held.claimed:
                return max(cap, LINGER)  # a checkpoint took it: its end wakes the call
            line = self._lines.get(_line_key(held.thread_id, held.ns))
            cid = held.checkpoint_id
            if line is not None and (cid in line.storing or cid > line.newest):
                return min(LINGER, cap)  # its own checkpoint is still being stored: ask again then
            if not held.fold:
                return 0.0
            stored = line.stored.get(cid, 0.0) if line is not None else 0.0
        return min(max(held.since, stored) + LINGER - now, cap)

    def begin(self, thread_id: str, ns: str, cid: str) -> None:
        """A put of checkpoint `cid` began."""
        with self._guard:
            line = self._lines.get_or_make(_line_key(thread_id, ns), _Line)
            line.storing.add(cid)
            line.newest = max(line.newest, cid)

    def seen(self, thread_id: str, ns: str, cid: str) -> None:
        """Checkpoint `cid` was read from the store (stored already, by this saver or another)."""
        with self._guard:
            line = self._lines.get_or_make(_line_key(thread_id, ns), _Line)
            line.newest = max(line.newest, cid)

    def end(self, thread_id: str, ns: str, cid: str) -> None:
        """The put of checkpoint `cid` ended (stored or failed)."""
        with self._guard:
            line = self._lines.get(_line_key(thread_id, ns))
            if line is None:
                return
            line.storing.discard(cid)
            line.stored[cid] = self._clock()
            _bound(line.stored)

    def hold(self, held: Held) -> Held:
        with self._guard:
            held.since = self._clock()
            self._waiting.setdefault(held.thread_id, []).append(held)
            line = self._lines.get_or_make(_line_key(held.thread_id, held.ns), _Line)
            line.written[held.checkpoint_id] = None
            _bound(line.written)
        return held

    def expects_writes(self, thread_id: str, ns: str, parent: str | None) -> bool:
        """Whether a step's checkpoint, child of `parent`, should wait for the writes of the step's tasks: this
        saver stored `parent` (or read it) and no writes were put for it yet. LangGraph submits a task's
        writes before the checkpoint that follows, but its background threads may start them after it."""
        if parent is None:
            return False
        with self._guard:
            line = self._lines.get(_line_key(thread_id, ns))
            if line is None or parent in line.written:
                return False
            return parent in line.stored or parent in line.storing or parent == line.newest

    def release(self, held: Held) -> bool:
        """True when no checkpoint took `held`: the call now writes it itself (and it is no longer waiting)."""
        with self._guard:
            if held.claimed:
                return False
            held.claimed = True
            self._forget(held)
            return True

    def take(self, thread_id: str, ns: str, parent: str | None, loop: asyncio.AbstractEventLoop | None) -> list[Held]:
        """The writes waiting for a checkpoint of `thread_id` in `ns` whose parent is `parent`, in the order
        they were put (now claimed by that checkpoint: it must `finish` each)."""
        if parent is None:
            return []
        with self._guard:
            taken = [
                h
                for h in self._waiting.get(thread_id, [])
                if not h.claimed and h.fold and h.ns == ns and h.checkpoint_id == parent and h.loop is loop
            ]
            for held in taken:
                held.claimed = True
                self._forget(held)
            return taken

    def _forget(self, held: Held) -> None:
        waiting = self._waiting.get(held.thread_id, [])
        with contextlib.suppress(ValueError):
            waiting.remove(held)
        if not waiting:
            self._waiting.pop(held.thread_id, None)


def finish_all(taken: list[Held], error: BaseException | None) -> None:
    for held in taken:
        held.finish(error)


def _line_key(thread_id: str, ns: str) -> str:
    return f"{thread_id}\x00{ns}"


def _bound(recent: dict[str, Any]) -> None:
    """Keep the latest RECENT entries of `recent` (in insertion order)."""
    while len(recent) > RECENT:
        recent.pop(next(iter(recent)))
