"""Turns: a first-come, first-served queue on a session head, for writers that keep losing its races.

Writes that move a session's position (its last sequence number or its state version: appends,
`save_state`, `save_full`, `pop_message`) are conditional on the position they were built for. A
writer that loses such a race learns the new head from the failure and retries at once: somebody
else just made progress. Retrying at once alone is not fair: the writer that just won is first to
build on the new head, so under many writers the same ones keep winning and others lose without
bound. So a writer that loses twice takes a ticket instead, and writers are then served in ticket order:

- The head holds the queue: `queue_next` (the last ticket taken), `queue_served` (the last ticket
  served), `queue_at` (when the position last moved, epoch milliseconds) and `queue_gone` (tickets
  given up by their holders).
- A write without a ticket holds only while the queue is empty (`queue_next = queue_served`, or no
  queue at all), so it cannot overtake a waiting writer.
- Ticket t's holder may write once every ticket between `queue_served` and t is gone (it is at the
  front); its write is conditional on `queue_served` being what it saw, and moves it to t.
- While it waits it sleeps about as long as the writers ahead of it need, then reads the head.
- A ticket whose holder died (a Lambda timed out) is skipped once the position has not moved for
  `Settings.queue_lease`; a holder that gives up (a deadline, an error) marks its ticket gone.

The queue only decides who may write next: every write is still conditional on the exact position,
so a clock that is off or a holder that was skipped can cost fairness, never correctness. An
uncontended session never has a queue, and no write pays a request for it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, get_int, n
from store.aws.calls import Call, Plan

NEXT = "queue_next"
SERVED = "queue_served"
AT = "queue_at"
GONE = "queue_gone"

LOSSES_BEFORE_QUEUE = 2  # position races lost in a row (each retried at once) before a writer takes a ticket


def millis(now: datetime) -> int:
    """`now` in epoch milliseconds (the unit of `queue_at`)."""
    return int(now.timestamp() * 1000)


@dataclass(frozen=True)
class Queue:
    """The queue as one head item showed it."""

    next: int
    served: int
    at: int
    gone: frozenset[int]

    @staticmethod
    def of(item: Item) -> Queue:
        gone = item.get(GONE, {}).get("NS", [])
        return Queue(get_int(item, NEXT), get_int(item, SERVED), get_int(item, AT), frozenset(int(g) for g in gone))

    @property
    def empty(self) -> bool:
        """No ticket is waiting: a write without one may go."""
        return self.next == self.served

    def ahead(self, ticket: int) -> int:
        """How many live tickets are before `ticket`."""
        return sum(1 for t in range(self.served + 1, ticket) if t not in self.gone)

    def stalled(self, now: datetime, lease_ms: int) -> bool:
        """The position has not moved for a lease: the tickets ahead are taken to be dead."""
        return millis(now) - self.at > lease_ms


@dataclass(frozen=True)
class Turn:
    """The right to write as ticket `ticket`: conditional on the queue being at `served`, passing the gone
    tickets `passed` (the front, or a stalled queue skipped)."""

    ticket: int
    served: int
    passed: frozenset[int]


def turn_of(queue: Queue, ticket: int, now: datetime, lease_ms: int) -> Turn | None:
    """The turn of `ticket` in `queue`, or None while live tickets are ahead of it."""
    if queue.ahead(ticket) and not queue.stalled(now, lease_ms):
        return None
    passed = frozenset(t for t in queue.gone if queue.served < t < ticket)
    return Turn(ticket, queue.served, passed)


def condition(expr: Expr, turn: Turn | None) -> str:
    """The queue's part of a positioned write's condition: without a turn, no ticket is waiting; with
    one, the queue is where the turn saw it."""
    if turn is None:
        return f"(attribute_not_exists({expr.name(NEXT)}) OR {expr.name(NEXT)} = {expr.name(SERVED)})"
    return f"{expr.name(SERVED)} = {expr.value(n(turn.served))}"


def sets(expr: Expr, turn: Turn | None, now: datetime) -> list[str]:
    """SET clauses of a positioned write: the position moved now, and a turn's ticket is served."""
    out = [f"{expr.name(AT)} = {expr.value(n(millis(now)))}"]
    if turn is not None:
        out.append(f"{expr.name(SERVED)} = {expr.value(n(turn.ticket))}")
    return out


def deletes(expr: Expr, turn: Turn | None) -> list[str]:
    """DELETE clauses of a positioned write: the gone tickets its turn passed."""
    if turn is None or not turn.passed:
        return []
    return [f"{expr.name(GONE)} {expr.value({'NS': [str(t) for t in sorted(turn.passed)]})}"]


def take_ticket(table: str, session_id: str, live: str, expr: Expr, now: datetime) -> Call:
    """The UpdateItem taking the next ticket of a live session's queue (`live`: the guard condition built
    with `expr`), returning the whole new head."""
    stamp = expr.value(n(millis(now)))
    return Call(
        "update_item",
        {
            "TableName": table,
            "Key": keys.head_key(session_id),
            "UpdateExpression": f"ADD {expr.name(NEXT)} {expr.value(n(1))} "
            f"SET {expr.name(SERVED)} = if_not_exists({expr.name(SERVED)}, {expr.value(n(0))}), "
            f"{expr.name(AT)} = if_not_exists({expr.name(AT)}, {stamp})",
            "ConditionExpression": live,
            "ReturnValues": "ALL_NEW",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **expr.params(),
        },
    )


def give_up(table: str, session_id: str, ticket: int) -> Plan[Any]:
    """Mark `ticket` gone (its holder stopped waiting), so the writers behind it need not wait for it."""
    expr = Expr()
    response = yield Call(
        "update_item",
        {
            "TableName": table,
            "Key": keys.head_key(session_id),
            "UpdateExpression": f"ADD {expr.name(GONE)} {expr.value({'NS': [str(ticket)]})}",
            "ConditionExpression": f"attribute_exists({expr.name(keys.PK)})",
            **expr.params(),
        },
    )
    return response


class Pace:
    """How long one turn takes, as a waiting writer sees the queue move: first what its store saw last
    time (or two of its own round trips: the front's read and write), then the time per ticket served
    between its reads."""

    def __init__(self, per_turn: float, cap: float) -> None:
        self.per_turn = max(0.001, per_turn)
        self.cap = cap  # the longest one wait sleeps (a lease: a writer much later for its turn is skipped)
        self._seen: tuple[float, int] | None = None

    def observe(self, at: float, served: int) -> bool:
        """Record that the queue was at `served` at monotonic time `at`; True when it moved since the last
        observation (or this is the first)."""
        if self._seen is None:
            self._seen = (at, served)
            return True
        then, before = self._seen
        if served <= before:
            return False
        self.per_turn = 0.5 * self.per_turn + 0.5 * (at - then) / (served - before)
        self._seen = (at, served)
        return True

    def wait(self, ahead: int) -> float:
        """How long to sleep before looking again, with `ahead` live tickets before this one."""
        # half the expected wait while far back (a writer asleep when its turn comes holds up everyone behind
        # it), then short looks once next: the turn ahead may be ending
        share = 0.1 if ahead <= 1 else 0.5 * (ahead - 1)
        return min(self.cap, max(0.0005, self.per_turn * share))
