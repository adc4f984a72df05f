"""Plans for session heads: create, get, list, update and delete (with its cascade)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, boolean, n, s
from store.aws.calls import AwsError, Call, Plan
from store.aws.items import head_from_item, head_item, metadata_attrs
from store.aws.plans.base import (
    Context,
    Position,
    again,
    backoff,
    batch_delete,
    get_item,
    guard,
    head_update,
    out_of_time,
    partition,
    partition_query,
    touch,
    write_session,
)
from store.aws.plans.base import query as run_query
from store.aws.plans.objects import delete_prefix
from store.aws.plans.transactions import HEAD, Actions, cancelled, transact
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
    attempt = 0
    while True:
        now = ctx.now()
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
        expr = Expr()
        put = {
            "Put": {
                "TableName": ctx.sessions_table,
                "Item": head_item(session, epoch(expires) if expires else None),
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
            yield transact(actions)
        except AwsError as err:
            failed = cancelled(err, actions)
            if failed.failed(HEAD):
                old = failed.old(HEAD) or (yield from get_item(ctx.sessions_table, keys.head_key(session_id)))
                if old is not None:
                    head = head_from_item(old)
                    if err.retried and head.session == session:
                        break  # our own create, resent by the SDK after its response was lost
                    if head.live(now, None):
                        raise SessionExists(session_id) from None
                    yield from purge(ctx, session_id, head.session.owner)
                attempt = yield from again(ctx, attempt, "create_session")  # the expired one is gone
                continue
            if not failed.conflicted():
                raise
            attempt = yield from backoff(ctx, attempt, "create_session")
            continue
        break
    ctx.remember(session_id, Position(0, 0, int(retention.total_seconds()) if retention else None, owner))
    return session


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
    sessions = [head_from_item(i).session for i in items]
    next_cursor = None
    if len(sessions) > query.limit:
        last = items[query.limit - 1]
        next_cursor = cursors.encode("sessions", owner, {"g": last[keys.GSI1SK]["S"], "i": last["id"]["S"]})
    return Page[Session](items=sessions[: query.limit], next_cursor=next_cursor)


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
        ctx.forget(session_id)
        return
    head = head_from_item(item)
    if owner is not None and head.session.owner != owner:
        return
    expr = Expr()
    condition = f"attribute_exists({expr.name(keys.PK)}) AND {expr.name('owner')} = {expr.value(s(head.session.owner))}"
    grace = epoch(expiry(ctx.now(), DELETE_GRACE))
    ttl = expr.name(keys.TTL)
    try:
        yield Call(
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
    except AwsError as err:
        if err.code == "ConditionalCheckFailedException":
            return  # deleted (or replaced by another owner's session) meanwhile
        raise
    yield from purge(ctx, session_id, head.session.owner, may_hand_off=True)


def purge(ctx: Context, session_id: str, owner: str, *, may_hand_off: bool = False) -> Plan[bool]:
    """Delete every item and object of a session: its S3 prefix (artifacts, traces, spilled bodies),
    its messages a page at a time, its partition in the sessions table (head last) and its owner-index
    entry. Safe to repeat: until the head goes, a repeated delete finds it and finishes.

    With `may_hand_off` (a caller's delete, inside a request's `store.deadline`), the purge stops once
    less than `settings.handoff_reserve` is left before the deadline, and hands what remains to the
    cascade: the head, still `deleting`, is marked `handoff`, and that change on the table's stream makes
    the cascade finish the purge. Returns True when this call finished it."""
    ctx.forget(session_id)
    reserve = ctx.settings.handoff_reserve.total_seconds()
    if ctx.bucket is not None:
        yield from delete_prefix(ctx, object_keys.session_prefix(owner, session_id))
    params = partition_query(ctx.messages_table, keys.SID, session_id, keys_of=keys.SEQ)
    while True:
        if may_hand_off and out_of_time(reserve):
            yield from hand_off(ctx, session_id)
            return False
        resp = yield Call("query", {**params, "Limit": PURGE_PAGE})
        yield from batch_delete(ctx, ctx.messages_table, resp.get("Items", []))
        if not resp.get("LastEvaluatedKey"):
            break
        params["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
    children = yield from partition(ctx.sessions_table, keys.PK, keys.session_pk(session_id), keys_of=keys.SK)
    yield from batch_delete(ctx, ctx.sessions_table, [c for c in children if c[keys.SK]["S"] != keys.HEAD])
    yield from batch_delete(
        ctx, ctx.sessions_table, [keys.owner_index_key(owner, session_id), keys.head_key(session_id)]
    )
    return True


PURGE_PAGE = 1000  # message keys read (and then deleted, 8 BatchWriteItem requests at a time) per step
HANDOFF = "handoff"  # set on a deleting head whose purge the cascade is to finish


def hand_off(ctx: Context, session_id: str) -> Plan[None]:
    """Mark a deleting head `handoff` (only while it is still the deleting head: a finished purge has
    removed it), so that the cascade, seeing the change on the stream, finishes the purge."""
    expr = Expr()
    try:
        yield Call(
            "update_item",
            {
                "TableName": ctx.sessions_table,
                "Key": keys.head_key(session_id),
                "UpdateExpression": f"SET {expr.name(HANDOFF)} = {expr.value(boolean(True))}",
                "ConditionExpression": f"attribute_exists({expr.name('deleting')})",
                **expr.params(),
            },
        )
    except AwsError as err:
        if err.code != "ConditionalCheckFailedException":
            raise


CASCADE = "cascade"


def purge_removed(ctx: Context, session_id: str, owner: str) -> Plan[bool]:
    """Purge what remains of a session whose head was removed (its TTL expired, or a delete finished),
    unless the id now holds a live session again. A tombstone head (deleting, `cascade`, expiring after
    DELETE_GRACE) is put first, conditionally, so that no session can be created under the id while the
    purge runs; the purge then removes it too, and its own removal is recognised by `cascade` and left
    alone. Returns whether it purged."""
    now = ctx.now()
    expr = Expr()
    ttl = expr.name(keys.TTL)
    stamp = s(iso(now))
    tomb = {
        **keys.head_key(session_id),
        "id": s(session_id),
        "owner": s(owner),
        "created_at": stamp,
        "updated_at": stamp,
        "last_seq": n(0),
        "state_version": n(0),
        "deleting": boolean(True),
        CASCADE: boolean(True),
        keys.TTL: n(epoch(expiry(now, DELETE_GRACE))),
    }
    try:
        yield Call(
            "put_item",
            {
                "TableName": ctx.sessions_table,
                "Item": tomb,
                "ConditionExpression": f"attribute_not_exists({expr.name(keys.PK)}) OR "
                f"attribute_exists({expr.name('deleting')}) OR {ttl} <= {expr.value(n(now_epoch(now)))}",
                **expr.params(),
            },
        )
    except AwsError as err:
        if err.code == "ConditionalCheckFailedException":
            return False  # a live session holds the id again
        raise
    yield from purge(ctx, session_id, owner)
    return True
