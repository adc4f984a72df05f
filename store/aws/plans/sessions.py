"""Plans for session heads: create, get, list, update and delete (with its cascade)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, Item, boolean, n, s
from store.aws.calls import AwsError, Call, Plan
from store.aws.items import PART, PIN_PREFIX, SEED, Head, head_from_item, head_item, metadata_attrs
from store.aws.plans.base import (
    Context,
    Position,
    again,
    backoff,
    batch_delete,
    forget,
    get_item,
    guard,
    head_update,
    out_of_time,
    partition,
    remember,
    touch,
    write_if,
)
from store.aws.plans.base import query as run_query
from store.aws.plans.branches import all_branches
from store.aws.plans.copies import finish_copy, unpin
from store.aws.plans.objects import delete_objects, delete_prefix
from store.aws.plans.payloads import REF
from store.aws.plans.transactions import HEAD, Actions, cancelled, transact
from store.aws.plans.writes import write_session
from store.conversation.sessions import INTERNAL, UNDER
from store.core import codec
from store.core import cursor as cursors
from store.core.timeutil import epoch, expiry, iso, now_epoch
from store.errors import SessionExists
from store.models import Page, Session
from store.requests import UNSET, CreateSession, DeleteSession, GetSession, ListSessions, UpdateSession

DELETE_GRACE = timedelta(hours=1)


def create_session(ctx: Context, request: CreateSession) -> Plan[Session]:
    """Create a session head and its owner-index entry in one transaction. An id held by a session that
    has expired or whose deletion was interrupted is purged first, so nothing old is ever found."""
    owner, session_id, title = request.owner, request.session_id, request.title
    model, metadata, retention = request.model, request.metadata, request.retention
    made: list[Session] = []

    def head(now: datetime) -> Item:
        expires = expiry(now, retention) if retention is not None else None
        session = Session(
            id=session_id,
            owner=owner,
            title=title,
            model=model,
            metadata=metadata,
            created_at=now,
            updated_at=now,
            expires_at=expires,
            retention=retention,
        )
        made[:] = [session]
        return head_item(session, epoch(expires) if expires else None)

    yield from claim(ctx, session_id, owner, head, lambda old: head_from_item(old).session == made[0])
    yield from remember(session_id, Position(0, 0, int(retention.total_seconds()) if retention else None, owner))
    return made[0]


def claim(
    ctx: Context, session_id: str, owner: str, head: Callable[[datetime], Item], mine: Callable[[Item], bool]
) -> Plan[None]:
    """Put a new session's head (`head(now)`, built anew for each attempt) and its owner-index entry in one
    transaction. SessionExists when the id holds a live session; one that has expired or whose deletion was
    interrupted is purged first. A head that `mine` recognises is this call's own write, resent by the SDK
    after its response was lost."""
    attempt = 0
    while True:
        now = ctx.now()
        expr = Expr()
        put = {
            "Put": {
                "TableName": ctx.sessions_table,
                "Item": head(now),
                "ConditionExpression": f"attribute_not_exists({expr.name(keys.PK)})",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                **expr.params(),
            }
        }
        index = {
            "Put": {
                "TableName": ctx.sessions_table,
                "Item": {**keys.owner_index_key(owner, session_id), "created_at": s(iso(now))},
            }
        }
        actions = Actions(head=put, owner_index=index)
        try:
            yield transact(actions, ctx.new_id())
        except AwsError as err:
            failed = cancelled(err, actions)
            if failed.failed(HEAD):
                old = failed.old(HEAD) or (yield from get_item(ctx.sessions_table, keys.head_key(session_id)))
                if old is not None:
                    if err.retried and mine(old):
                        return  # our own write, resent by the SDK after its response was lost
                    found = head_from_item(old)
                    if found.live(now, None):
                        raise SessionExists(session_id) from err
                    yield from purge(ctx, session_id, found.session.owner, head=old)
                attempt = yield from again(ctx, attempt, "create_session")  # the expired one is gone
                continue
            if not failed.conflicted():
                raise
            attempt = yield from backoff(ctx, attempt, "create_session")
            continue
        return


def get_session(ctx: Context, request: GetSession) -> Plan[Session | None]:
    """The session, or None when it is absent for this caller."""
    session_id, owner = request.session_id, request.owner
    item = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    if item is None:
        return None
    head = head_from_item(item)
    return head.session if head.live(ctx.now(), owner) else None


def list_sessions(ctx: Context, request: ListSessions) -> Plan[Page[Session]]:
    """One owner's live sessions, most recently updated first, through the by_owner index."""
    heads, next_cursor = yield from list_heads(ctx, request)
    return Page[Session](items=[h.session for h in heads], next_cursor=next_cursor)


def list_heads(ctx: Context, request: ListSessions) -> Plan[tuple[list[Head], str | None]]:
    """`list_sessions`'s page as the heads it read (where each transcript is, too), and the next cursor."""
    owner, query = request.owner, request.query
    expr = Expr()
    ttl = expr.name(keys.TTL)
    filters = [
        f"attribute_not_exists({expr.name('deleting')})",
        f"(attribute_not_exists({ttl}) OR {ttl} > {expr.value(n(now_epoch(ctx.now())))})",
    ]
    if query.created_after is not None:
        filters.append(f"{expr.name('created_at')} > {expr.value(s(iso(query.created_after)))}")
    if query.created_before is not None:
        filters.append(f"{expr.name('created_at')} < {expr.value(s(iso(query.created_before)))}")
    for key, value in query.metadata.items():
        filters.append(f"{expr.path('metadata_index', key)} = {expr.value(s(value))}")
    if query.conversations_only:
        for key, value in INTERNAL:
            filters.append(f"NOT ({expr.path('metadata_index', key)} = {expr.value(s(codec.canonical(value)))})")
        for key in UNDER:
            filters.append(f"attribute_not_exists({expr.path('metadata_index', key)})")
    params: dict[str, Any] = {
        "TableName": ctx.sessions_table,
        "IndexName": keys.BY_OWNER,
        "ScanIndexForward": False,
        "KeyConditionExpression": f"{expr.name(keys.GSI1PK)} = {expr.value(s(owner))}",
        "FilterExpression": " AND ".join(filters),
        "Limit": query.limit + 1,
        **expr.params(),
    }
    if query.cursor is not None:
        pos = cursors.decode(query.cursor, "sessions", owner)
        params["ExclusiveStartKey"] = {
            keys.GSI1PK: s(owner),
            keys.GSI1SK: s(str(pos.get("g"))),
            **keys.head_key(str(pos.get("i"))),
        }
    items = yield from run_query(params, limit=query.limit + 1)
    heads = [head_from_item(i) for i in items]
    next_cursor = None
    if len(heads) > query.limit:
        last = items[query.limit - 1]
        next_cursor = cursors.encode("sessions", owner, {"g": last[keys.GSI1SK]["S"], "i": last["id"]["S"]})
    return heads[: query.limit], next_cursor


def update_session(ctx: Context, request: UpdateSession) -> Plan[Session]:
    """Change title, model and/or metadata (UNSET leaves a field alone; None clears it)."""
    session_id, owner, title = request.session_id, request.owner, request.title
    model, metadata = request.model, request.metadata

    def build(pos: Position) -> Actions:
        now = ctx.now()
        expr = Expr()
        sets = touch(expr, session_id, now, pos.retention)
        removes = []
        for name, value in (("title", title), ("model", model)):
            if value is None:
                removes.append(expr.name(name))
            elif value is not UNSET:
                sets.append(f"{expr.name(name)} = {expr.value(s(value))}")
        if metadata is not UNSET:
            for name, av in metadata_attrs(metadata).items():
                sets.append(f"{expr.name(name)} = {expr.value(av)}")
        return Actions(head=head_update(ctx, session_id, expr, guard(expr, now, owner), sets, removes=removes))

    _, resp = yield from write_session(ctx, session_id, owner, build, what="update_session")
    return head_from_item(resp["Attributes"]).session


def delete_session(ctx: Context, request: DeleteSession) -> Plan[None]:
    """Remove the session and everything it owns; idempotent; absent for this caller means nothing to do.

    The head is first marked `deleting` (every other operation then treats the session as absent and
    no new child can be written) with a TTL of DELETE_GRACE, so that if this process dies part-way the
    head still expires and the stream-driven cascade purges what is left."""
    session_id, owner = request.session_id, request.owner
    item = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    if item is None:
        yield from forget(session_id)
        return
    head = head_from_item(item)
    if owner is not None and head.session.owner != owner:
        return
    expr = Expr()
    condition = f"attribute_exists({expr.name(keys.PK)}) AND {expr.name('owner')} = {expr.value(s(head.session.owner))}"
    grace = epoch(expiry(ctx.now(), DELETE_GRACE))
    ttl = expr.name(keys.TTL)
    marked = yield from write_if(
        "update_item",
        {
            "TableName": ctx.sessions_table,
            "Key": keys.head_key(session_id),
            "UpdateExpression": f"SET {expr.name('deleting')} = {expr.value(boolean(True))}, "
            f"{ttl} = {expr.value(n(grace))}",
            "ConditionExpression": condition,
            **expr.params(),
        },
    )
    if not marked:
        return  # deleted (or replaced by another owner's session) meanwhile
    yield from purge(ctx, session_id, head.session.owner, may_hand_off=True, head=item)


def purge(
    ctx: Context, session_id: str, owner: str, *, may_hand_off: bool = False, head: Item | None = None
) -> Plan[bool]:
    """Delete every item and object of a session: first the copies out of it that are still going on are
    finished (the pins on its `head`, the head item as last seen: forks of it keep their messages), and its
    own copy from another session, if one is going on, lets go of that session; then its S3 prefix
    (artifacts, traces, spilled bodies), the messages of each of its partitions (its transcript's, its
    branches') a page at a time, its partition in the sessions table (head last) and its owner-index entry.
    Safe to repeat: until the head goes, a repeated delete finds it and finishes.

    With `may_hand_off` (a caller's delete, inside a request's `store.deadline`), the purge stops once
    less than `settings.handoff_reserve` is left before the deadline, and hands what remains to the
    cascade: the head, still `deleting`, is marked `handoff`, and that change on the table's stream makes
    the cascade finish the purge. Returns True when this call finished it."""
    yield from forget(session_id)
    reserve = ctx.settings.handoff_reserve.total_seconds()
    reserve_if = reserve if may_hand_off else None
    seen = head_from_item(head) if head is not None else None
    for target in sorted(seen.pins if seen is not None else ()):
        finished = yield from finish_copy(ctx, target)
        if not finished:  # out of the request's time: the cascade carries on (this purge again, from the top)
            if may_hand_off:
                yield from hand_off(ctx, session_id)
            return False
    if seen is not None and seen.seed is not None and seen.seed.source_session != session_id:
        yield from unpin(ctx, seen.seed.source_session, session_id, seen.seed.token)
    if ctx.bucket is not None:
        emptied = yield from delete_prefix(ctx, object_keys.session_prefix(owner, session_id), reserve_if)
        if not emptied:
            yield from hand_off(ctx, session_id)
            return False
    branches = yield from all_branches(ctx, session_id)
    parts = {session_id, *(b.part for b in branches)} | ({seen.part} if seen is not None else set())
    for part in sorted(parts):
        done = yield from purge_partition(ctx, part, reserve_if)
        if not done:
            yield from hand_off(ctx, session_id)
            return False
    children = yield from partition(ctx.sessions_table, keys.PK, keys.session_pk(session_id), keys_of=keys.SK)
    yield from batch_delete(ctx, ctx.sessions_table, [c for c in children if c[keys.SK]["S"] != keys.HEAD])
    yield from batch_delete(
        ctx, ctx.sessions_table, [keys.owner_index_key(owner, session_id), keys.head_key(session_id)]
    )
    return True


def purge_partition(ctx: Context, part: str, reserve: float | None, *, objects: bool = False) -> Plan[bool]:
    """Delete every message of one partition, a page at a time (with `objects`, the spilled bodies they
    point to too: a session's own purge deletes its whole prefix instead). With a `reserve`, it stops
    (False) once less than that is left before the enclosing `store.deadline`."""
    expr = Expr()
    params: dict[str, Any] = {
        "TableName": ctx.messages_table,
        "ConsistentRead": True,
        "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(part))}",
        "ProjectionExpression": ", ".join(expr.name(a) for a in (keys.SID, keys.SEQ, *((REF,) if objects else ()))),
        "Limit": PURGE_PAGE,
        **expr.params(),
    }
    while True:
        if reserve is not None and out_of_time(ctx, reserve):
            return False
        resp = yield Call("query", params)
        found = resp.get("Items", [])
        if objects:  # the bodies first: an item removed is never read again, so nothing would free its body
            yield from delete_objects(ctx, [i[REF]["S"] for i in found if REF in i])
        deleted = yield from batch_delete(
            ctx, ctx.messages_table, [{k: i[k] for k in (keys.SID, keys.SEQ)} for i in found], reserve
        )
        if not deleted:  # out of time part-way through the page: the purge starts again from what is left
            return False
        if not resp.get("LastEvaluatedKey"):
            return True
        params["ExclusiveStartKey"] = resp["LastEvaluatedKey"]


PURGE_PAGE = 1000  # message keys read (and then deleted, 8 BatchWriteItem requests at a time) per step
HANDOFF = "handoff"  # set on a deleting head whose purge the cascade is to finish
HANDOFFS = "handoffs"  # how many times it was handed on: each hand-off is a change on the stream


def hand_off(ctx: Context, session_id: str, sk: str = keys.HEAD) -> Plan[None]:
    """Mark a deleting item (the head, or the branch item `sk`) `handoff`, only while it is still being
    deleted (a finished purge has removed it), so that the cascade, seeing the change on the stream,
    finishes the purge (each hand-off counts one more in `handoffs`: a cascade invocation that runs out of
    time itself hands the rest on to the next)."""
    expr = Expr()
    yield from write_if(
        "update_item",
        {
            "TableName": ctx.sessions_table,
            "Key": keys.session_key(session_id, sk),
            "UpdateExpression": f"SET {expr.name(HANDOFF)} = {expr.value(boolean(True))} "
            f"ADD {expr.name(HANDOFFS)} {expr.value(n(1))}",
            "ConditionExpression": f"attribute_exists({expr.name('deleting')})",
            **expr.params(),
        },
    )


def unseen_head(session_id: str, owner: str, now: datetime) -> Item:
    """An empty head every operation treats as absent (`deleting`), expiring after DELETE_GRACE: it holds
    the id while a purge or a fork works under it."""
    stamp = s(iso(now))
    return {
        **keys.head_key(session_id),
        "id": s(session_id),
        "owner": s(owner),
        "created_at": stamp,
        "updated_at": stamp,
        "last_seq": n(0),
        "state_version": n(0),
        "deleting": boolean(True),
        keys.TTL: n(epoch(expiry(now, DELETE_GRACE))),
    }


CASCADE = "cascade"


def purge_removed(ctx: Context, session_id: str, owner: str, old: Item | None = None) -> Plan[bool]:
    """Purge what remains of a session whose head was removed (its TTL expired, or a delete finished),
    unless the id now holds a live session again; `old` is the removed head (where its transcript was, the
    copies in and out of it). A tombstone head (deleting, `cascade`, expiring after DELETE_GRACE, with
    those) is put first, conditionally, so that no session can be created under the id while the purge
    runs (and one created after it finds what to purge); the purge then removes it too, and its own removal
    is recognised by `cascade` and left alone. Returns whether it purged."""
    now = ctx.now()
    expr = Expr()
    ttl = expr.name(keys.TTL)
    tomb = {
        **unseen_head(session_id, owner, now),
        CASCADE: boolean(True),
        **{k: v for k, v in (old or {}).items() if k in (PART, SEED) or k.startswith(PIN_PREFIX)},
    }
    put = yield from write_if(
        "put_item",
        {
            "TableName": ctx.sessions_table,
            "Item": tomb,
            "ConditionExpression": f"attribute_not_exists({expr.name(keys.PK)}) OR "
            f"attribute_exists({expr.name('deleting')}) OR {ttl} <= {expr.value(n(now_epoch(now)))}",
            **expr.params(),
        },
    )
    if not put:
        return False  # a live session holds the id again
    yield from purge(ctx, session_id, owner, head=tomb, may_hand_off=True)  # within a deadline: handed on
    return True
