"""Building blocks every DynamoDB plan uses: the context, reads, the session-head guard and touch,
transactions with their failure diagnosis, and backoff."""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from store.aws import keys
from store.aws.attrs import Expr, Item, item_size, n, s
from store.aws.calls import AwsError, Call, Parallel, Plan, Sleep
from store.aws.items import Head, head_from_item
from store.aws.keys import PK, SK
from store.aws.plans.transactions import HEAD, Actions, Outcome, cancellation, cancelled, condition_failed, transact
from store.deadlines import current_deadline
from store.errors import Conflict, PayloadTooLarge, SessionNotFound
from store.settings import Settings
from store.timeutil import epoch, expiry, iso, now_epoch

V = TypeVar("V")
T = TypeVar("T")

BATCH_GET_MAX = 100
BATCH_WRITE_MAX = 25
PARALLEL_REQUESTS = 8  # independent requests of one operation in flight at once


@dataclass(frozen=True)
class Position:
    """What the store knows of a session head without reading it: enough to write conditionally."""

    last_seq: int
    state_version: int
    retention: int | None
    owner: str = ""

    @staticmethod
    def of(head: Head) -> Position:
        ret = head.session.retention
        return Position(
            head.session.last_seq,
            head.session.state_version,
            int(ret.total_seconds()) if ret is not None else None,
            head.session.owner,
        )


class Lru(Generic[V]):
    """A bounded map, least recently used dropped first. Safe to share between threads (a long-lived
    Lambda container may touch many sessions)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: str, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def drop(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


class Positions(Lru[Position]):
    """The positions a store has seen, by session id."""


@dataclass
class Context:
    """Per-store data every plan needs: table names, settings, and the cache of known positions."""

    sessions_table: str
    messages_table: str
    settings: Settings = field(default_factory=Settings)
    bucket: str | None = None
    positions: Positions = field(init=False)
    trace_batches: Lru[int] = field(init=False)

    def __post_init__(self) -> None:
        self.positions = Positions(self.settings.position_cache_size)
        self.trace_batches = Lru(self.settings.position_cache_size)

    def now(self) -> datetime:
        return self.settings.clock()

    def remember(self, session_id: str, position: Position) -> None:
        self.positions.put(session_id, position)

    def forget(self, session_id: str) -> None:
        self.positions.drop(session_id)


# ---------------------------------------------------------------- reads


def get_item(table: str, key: Item, *, projection: Sequence[str] = ()) -> Plan[Item | None]:
    """A strongly consistent GetItem (of only the `projection` attributes, if named): the item, or None."""
    params: dict[str, Any] = {"TableName": table, "Key": key, "ConsistentRead": True}
    if projection:
        expr = Expr()
        params["ProjectionExpression"] = ", ".join(expr.name(a) for a in projection)
        params.update(expr.params())
    resp = yield Call("get_item", params)
    item = resp.get("Item")
    return dict(item) if item else None


def batch_get(ctx: Context, table: str, item_keys: Sequence[Item]) -> Plan[list[Item]]:
    """Strongly consistent BatchGetItem of any number of keys (chunks of 100), retrying unprocessed keys
    with backoff. Order of the result is unspecified."""
    out: list[Item] = []
    for start in range(0, len(item_keys), BATCH_GET_MAX):
        pending: dict[str, Any] = {
            table: {"Keys": list(item_keys[start : start + BATCH_GET_MAX]), "ConsistentRead": True}
        }
        attempt = 0
        while pending:
            resp = yield Call("batch_get_item", {"RequestItems": pending})
            out.extend(resp.get("Responses", {}).get(table, []))
            pending = resp.get("UnprocessedKeys") or {}
            if pending:
                attempt = yield from backoff(ctx, attempt, "BatchGetItem kept returning unprocessed keys")
    return out


def read_head(ctx: Context, session_id: str, owner: str | None) -> Plan[Head]:
    """The live head of a session for this caller; SessionNotFound otherwise. Refreshes the cached position."""
    item = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    return live_head(ctx, session_id, item, owner)


def live_head(ctx: Context, session_id: str, item: Item | None, owner: str | None) -> Head:
    """The head in `item` if it is live for `owner` (its position is remembered); SessionNotFound otherwise."""
    if item is None:
        ctx.forget(session_id)
        raise SessionNotFound(session_id)
    head = head_from_item(item)
    if not head.live(ctx.now(), owner):
        raise SessionNotFound(session_id)
    ctx.remember(session_id, Position.of(head))
    return head


def find_head(items: Sequence[Item], session_id: str) -> Item | None:
    """The head item of `session_id` among batch-read items."""
    pk = keys.session_pk(session_id)
    return next((i for i in items if i[keys.PK]["S"] == pk and i[keys.SK]["S"] == keys.HEAD), None)


# ---------------------------------------------------------------- the head guard and touch


def guard(expr: Expr, now: datetime, owner: str | None) -> str:
    """Condition: the head exists, is not being deleted, has not expired, and belongs to `owner` (if given)."""
    ttl = expr.name(keys.TTL)
    parts = [
        f"attribute_exists({expr.name(keys.PK)})",
        f"attribute_not_exists({expr.name('deleting')})",
        f"(attribute_not_exists({ttl}) OR {ttl} > {expr.value(n(now_epoch(now)))})",
    ]
    if owner is not None:
        parts.append(f"{expr.name('owner')} = {expr.value(s(owner))}")
    return " AND ".join(parts)


def at_position(expr: Expr, pos: Position, *, seq: bool = True, version: bool = False) -> str:
    """Condition: the head is where `pos` says (last_seq and/or state_version, and retention)."""
    parts = []
    if seq:
        parts.append(f"{expr.name('last_seq')} = {expr.value(n(pos.last_seq))}")
    if version:
        parts.append(f"{expr.name('state_version')} = {expr.value(n(pos.state_version))}")
    ret = expr.name("retention")
    parts.append(f"attribute_not_exists({ret})" if pos.retention is None else f"{ret} = {expr.value(n(pos.retention))}")
    return " AND ".join(parts)


def touch(expr: Expr, session_id: str, now: datetime, retention: int | None) -> list[str]:
    """SET clauses recording activity: updated_at, the by_owner sort key, and the renewed expiry."""
    stamp = iso(now)
    clauses = [
        f"{expr.name('updated_at')} = {expr.value(s(stamp))}",
        f"{expr.name(keys.GSI1SK)} = {expr.value(s(keys.owner_sort_key(stamp, session_id)))}",
    ]
    if retention is not None:
        ttl = epoch(expiry(now, timedelta(seconds=retention)))
        clauses.append(f"{expr.name(keys.TTL)} = {expr.value(n(ttl))}")
    return clauses


def head_update(
    ctx: Context,
    session_id: str,
    expr: Expr,
    condition: str,
    sets: list[str],
    adds: Sequence[str] = (),
    removes: Sequence[str] = (),
) -> dict[str, Any]:
    """A transaction Update of the session head (returns the old head when its condition fails)."""
    update = "SET " + ", ".join(sets)
    if adds:
        update += " ADD " + ", ".join(adds)
    if removes:
        update += " REMOVE " + ", ".join(removes)
    return {
        "Update": {
            "TableName": ctx.sessions_table,
            "Key": keys.head_key(session_id),
            "UpdateExpression": update,
            "ConditionExpression": condition,
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **expr.params(),
        }
    }


def touch_head(
    ctx: Context,
    session_id: str,
    owner: str | None,
    pos: Position,
    now: datetime,
    adds: Callable[[Expr], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The transaction Update recording activity on the head of a live session (for `owner`, if given)
    whose retention is as `pos` says, without moving its sequence or state version; `adds` builds ADD
    clauses (usage totals) with the update's own placeholders."""
    expr = Expr()
    condition = f"{guard(expr, now, owner)} AND {at_position(expr, pos, seq=False)}"
    sets = touch(expr, session_id, now, pos.retention)
    return head_update(ctx, session_id, expr, condition, sets, adds(expr) if adds else ())


def head_check(ctx: Context, session_id: str, expr: Expr, condition: str) -> dict[str, Any]:
    """A transaction ConditionCheck of the session head."""
    return {
        "ConditionCheck": {
            "TableName": ctx.sessions_table,
            "Key": keys.head_key(session_id),
            "ConditionExpression": condition,
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **expr.params(),
        }
    }


# ---------------------------------------------------------------- transactions


def check_sizes(ctx: Context, items: Sequence[Item], what: str) -> None:
    """PayloadTooLarge when any item exceeds the item limit or all together exceed the transaction limit."""
    total = 0
    for item in items:
        size = item_size(item)
        if size > ctx.settings.max_item_bytes:
            raise PayloadTooLarge(
                f"{what}: an item would be {size} bytes; DynamoDB's limit is {ctx.settings.max_item_bytes}"
            )
        total += size
    if total > ctx.settings.max_transaction_bytes:
        raise PayloadTooLarge(
            f"{what}: {total} bytes in one transaction; the limit is {ctx.settings.max_transaction_bytes}"
        )


def backoff(ctx: Context, attempt: int, what: str) -> Plan[int]:
    """Sleep with full jitter before retry `attempt + 1`; Conflict once the retries are spent (and, through
    `within_budget`, once the call's time budget is)."""
    if attempt >= ctx.settings.conflict_retries:
        raise Conflict(f"{what}: gave up after {attempt} retries under contention")
    cap = min(ctx.settings.backoff_cap, ctx.settings.backoff_base * (2 ** min(attempt, 16)))
    # backoff jitter, not a secret:
    yield Sleep(random.uniform(0, cap), what)  # nosec B311
    return attempt + 1


def within_budget(plan: Plan[T], budget: float) -> Plan[T]:
    """`plan`, run with a time budget for its retries: a backoff that would end more than `budget`
    seconds after the plan started (or after the enclosing `store.deadline`) is not slept; a Conflict is
    thrown into the plan in its place, so the plan cleans up as it does for any refusal. The whole call,
    however many loops it retries in, therefore waits out contention for at most `budget` seconds."""
    deadline = time.monotonic() + budget
    outer = current_deadline()  # a handler's deadline for everything in its request
    if outer is not None and outer < deadline:
        deadline, budget = outer, max(0.0, outer - time.monotonic())
    outcome: Any = None
    failure: BaseException | None = None
    while True:
        try:
            step = plan.throw(failure) if failure is not None else plan.send(outcome)
        except StopIteration as stop:
            result: T = stop.value
            return result
        failure = None
        if isinstance(step, Sleep) and time.monotonic() + step.seconds > deadline:
            failure = Conflict(f"{step.what}: gave up after {budget:g} s under contention; nothing more was written")
            continue
        try:
            outcome = yield step
        except GeneratorExit:
            plan.close()
            raise
        except Exception as exc:  # what the driver throws in: an AwsError, or a caller's stream failing
            failure = exc


def stale_head(ctx: Context, session_id: str, owner: str | None, old: Item | None) -> Plan[Head]:
    """After a head condition failed: the current head (from the failure, or read again), or
    SessionNotFound if the session is no longer live for this caller."""
    if old is None:
        old = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    return live_head(ctx, session_id, old, owner)


def position(ctx: Context, session_id: str, owner: str | None) -> Plan[Position]:
    """The cached position of a session, or one read from its head."""
    pos = ctx.positions.get(session_id)
    if pos is None:
        head = yield from read_head(ctx, session_id, owner)
        pos = Position.of(head)
    return pos


# ---------------------------------------------------------------- the write loop


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
) -> Plan[tuple[Position, dict[str, Any]]]:
    """Write to a session whose head action (named HEAD in what `build` returns) is conditioned on a
    `Position`: start from the cached position (or read it), and after losing a race refresh it and
    rebuild, unless the caller's expectation (`expect_seq`, `expect_version`) no longer holds
    (Conflict). A single Update runs as UpdateItem returning the new item; more run as one
    transaction. Returns the position written against and the response.

    Writes that must not be applied twice pass `landed(pos)`: when a condition fails on a request the
    SDK had to resend, an earlier attempt may have succeeded with its response lost; `landed` tells
    whether the write built for `pos` is already stored, and if so that is the result (response {}).

    A write cancelled on another action raises the first of the `expected` outcomes whose action failed
    (`KeyClaimed`, `IndexMoved`, ...), or `Cancelled`; so does a stale expectation, which still carries the
    other actions' outcomes (an append retried with its idempotency key replays from them)."""
    pos = yield from position(ctx, session_id, owner)
    pos = replace(
        pos,
        last_seq=pos.last_seq if expect_seq is None else expect_seq,
        state_version=pos.state_version if expect_version is None else expect_version,
    )
    attempt = 0
    while True:
        actions = build(pos)
        if HEAD not in actions.names:
            raise ValueError(f"{what}: a session write needs an action named {HEAD!r}")
        try:
            if len(actions) == 1 and "Update" in actions.requests[0]:
                resp = yield Call("update_item", {**actions.requests[0]["Update"], "ReturnValues": "ALL_NEW"})
            else:
                resp = yield transact(actions)
            return pos, resp
        except AwsError as err:
            if err.code == "ConditionalCheckFailedException":
                failed = condition_failed(HEAD, err)
            else:
                failed = cancelled(err, actions)
            if failed.failed(HEAD):
                if err.retried and landed is not None and (yield from landed(pos)):
                    return pos, {}
                head = yield from stale_head(ctx, session_id, owner, failed.old(HEAD))
                pos = Position.of(head)
                if expect_seq is not None and pos.last_seq != expect_seq:
                    stale = f"expected_seq {expect_seq} is stale; the session is at {pos.last_seq}"
                    raise cancellation(failed, what, expected, f"{what}: {stale}") from None
                if expect_version is not None and pos.state_version != expect_version:
                    stale = f"expected_version {expect_version} is stale; the state is at {pos.state_version}"
                    raise cancellation(failed, what, expected, f"{what}: {stale}") from None
            elif not failed.conflicted():
                raise cancellation(failed, what, expected) from None
            attempt = yield from backoff(ctx, attempt, what)


def batch_delete(ctx: Context, table: str, item_keys: Sequence[Item]) -> Plan[None]:
    """Delete any number of items with BatchWriteItem, 25 a request and up to PARALLEL_REQUESTS requests
    at once; unprocessed items are resubmitted, with backoff, until none is left."""
    pending = [{"DeleteRequest": {"Key": k}} for k in item_keys]
    attempt = 0
    while pending:
        chunks = [pending[i : i + BATCH_WRITE_MAX] for i in range(0, len(pending), BATCH_WRITE_MAX)]
        pending = []
        for start in range(0, len(chunks), PARALLEL_REQUESTS):
            calls = tuple(
                Call("batch_write_item", {"RequestItems": {table: chunk}})
                for chunk in chunks[start : start + PARALLEL_REQUESTS]
            )
            responses = yield Parallel(calls)
            for resp in responses:
                pending.extend((resp.get("UnprocessedItems") or {}).get(table, []))
        if pending:
            attempt = yield from backoff(ctx, attempt, "BatchWriteItem kept returning unprocessed items")


GROWING_LIMIT_MAX = 1000


def query(
    params: dict[str, Any],
    *,
    limit: int | None = None,
    keep: Callable[[Item], bool] | None = None,
    growing: bool = False,
) -> Plan[list[Item]]:
    """Run a Query page after page until `limit` kept items are collected or the results end. With
    `growing` (a filtered Query), each page evaluates twice as many items as the one before, from the
    Query's `Limit`: a dense filter reads little more than it keeps, a sparse one takes few requests."""
    out: list[Item] = []
    params = dict(params)
    while True:
        resp = yield Call("query", params)
        out.extend(i for i in resp.get("Items", []) if keep is None or keep(i))
        if limit is not None and len(out) >= limit:
            return out[:limit]
        lek = resp.get("LastEvaluatedKey")
        if not lek:
            return out
        params["ExclusiveStartKey"] = lek
        if growing and "Limit" in params:
            params["Limit"] = min(GROWING_LIMIT_MAX, 2 * params["Limit"])


def partition(table: str, hash_key: str, value: str, *, keys_of: str | None = None) -> Plan[list[Item]]:
    """Every item of one partition, strongly consistent, page after page; with `keys_of` (the table's
    sort key name) only each item's key is read."""
    items: list[Item] = yield from query(partition_query(table, hash_key, value, keys_of=keys_of))
    return items


def partition_query(table: str, hash_key: str, value: str, *, keys_of: str | None = None) -> dict[str, Any]:
    """The Query parameters of `partition`, for plans that page through it themselves."""
    expr = Expr()
    params: dict[str, Any] = {
        "TableName": table,
        "ConsistentRead": True,
        "KeyConditionExpression": f"{expr.name(hash_key)} = {expr.value(s(value))}",
    }
    if keys_of is not None:
        params["ProjectionExpression"] = f"{expr.name(hash_key)}, {expr.name(keys_of)}"
    return {**params, **expr.params()}


def out_of_time(reserve: float) -> bool:
    """True when less than `reserve` seconds are left before the enclosing `store.deadline` (never
    outside one)."""
    end = current_deadline()
    return end is not None and time.monotonic() > end - reserve


def partition_prefix(ctx: Context, session_id: str, prefix: str) -> Plan[list[Item]]:
    """Items of a session's partition whose sort key starts with `prefix`, strongly consistent."""
    expr = Expr()
    items: list[Item] = yield from query(
        {
            "TableName": ctx.sessions_table,
            "ConsistentRead": True,
            "KeyConditionExpression": f"{expr.name(PK)} = {expr.value(s(keys.session_pk(session_id)))} AND "
            f"begins_with({expr.name(SK)}, {expr.value(s(prefix))})",
            **expr.params(),
        }
    )
    return items
