"""Plans for hot checkpoints (TTL). Session-scope checkpoints live in the session's partition and record
its last sequence number; run and workflow checkpoints have partitions of their own."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from store.dynamo import keys
from store.dynamo.attrs import Expr, n, s
from store.dynamo.calls import AwsError, Call, Plan
from store.dynamo.items import checkpoint_from_item, checkpoint_item, live_ttl
from store.dynamo.plans.base import (
    Context,
    Position,
    at_position,
    check_sizes,
    get_item,
    guard,
    head_check,
    write_session,
)
from store.dynamo.plans.state import load_child
from store.errors import Conflict
from store.models import Checkpoint
from store.timeutil import epoch, expiry, now_epoch


def save_checkpoint(
    ctx: Context, scope: str, key: str, data: Any, ttl: timedelta, owner: str | None
) -> Plan[Checkpoint]:
    """Store (or renew) a checkpoint that expires `ttl` from now."""
    now = ctx.now()
    expires = expiry(now, ttl)
    cp = Checkpoint(scope=scope, key=key, data=data, saved_at=now, expires_at=expires)
    item = checkpoint_item(cp, epoch(expires))
    check_sizes(ctx, [item], "save_checkpoint")
    if scope == "session":

        def build(pos: Position) -> list[dict[str, Any]]:
            expr = Expr()
            condition = f"{guard(expr, now, owner)} AND {at_position(expr, pos)}"
            return [
                head_check(ctx, key, expr, condition),
                {"Put": {"TableName": ctx.sessions_table, "Item": {**item, "seq": n(pos.last_seq)}}},
            ]

        pos, _ = yield from write_session(ctx, key, owner, build, what="save_checkpoint")
        return cp.model_copy(update={"seq": pos.last_seq})
    expr = Expr()
    params: dict[str, Any] = {"TableName": ctx.sessions_table, "Item": item}
    if owner is not None:
        params["Item"] = {**item, "owner": s(owner)}
        ttl_name = expr.name(keys.TTL)
        params["ConditionExpression"] = (
            f"attribute_not_exists({expr.name(keys.PK)}) OR {expr.name('owner')} = "
            f"{expr.value(s(owner))} OR {ttl_name} <= {expr.value(n(now_epoch(now)))}"
        )
        params.update(expr.params())
    try:
        yield Call("put_item", params)
    except AwsError as err:
        if err.code == "ConditionalCheckFailedException":
            raise Conflict(f"{scope} checkpoint {key!r} belongs to another owner") from None
        raise
    return cp


def load_checkpoint(ctx: Context, scope: str, key: str, owner: str | None) -> Plan[Checkpoint | None]:
    """The checkpoint, or None when absent or expired (whether or not DynamoDB has removed it yet)."""
    if scope == "session":
        item = yield from load_child(ctx, key, owner, keys.CHECKPOINT)
    else:
        item = yield from get_item(ctx.sessions_table, keys.checkpoint_key(scope, key))
        if item is not None and owner is not None and item.get("owner", {}).get("S") != owner:
            item = None
    if item is None or not live_ttl(item, ctx.now()):
        return None
    return checkpoint_from_item(item)


def delete_checkpoint(ctx: Context, scope: str, key: str, owner: str | None) -> Plan[None]:
    """Remove the checkpoint; idempotent."""
    delete: dict[str, Any] = {"TableName": ctx.sessions_table, "Key": keys.checkpoint_key(scope, key)}
    if scope == "session":
        now = ctx.now()

        def build(pos: Position) -> list[dict[str, Any]]:
            expr = Expr()
            condition = f"{guard(expr, now, owner)} AND {at_position(expr, pos, seq=False)}"
            return [head_check(ctx, key, expr, condition), {"Delete": delete}]

        yield from write_session(ctx, key, owner, build, what="delete_checkpoint")
        return
    if owner is not None:
        expr = Expr()
        delete["ConditionExpression"] = (
            f"attribute_not_exists({expr.name(keys.PK)}) OR {expr.name('owner')} = {expr.value(s(owner))}"
        )
        delete.update(expr.params())
    try:
        yield Call("delete_item", delete)
    except AwsError as err:
        if err.code != "ConditionalCheckFailedException":
            raise
