"""Building blocks every DynamoDB plan uses: the context, reads, the session-head guard and touch,
transactions with their failure diagnosis, and the retry rules (the write loop is `writes`).

The retry rules (docs/reliability.md, "Contention"):
- a write that lost a race to another writer's progress (a position, an index, a batch number moved)
  retries at once from what the failure returned: `again`, no sleep;
- a writer that keeps losing a session's position takes a turn in the head's queue (`turns`);
- only contention that retrying at once would meet again (a TransactionConflict, throttling) sleeps,
  with full-jitter backoff: `backoff`, counted against `Settings.retry_budget`;
- anything the input caused is raised at once."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from store.aws import keys
from store.aws.attrs import Expr, Item, action, item_size, n, s
from store.aws.calls import AwsError, Call, Learn, Parallel, Plan, Sleep, Step
from store.aws.items import PART, PINNED, SEED, Head, head_from_item
from store.aws.keys import PK, SK
from store.aws.plans import turns
from store.aws.plans.transactions import Actions, Failed, cancelled, contended, transact
from store.aws.plans.turns import Turn
from store.core import rules
from store.core.deadlines import current_deadline
from store.core.lru import Lru
from store.core.steps import PASS
from store.core.timeutil import epoch, expiry, iso, now_epoch
from store.core.validation import new_id
from store.errors import Conflict, PayloadTooLarge, SessionNotFound
from store.models import TokenUsage
from store.settings import Settings

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
    compaction_seq: int | None = None
    turn: Turn | None = None  # the queue turn a write at this position is made in (never cached)
    crowded: bool = False  # writers were queued behind the last write here: the next one queues at once
    part: str | None = None  # the head's `part` (None: the transcript is in the session id's partition)
    pinned: int = 0  # the last message a copy out of the session still takes (0: none)

    @staticmethod
    def of(head: Head) -> Position:
        ret = head.session.retention
        return Position(
            head.session.last_seq,
            head.session.state_version,
            int(ret.total_seconds()) if ret is not None else None,
            head.session.owner,
            head.session.compaction_seq,
            part=head.part_attr,
            pinned=head.pinned,
        )

    def messages_of(self, session_id: str) -> str:
        """The messages-table partition a write at this position puts the session's messages in."""
        return self.part or session_id


class Positions(Lru[Position]):
    """The positions a store has seen, by session id."""


def _full_jitter(cap: float) -> float:
    """A sleep drawn uniformly from [0, cap] (backoff jitter, not a secret)."""
    return random.uniform(0, cap)  # nosec B311


@dataclass
class Context:
    """Per-store data every plan needs: table names, settings, and the cache of known positions."""

    sessions_table: str
    messages_table: str
    settings: Settings = field(default_factory=Settings)
    bucket: str | None = None
    memories_table: str | None = None
    positions: Positions = field(init=False)
    trace_batches: Lru[int] = field(init=False)
    turn_times: Lru[float] = field(init=False)  # how long one turn of a session's queue took, as last seen
    index_dimensions: Lru[int] = field(init=False)  # a table's vector index's dimensions, by table name
    # what a plan knows of the world besides the responses it receives (a test replays a plan with its own)
    monotonic: Callable[[], float] = field(default=time.monotonic, repr=False)  # seconds, for time spent
    deadline: Callable[[], float | None] = field(default=current_deadline, repr=False)  # the enclosing one
    jitter: Callable[[float], float] = field(default=_full_jitter, repr=False)  # a backoff's sleep under a cap
    new_id: Callable[[], str] = field(default=new_id, repr=False)  # ids of tokens, writes and objects

    def __post_init__(self) -> None:
        self.positions = Positions(self.settings.position_cache_size)
        self.trace_batches = Lru(self.settings.position_cache_size)
        self.turn_times = Lru(self.settings.position_cache_size)
        self.index_dimensions = Lru(16)

    def now(self) -> datetime:
        return self.settings.clock()


POSITIONS, TRACE_BATCHES, TURN_TIMES = "positions", "trace_batches", "turn_times"  # the caches a plan reads
INDEX_DIMENSIONS = "index_dimensions"


def remember(session_id: str, position: Position) -> Plan[None]:
    """Say that the session is at `position` (its turn aside): the backend keeps it for the next write."""
    yield Learn(POSITIONS, session_id, replace(position, turn=None))


def forget(session_id: str) -> Plan[None]:
    """Say that what is known of the session's position no longer holds."""
    yield Learn(POSITIONS, session_id)


# ---------------------------------------------------------------- reads


def get_item(table: str, key: Item, *, projection: Sequence[str] = ()) -> Plan[Item | None]:
    """A strongly consistent GetItem (of only the `projection` attributes, if named): the item, or None."""
    resp = yield get_item_call(table, key, projection=projection)
    item = resp.get("Item")
    return dict(item) if item else None


def get_item_call(table: str, key: Item, *, projection: Sequence[str] = ()) -> Call:
    """`get_item`'s call, for plans that make it beside others (`Parallel`)."""
    params: dict[str, Any] = {"TableName": table, "Key": key, "ConsistentRead": True}
    if projection:
        expr = Expr()
        params["ProjectionExpression"] = ", ".join(expr.name(a) for a in projection)
        params.update(expr.params())
    return Call("get_item", params)


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


def read_head(ctx: Context, session_id: str, owner: str | None, *, copying_ok: bool = False) -> Plan[Head]:
    """The live head of a session for this caller; SessionNotFound otherwise, and a Conflict while its transcript
    is still being copied in unless `copying_ok` (`live_head`). Refreshes the cached position."""
    item = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    return (yield from live_head(ctx, session_id, item, owner, copying_ok=copying_ok))


def live_head(
    ctx: Context, session_id: str, item: Item | None, owner: str | None, *, copying_ok: bool = False
) -> Plan[Head]:
    """The head in `item` if it is live for `owner` (its position is remembered); SessionNotFound otherwise.
    A session whose transcript is still being copied in (a long fork's or rewind's: `Seed`) can be looked at
    and deleted only: anything else is a retryable Conflict (`rules.still_copying`), unless `copying_ok`."""
    if item is None:
        yield from forget(session_id)
        raise SessionNotFound(session_id)
    head = head_from_item(item)
    if not head.live(ctx.now(), owner):
        raise SessionNotFound(session_id)
    if head.seed is not None and not copying_ok:
        raise rules.still_copying(session_id, head.seed.done, head.seed.through)
    yield from remember(session_id, Position.of(head))
    return head


def find_head(items: Sequence[Item], session_id: str) -> Item | None:
    """The head item of `session_id` among batch-read items."""
    pk = keys.session_pk(session_id)
    return next((i for i in items if i[keys.PK]["S"] == pk and i[keys.SK]["S"] == keys.HEAD), None)


# ---------------------------------------------------------------- the head guard and touch


def guard(expr: Expr, now: datetime, owner: str | None) -> str:
    """Condition: the head exists, is not being deleted, has not expired, is not being copied into (`Seed`),
    and belongs to `owner` (if given)."""
    ttl = expr.name(keys.TTL)
    parts = [
        f"attribute_exists({expr.name(keys.PK)})",
        f"attribute_not_exists({expr.name('deleting')})",
        f"attribute_not_exists({expr.name(SEED)})",
        f"(attribute_not_exists({ttl}) OR {ttl} > {expr.value(n(now_epoch(now)))})",
    ]
    if owner is not None:
        parts.append(f"{expr.name('owner')} = {expr.value(s(owner))}")
    return " AND ".join(parts)


def at_position(expr: Expr, pos: Position, *, seq: bool = True, version: bool = False) -> str:
    """Condition: the head is where `pos` says (last_seq and/or state_version, and retention). A write
    that moves the position (`seq` or `version`) also waits its turn: see `turns.condition`."""
    parts = []
    if seq:
        parts.append(f"{expr.name('last_seq')} = {expr.value(n(pos.last_seq))}")
    if version:
        parts.append(f"{expr.name('state_version')} = {expr.value(n(pos.state_version))}")
    if seq or version:
        parts.append(turns.condition(expr, pos.turn))
    parts.append(expr.as_read("retention", pos.retention))
    parts.append(in_part(expr, pos.part))
    return " AND ".join(parts)


def unpinned(expr: Expr, seq: int) -> str:
    """Condition: no copy out of the session takes message `seq` (0: no copy out of it at all). The one check
    a write that changes messages already there makes of forks (see `rules.check_unpinned`)."""
    name = expr.name(PINNED)
    if seq == 0:
        return f"attribute_not_exists({name})"
    return f"(attribute_not_exists({name}) OR {name} < {expr.value(n(seq))})"


def in_part(expr: Expr, part: str | None) -> str:
    """Condition: the session's transcript is (still) in partition `part` (None: the session id's own). A
    rewind or a restore moves it: a write built for the old partition then fails and is built again."""
    return expr.as_read(PART, part)


EDITS = "edits"  # on a head: how many writes have changed what a fork takes of the session (pops, artifact deletes)


def count_edit(expr: Expr) -> str:
    """The ADD clause counting one edit of what is already in the session (a pop, an artifact deleted): a fork
    taken meanwhile starts over, while appends and saves, which leave its part alone, never make it."""
    return f"{expr.name(EDITS)} {expr.value(n(1))}"


def usage_adds(expr: Expr, delta: TokenUsage) -> list[str]:
    """ADD clauses applying a usage delta to the head's totals."""
    return [f"{expr.name('usage_' + f)} {expr.value(n(v))}" for f, v in delta.numbers().items()]


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
    deletes: Sequence[str] = (),
) -> dict[str, Any]:
    """A transaction Update of the session head (returns the old head when its condition fails)."""
    update = "SET " + ", ".join(sets)
    if adds:
        update += " ADD " + ", ".join(adds)
    if removes:
        update += " REMOVE " + ", ".join(removes)
    if deletes:
        update += " DELETE " + ", ".join(deletes)
    return action(
        "Update", ctx.sessions_table, keys.head_key(session_id), expr, update=update, condition=condition, old=True
    )


def move_head(
    ctx: Context,
    session_id: str,
    owner: str | None,
    pos: Position,
    now: datetime,
    expr: Expr,
    sets: Sequence[str],
    *,
    version: bool = False,
    adds: Sequence[str] = (),
    removes: Sequence[str] = (),
    conditions: Sequence[str] = (),
) -> dict[str, Any]:
    """The transaction Update of a write that moves the head from `pos` (its sequence, and with `version`
    its state version): conditional on the session being live for `owner`, at `pos`, in the write's
    turn, and on `conditions`; with the activity touch, `sets` (which move the position) and the turn's
    own bookkeeping."""
    condition = " AND ".join([guard(expr, now, owner), at_position(expr, pos, seq=True, version=version), *conditions])
    # the queue's clock is the time of the write itself, not of the call's start (which a wait may precede)
    clauses = [*touch(expr, session_id, now, pos.retention), *sets, *turns.sets(expr, pos.turn, ctx.now())]
    return head_update(ctx, session_id, expr, condition, clauses, adds, removes, turns.deletes(expr, pos.turn))


def touch_head(
    ctx: Context,
    session_id: str,
    owner: str | None,
    pos: Position,
    now: datetime,
    adds: Callable[[Expr], Sequence[str]] | None = None,
    conditions: Callable[[Expr], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The transaction Update recording activity on the head of a live session (for `owner`, if given)
    whose retention is as `pos` says, without moving its sequence or state version; `adds` builds ADD
    clauses (usage totals) and `conditions` more conditions, with the update's own placeholders."""
    expr = Expr()
    condition = " AND ".join(
        [guard(expr, now, owner), at_position(expr, pos, seq=False), *(conditions(expr) if conditions else ())]
    )
    sets = touch(expr, session_id, now, pos.retention)
    return head_update(ctx, session_id, expr, condition, sets, adds(expr) if adds else ())


def head_check(ctx: Context, session_id: str, expr: Expr, condition: str) -> dict[str, Any]:
    """A transaction ConditionCheck of the session head."""
    return action("ConditionCheck", ctx.sessions_table, keys.head_key(session_id), expr, condition=condition, old=True)


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
    """Sleep with full jitter before retry `attempt + 1`, for contention that retrying at once would meet
    again (a TransactionConflict, throttling, unprocessed batch items). The sleep counts toward the call's
    retry budget (`waits_within`); Conflict once the retries are spent."""
    if attempt >= ctx.settings.conflict_retries:
        raise Conflict(f"{what}: gave up after {attempt} retries under contention")
    cap = min(ctx.settings.backoff_cap, ctx.settings.backoff_base * (2 ** min(attempt, 16)))
    yield Sleep(ctx.jitter(cap), what)
    return attempt + 1


def again(ctx: Context, attempt: int, what: str) -> Plan[int]:
    """Retry at once, without sleeping: the write lost a race to another writer's progress and the failure
    said where things are now. Conflict once the retries are spent; a call past its deadline stops here."""
    if attempt >= ctx.settings.conflict_retries:
        raise Conflict(f"{what}: gave up after {attempt} retries under contention")
    yield Sleep(0.0, what)
    return attempt + 1


def settle(ctx: Context, actions: Actions, what: str) -> Plan[Refused | None]:
    """Commit `actions` in one transaction, backing off and trying again while other requests get in its
    way (contention, throttling; within the call's retry budget): None once it committed, else how its
    actions fared when a condition failed (`Refused`), for the caller to decide."""
    attempt = 0
    while True:
        try:
            yield transact(actions, ctx.new_id())
            return None
        except AwsError as err:
            failed = None if contended(err) else cancelled(err, actions)
            if failed is not None and not failed.conflicted():
                return Refused(failed, err)
            attempt = yield from backoff(ctx, attempt, what)


@dataclass(frozen=True)
class Refused:
    """A transaction a condition refused: how each named action fared, and the error (a cause to chain)."""

    failed: Failed
    cause: AwsError


def waits_within(ctx: Context, budget: float) -> Callable[[Step | Learn], Any]:
    """What bounds a plan's waiting (a `relay` handler, for the backend). Its backoffs (budgeted sleeps) may
    add up to `budget` seconds; one that would go past that, and any wait or retry after the enclosing
    `store.deadline` (or one that would end after it), is refused: a Conflict is thrown into the plan in its
    place, so the plan cleans up as it does for any refusal. Requests, and waits for a turn while other
    writers make progress, do not count against `budget`: the call waits out contention for at most
    `budget` seconds, and the deadline bounds it whole."""
    outer = ctx.deadline()  # a handler's deadline for everything in its request
    started = ctx.monotonic()
    slept = 0.0

    def bound(step: Step | Learn) -> Any:
        nonlocal slept
        if not isinstance(step, Sleep):
            return PASS
        if outer is not None and ctx.monotonic() + step.seconds > outer:
            spent = ctx.monotonic() - started
            return Conflict(
                f"{step.what}: gave up after {spent:.2g} s under contention (the call's deadline); "
                "nothing more was written"
            )
        if step.budgeted and slept + step.seconds > budget:
            return Conflict(f"{step.what}: gave up after {budget:g} s under contention; nothing more was written")
        if step.budgeted:
            slept += step.seconds
        return PASS if step.seconds > 0 else None

    return bound


def stale_head(ctx: Context, session_id: str, owner: str | None, old: Item | None) -> Plan[Head]:
    """After a head condition failed: the current head (from the failure, or read again), or
    SessionNotFound if the session is no longer live for this caller."""
    if old is None:
        old = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    return (yield from live_head(ctx, session_id, old, owner))


def position(ctx: Context, session_id: str, owner: str | None) -> Plan[Position]:
    """The cached position of a session, or one read from its head."""
    pos = ctx.positions.get(session_id)
    if pos is None:
        head = yield from read_head(ctx, session_id, owner)
        pos = Position.of(head)
    return pos


def write_if(method: str, params: dict[str, Any]) -> Plan[bool]:
    """Make one conditional write (`put_item`, `update_item` or `delete_item`): True when it was made, False
    when its condition did not hold (nothing written); any other failure is raised."""
    try:
        yield Call(method, params)
    except AwsError as err:
        if err.code != "ConditionalCheckFailedException":
            raise
        return False
    return True


def batch_delete(ctx: Context, table: str, item_keys: Sequence[Item], reserve: float | None = None) -> Plan[bool]:
    """Delete any number of items (`batch_write`)."""
    return (yield from batch_write(ctx, table, [{"DeleteRequest": {"Key": k}} for k in item_keys], reserve))


def batch_write(ctx: Context, table: str, writes: Sequence[Item], reserve: float | None = None) -> Plan[bool]:
    """Make any number of writes (each a BatchWriteItem `PutRequest` or `DeleteRequest`), 25 a request and up
    to PARALLEL_REQUESTS requests at once; unprocessed ones are resubmitted, with backoff, until none is left
    (True). With a `reserve`, it stops between rounds (False) once less than that is left before the
    enclosing `store.deadline` (the first round always goes: a caller short of time still makes progress)."""
    pending = list(writes)
    attempt = 0
    while pending:
        chunks = [pending[i : i + BATCH_WRITE_MAX] for i in range(0, len(pending), BATCH_WRITE_MAX)]
        pending = []
        for start in range(0, len(chunks), PARALLEL_REQUESTS):
            if reserve is not None and (start or attempt) and out_of_time(ctx, reserve):
                return False
            calls = tuple(
                Call("batch_write_item", {"RequestItems": {table: chunk}})
                for chunk in chunks[start : start + PARALLEL_REQUESTS]
            )
            responses = yield Parallel(calls)
            for resp in responses:
                pending.extend((resp.get("UnprocessedItems") or {}).get(table, []))
        if pending:
            attempt = yield from backoff(ctx, attempt, "BatchWriteItem kept returning unprocessed items")
    return True


GROWING_LIMIT_MAX = 1000


def query(
    params: dict[str, Any],
    *,
    limit: int | None = None,
    keep: Callable[[Item], bool] | None = None,
    expand: Callable[[Item], list[Item]] | None = None,
    growing: bool = False,
    first: dict[str, Any] | None = None,
) -> Plan[list[Item]]:
    """Run a Query page after page until `limit` kept items are collected or the results end (`expand`: what
    each item read stands for, counted instead of the item). With
    `growing` (a filtered Query), each page evaluates twice as many items as the one before, from the
    Query's `Limit`: a dense filter reads little more than it keeps, a sparse one takes few requests. `first`:
    the answer to the first page, already read (beside another call)."""
    out: list[Item] = []
    params = dict(params)
    while True:
        resp = first if first is not None else (yield Call("query", params))
        first = None
        found = [i for i in resp.get("Items", []) if keep is None or keep(i)]
        out.extend(found if expand is None else [m for i in found for m in expand(i)])
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


def out_of_time(ctx: Context, reserve: float) -> bool:
    """True when less than `reserve` seconds are left before the enclosing `store.deadline` (never
    outside one)."""
    end = ctx.deadline()
    return end is not None and ctx.monotonic() > end - reserve


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
