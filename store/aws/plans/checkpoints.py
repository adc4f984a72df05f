"""Plans for hot checkpoints (TTL). Session-scope checkpoints live in the session's partition and record
its last sequence number; run and workflow checkpoints have partitions of their own."""

from __future__ import annotations

from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, n
from store.aws.calls import Call, Plan
from store.aws.items import checkpoint_from_item, checkpoint_item, live_ttl
from store.aws.plans.base import Context, Position, at_position, get_item, guard, head_check
from store.aws.plans.payloads import committed, encode, resolve_one, stage
from store.aws.plans.state import load_child
from store.aws.plans.transactions import Actions, transact
from store.aws.plans.writes import write_session
from store.core.timeutil import epoch, expiry
from store.models import Checkpoint
from store.requests import DeleteCheckpoint, LoadCheckpoint, SaveCheckpoint


def save_checkpoint(ctx: Context, request: SaveCheckpoint) -> Plan[Checkpoint]:
    """Store (or renew) a checkpoint that expires `ttl` from now (a run or workflow checkpoint in its
    owner's namespace)."""
    scope, key, data, ttl, owner = request.scope, request.key, request.data, request.ttl, request.owner
    now = ctx.now()
    expires = expiry(now, ttl)
    cp = Checkpoint(scope=scope, key=key, data=data, saved_at=now, expires_at=expires)
    inline = checkpoint_item(cp, epoch(expires), encode(ctx, data, "checkpoint data"), owner)
    write_id = ctx.new_id()
    if scope == "session":
        staged = yield from stage(ctx, [inline], "save_checkpoint", session=(key, owner), write_id=write_id)

        def build(pos: Position) -> Actions:
            expr = Expr()
            condition = f"{guard(expr, now, owner)} AND {at_position(expr, pos)}"
            put = {"Put": {"TableName": ctx.sessions_table, "Item": {**staged.items[0], "seq": n(pos.last_seq)}}}
            return staged.release(ctx, Actions(head=head_check(ctx, key, expr, condition), checkpoint=put))

        pos, _ = yield from committed(
            ctx, staged, lambda: write_session(ctx, key, owner, build, what="save_checkpoint")
        )
        return cp.model_copy(update={"seq": pos.last_seq})
    staged = yield from stage(
        ctx,
        [inline],
        "save_checkpoint",
        session=None,
        prefix=object_keys.checkpoint_prefix(scope, key, owner),
        write_id=write_id,
    )
    put: dict[str, Any] = {"TableName": ctx.sessions_table, "Item": staged.items[0]}

    def write() -> Plan[None]:
        if staged.intent is None:
            yield Call("put_item", put)
        else:
            yield transact(staged.release(ctx, Actions(checkpoint={"Put": put})), ctx.new_id())

    yield from committed(ctx, staged, write)
    return cp


def load_checkpoint(ctx: Context, request: LoadCheckpoint) -> Plan[Checkpoint | None]:
    """The checkpoint, or None when absent or expired (whether or not DynamoDB has removed it yet)."""
    scope, key, owner = request.scope, request.key, request.owner
    if scope == "session":
        item = yield from load_child(ctx, key, owner, keys.CHECKPOINT)
    else:
        item = yield from get_item(ctx.sessions_table, keys.checkpoint_key(scope, key, owner))
    if item is None or not live_ttl(item, ctx.now()):
        return None
    return checkpoint_from_item((yield from resolve_one(ctx, item)) or item)


def delete_checkpoint(ctx: Context, request: DeleteCheckpoint) -> Plan[None]:
    """Remove the checkpoint; idempotent."""
    scope, key, owner = request.scope, request.key, request.owner
    delete: dict[str, Any] = {"TableName": ctx.sessions_table, "Key": keys.checkpoint_key(scope, key, owner)}
    if scope == "session":
        now = ctx.now()

        def build(pos: Position) -> Actions:
            expr = Expr()
            condition = f"{guard(expr, now, owner)} AND {at_position(expr, pos, seq=False)}"
            return Actions(head=head_check(ctx, key, expr, condition), checkpoint={"Delete": delete})

        yield from write_session(ctx, key, owner, build, what="delete_checkpoint")
        return
    yield Call("delete_item", delete)
