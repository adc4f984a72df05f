"""The write loop of a session: one attempt, and the policy that decides what follows it.

`write_session` is the loop every write that moves or checks a session's position runs. It is three pieces,
each readable alone:
- `attempt`: one try of the write for a position (prepare, build, send), and what it came to (`Tried`);
- `Retry`: after a try that did not land, whether to raise, what the write already did (a resent request),
  or the position to try from next; and whether the writer should queue (only once contention is real:
  writers are already queued, or it lost `turns.LOSSES_BEFORE_QUEUE` races in a row);
- `Waiting`: a writer's place in the head's queue (`turns`), taken only when `Retry` says so.

The retry rules themselves (`again`, `backoff`) are base's (docs/reliability.md, "Contention")."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item
from store.aws.calls import AwsError, Call, Learn, Plan, Sleep
from store.aws.items import Head
from store.aws.plans import turns
from store.aws.plans.base import TURN_TIMES, Context, Position, again, backoff, get_item, guard, live_head, position
from store.aws.plans.transactions import (
    HEAD,
    Actions,
    Failed,
    Outcome,
    cancellation,
    cancelled,
    condition_failed,
    contended,
    transact,
)
from store.aws.plans.turns import Pace, Queue
from store.core import rules
from store.errors import SessionNotFound


@dataclass(frozen=True)
class Expectation:
    """What the caller of a write expects of the head (`expected_seq`, `expected_version`), if anything."""

    what: str
    seq: int | None = None
    version: int | None = None

    def stale(self, head: Head) -> str | None:
        """Why the head no longer is as expected, or None."""
        return rules.stale_seq(self.what, self.seq, head.session.last_seq) or rules.stale_version(
            self.what, self.version, head.session.state_version
        )

    def apply(self, pos: Position) -> Position:
        """`pos` where the caller expects the head to be."""
        return replace(
            pos,
            last_seq=pos.last_seq if self.seq is None else self.seq,
            state_version=pos.state_version if self.version is None else self.version,
        )


# ---------------------------------------------------------------- one attempt


@dataclass(frozen=True)
class Tried:
    """What one attempt came to: the response when it landed; else its failure (None: contention, to be
    backed off), whether the SDK had resent the request, and the error it met."""

    response: dict[str, Any] | None = None
    failed: Failed | None = None
    resent: bool = False
    cause: AwsError | None = None


def attempt(
    ctx: Context,
    pos: Position,
    build: Callable[[Position], Actions],
    prepare: Callable[[Position], Plan[None]] | None,
    what: str,
) -> Plan[Tried]:
    """Try the write once for `pos`: `prepare(pos)` (reads it depends on), then `build(pos)` sent as one
    UpdateItem returning the new item when it is a single Update, else as one transaction. Failures no
    retry can mend are raised; the rest are returned for the policy to judge."""
    if prepare is not None:
        yield from prepare(pos)
    actions = build(pos)
    if HEAD not in actions.names:
        raise ValueError(f"{what}: a session write needs an action named {HEAD!r}")
    try:
        if len(actions) == 1 and "Update" in actions.requests[0]:
            response = yield Call("update_item", {**actions.requests[0]["Update"], "ReturnValues": "ALL_NEW"})
        else:
            response = yield transact(actions, ctx.new_id())
    except AwsError as err:
        return Tried(failed=_failure(err, actions), resent=err.retried, cause=err)
    return Tried(response=response)


def _failure(err: AwsError, actions: Actions) -> Failed | None:
    """How a session write failed: None for contention (retry the same write after a backoff), else each
    action's outcome. Failures no retry can mend are raised (`cancelled`)."""
    if contended(err):
        return None
    failed = condition_failed(HEAD, err) if err.code == "ConditionalCheckFailedException" else cancelled(err, actions)
    if failed.conflicted() and not failed.failed(HEAD):
        return None
    return failed


# ---------------------------------------------------------------- the retry policy


@dataclass(frozen=True)
class Next:
    """What follows a try that did not land: the write is already stored (`landed`), or try again from
    `pos` (the head `old` as the failure showed it, when it did)."""

    pos: Position
    old: Item | None = None
    landed: bool = False


class Retry:
    """The policy of one session write: how many attempts it has made (against `Settings.retry_budget`),
    how many races it lost in a row, and what each failure means."""

    def __init__(
        self,
        ctx: Context,
        session_id: str,
        owner: str | None,
        expectation: Expectation,
        expected: tuple[type[Outcome], ...],
        landed: Callable[[Position], Plan[bool]] | None,
    ) -> None:
        self.ctx, self.session_id, self.owner = ctx, session_id, owner
        self.expectation, self.expected, self.landed = expectation, expected, landed
        self.what = expectation.what
        self.attempts = 0
        self.lost = 0

    def after(self, pos: Position, tried: Tried) -> Plan[Next]:
        """Judge a try that did not land. Contention: the same write after a backoff. Another action's
        failure: its outcome raised (`expected`, or `Cancelled`). A lost race on the head: the write is
        already stored when a resent request landed before (`landed`); the caller's expectation no longer
        holding is a Conflict; else at once from the head the failure returned (read when it returned none)."""
        failed = tried.failed
        if failed is None:
            self.attempts = yield from backoff(self.ctx, self.attempts, self.what)
            return Next(pos)
        if not failed.failed(HEAD):
            raise cancellation(failed, self.what, self.expected) from tried.cause
        if tried.resent and self.landed is not None and (yield from self.landed(pos)):
            return Next(pos, landed=True)
        old = failed.old(HEAD)
        if old is None:
            old = yield from get_item(self.ctx.sessions_table, keys.head_key(self.session_id))
        head = yield from live_head(self.ctx, self.session_id, old, self.owner)
        stale = self.expectation.stale(head)
        if stale:
            raise cancellation(failed, self.what, self.expected, stale) from tried.cause
        self.attempts = yield from again(self.ctx, self.attempts, self.what)
        self.lost += 1
        return Next(Position.of(head), old)

    def should_queue(self, waiting: Waiting, old: Item | None) -> bool:
        """Queue (or keep queueing) only when contention is real: a ticket is held, writers are queued
        already, or this write lost `turns.LOSSES_BEFORE_QUEUE` races in a row."""
        return bool(waiting.ticket) or not Queue.of(old or {}).empty or self.lost >= turns.LOSSES_BEFORE_QUEUE


# ---------------------------------------------------------------- the queue


class Waiting:
    """A writer's place in a session's queue (see `turns`): its ticket, and how fast the queue moves."""

    def __init__(self, ctx: Context, session_id: str, owner: str | None, what: str) -> None:
        self.ctx, self.session_id, self.owner, self.what = ctx, session_id, owner, what
        self.ticket = 0  # 0: none held
        self.behind = False  # tickets were taken after this one (as the head last showed)
        self.lease_ms = int(ctx.settings.queue_lease.total_seconds() * 1000)
        self.pace = Pace(0.0, self.lease_ms / 1000)

    def until_turn(self, old: Item | None, retry: Retry) -> Plan[Position]:
        """Wait for a turn (taking a ticket first, and again if the one held was skipped), from the head
        `old` when known: the position to write at."""
        while True:
            if not self.ticket:
                old, retry.attempts = yield from self.take(retry.attempts)
            turned = yield from self.turn(old, retry.expectation)
            if turned is not None:
                return turned
            old = None

    def take(self, attempts: int) -> Plan[tuple[Item, int]]:
        """Take the next ticket; returns the head as it then was, and the attempt count so far."""
        while True:
            expr = Expr()
            now = self.ctx.now()
            started = self.ctx.monotonic()
            try:
                resp = yield turns.take_ticket(
                    self.ctx.sessions_table, self.session_id, guard(expr, now, self.owner), expr, now
                )
            except AwsError as err:
                if err.code == "ConditionalCheckFailedException":  # the session is not live for this caller
                    yield from live_head(self.ctx, self.session_id, err.response.get("Item"), self.owner)
                    raise SessionNotFound(self.session_id) from err
                if not contended(err):
                    raise
                attempts = yield from backoff(self.ctx, attempts, self.what)
                continue
            item = dict(resp["Attributes"])
            self.ticket = Queue.of(item).next
            known = self.ctx.turn_times.get(self.session_id)
            self.pace = Pace(known or 2 * (self.ctx.monotonic() - started), self.lease_ms / 1000)
            return item, attempts

    def turn(self, item: Item | None, expectation: Expectation) -> Plan[Position | None]:
        """Wait for this ticket's turn, from the head `item`: the position to write at in that turn; the
        position without a turn when the head is no longer as the caller expects (the write then fails as
        it should, with its other actions' outcomes); None when the ticket was skipped (take another).
        SessionNotFound when the session goes."""
        while True:
            head = yield from live_head(self.ctx, self.session_id, item, self.owner)
            if expectation.stale(head):
                return expectation.apply(Position.of(head))
            queue = Queue.of(item or {})
            if queue.served >= self.ticket or queue.next < self.ticket:  # skipped, or the session is a new one
                self.ticket = 0
                return None
            turn = turns.turn_of(queue, self.ticket, self.ctx.now(), self.lease_ms)
            if turn is not None:
                self.behind = queue.next > self.ticket
                self.pace.observe(self.ctx.monotonic(), queue.served)
                yield Learn(TURN_TIMES, self.session_id, self.pace.per_turn)
                return replace(Position.of(head), turn=turn)
            moved = self.pace.observe(self.ctx.monotonic(), queue.served)
            # waiting while the queue moves is a turn, not a backoff; a queue that stands still is contention
            yield Sleep(self.pace.wait(queue.ahead(self.ticket)), self.what, budgeted=not moved)
            item = yield from get_item(self.ctx.sessions_table, keys.head_key(self.session_id))

    def served(self, pos: Position, queued: bool) -> Position:
        """The position written at, once the write landed: the ticket held is spent, and the position
        remembers whether writers were queued behind (the next write of this store then queues at once)."""
        self.ticket = 0
        return replace(pos, crowded=self.behind if queued else pos.crowded)

    def leave(self) -> Plan[None]:
        """Give up a ticket still held (best effort: a ticket left behind is skipped after a lease)."""
        if self.ticket:
            ticket, self.ticket = self.ticket, 0
            with contextlib.suppress(AwsError):
                yield from turns.give_up(self.ctx.sessions_table, self.session_id, ticket)


# ---------------------------------------------------------------- the loop


def write_session(
    ctx: Context,
    session_id: str,
    owner: str | None,
    build: Callable[[Position], Actions],
    *,
    what: str,
    expect_seq: int | None = None,
    expect_version: int | None = None,
    landed: Callable[[Position], Plan[bool]] | None = None,
    expected: tuple[type[Outcome], ...] = (),
    prepare: Callable[[Position], Plan[None]] | None = None,
    queued: bool = False,
) -> Plan[tuple[Position, dict[str, Any]]]:
    """Write to a session whose head action (named HEAD in what `build` returns) is conditioned on a
    `Position`, from the cached position (or one read), until it lands or `Retry` raises. Returns the
    position written against and the response ({} when a resent request had landed already: `landed`).

    `expect_seq`/`expect_version`: the caller's expectation of the head (a Conflict once it no longer
    holds). `prepare(pos)` runs before each `build(pos)`. A `queued` write moves the session's position
    (`move_head`) and takes a turn in the head's queue once contention is real (`Retry.should_queue`).
    A write cancelled on another action raises the first of the `expected` outcomes whose action failed
    (`KeyClaimed`, `IndexMoved`, ...), or `Cancelled`."""
    expectation = Expectation(what, expect_seq, expect_version)
    pos = expectation.apply((yield from position(ctx, session_id, owner)))
    retry = Retry(ctx, session_id, owner, expectation, expected, landed)
    waiting = Waiting(ctx, session_id, owner, what)
    wait, old = queued and pos.crowded, None  # writers were queued when this store last wrote: queue at once
    try:
        while True:
            if wait:
                pos, wait, old = (yield from waiting.until_turn(old, retry)), False, None
            tried = yield from attempt(ctx, pos, build, prepare, what)
            if tried.response is not None:
                return waiting.served(pos, queued), tried.response
            step = yield from retry.after(pos, tried)
            if step.landed:
                return waiting.served(pos, queued), {}
            pos, old = step.pos, step.old
            wait = queued and step.old is not None and retry.should_queue(waiting, old)
    except Exception:
        yield from waiting.leave()
        raise
