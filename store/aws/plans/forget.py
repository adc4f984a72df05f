"""`forget_owner` on DynamoDB: the owner's memories deleted a batch at a time, then the session records a layer
above the store asked it to rewrite (`forget_records`), bounded per call; what is left is handed to the stream's
cascade by the owner's forget marker, which carries it on in rounds (`finish_forget`)."""

from __future__ import annotations

from typing import Any

from store.aws.attrs import Expr, Item, action, get_s, s
from store.aws.calls import Call, Plan
from store.aws.plans.base import Context, batch_delete, get_item, out_of_time, write_if
from store.aws.plans.forget_records import forget_records_page
from store.aws.plans.memories import memories_table, owner_pk
from store.core import memories as m
from store.core.forgetting import ForgetReducers, checked
from store.requests import ForgetOwner

FORGET_BATCH = 1000  # memories one forget_owner call removes before it hands the rest on
FORGET_MARK = "F#forget"  # the sort key of an owner's forget marker: its change on the stream is the cascade's job
FORGET_SLICE = 60.0  # seconds one record's invocation carries an owner's forget on before handing it on


def _forget_batch(ctx: Context, table: str, owner: str, reserve: float | None = None) -> Plan[bool]:
    """Delete up to FORGET_BATCH of the owner's memories (a Query of keys, then BatchWriteItem): True when none
    is left."""
    expr = Expr()
    params = {
        "TableName": table,
        "KeyConditionExpression": f"{expr.name('pk')} = {expr.value(s(owner_pk(owner)))} AND "
        f"begins_with({expr.name('sk')}, {expr.value(s(m.MEMORY_PREFIX))})",
        "ProjectionExpression": f"{expr.name('pk')}, {expr.name('sk')}",
        "Limit": FORGET_BATCH,
        **expr.params(),
    }
    answer = yield Call("query", params)
    keys = [{"pk": i["pk"], "sk": i["sk"]} for i in answer.get("Items", [])]
    finished = yield from batch_delete(ctx, table, keys, reserve)
    return finished and not answer.get("LastEvaluatedKey")


def _hand_on_forget(ctx: Context, table: str, owner: str, after: Item | None = None) -> Plan[None]:
    """(Re)write the owner's forget marker with a new round (and where the sessions' records are up to, `after`):
    its change on the memories table's stream has the cascade carry the forget on."""
    item: Item = {"pk": s(owner_pk(owner)), "sk": s(FORGET_MARK), "round": s(ctx.new_id())}
    if after is not None:
        item["after"] = {"M": after}
    yield Call("put_item", {"TableName": table, "Item": item})


def forget_owner(ctx: Context, request: ForgetOwner) -> Plan[bool]:
    """Delete up to FORGET_BATCH of the owner's memories and, when none is left, rewrite a page of its sessions'
    records of the kinds `request.reduce` names: True when nothing is left to do; otherwise False, and the rest
    is handed to the stream's cascade (the forget marker), which carries it on in rounds (`finish_forget`). A
    second call meanwhile is harmless (it does a batch more and hands the rest on again)."""
    table = memories_table(ctx)
    reduce = checked(request.reduce)
    if not (yield from _forget_batch(ctx, table, request.owner)):
        yield from _hand_on_forget(ctx, table, request.owner)
        return False
    after = yield from forget_records_page(ctx, request.owner, None, reduce)
    if after is None:
        return True
    yield from _hand_on_forget(ctx, table, request.owner, after)
    return False


def forget_marked(record: dict[str, Any]) -> tuple[str, str] | None:
    """(owner, round) when the stream record writes an owner's forget marker (a forget handed on), or None."""
    change = record.get("dynamodb") or {}
    keys, new = change.get("Keys") or {}, change.get("NewImage") or {}
    if record.get("eventName") not in ("INSERT", "MODIFY") or get_s(keys, "sk") != FORGET_MARK:
        return None
    pk, round_ = get_s(keys, "pk") or "", get_s(new, "round")
    return (pk[len(owner_pk("")) :], round_) if pk.startswith(owner_pk("")) and round_ else None


def finish_forget(
    ctx: Context, owner: str, round_: str, reduce: ForgetReducers, *, slice_seconds: float = FORGET_SLICE
) -> Plan[bool]:
    """Carry the owner's forget on from the marker's round `round_`: nothing when the marker is gone or holds
    another round (a record seen again, or a newer round's record is on its way: one chain of rounds at a
    time); else delete the memories a batch at a time, then rewrite the owner's sessions' records of the kinds
    `reduce` names a page at a time from where the marker's `after` says, for at most `slice_seconds` (and never
    past the enclosing `store.deadline`, less `settings.handoff_reserve`): True once nothing is left (the marker
    removed); else the marker's next round hands the rest to the next invocation (False)."""
    table = memories_table(ctx)
    marker = {"pk": s(owner_pk(owner)), "sk": s(FORGET_MARK)}
    current = yield from get_item(table, marker)
    if current is None or get_s(current, "round") != round_:
        return True
    started = ctx.monotonic()
    reserve = ctx.settings.handoff_reserve.total_seconds()
    after: Item | None = current.get("after", {}).get("M")
    memories_left = True
    while True:
        if memories_left:
            memories_left = not (yield from _forget_batch(ctx, table, owner, reserve))
        if not memories_left:
            after = yield from forget_records_page(ctx, owner, after, reduce)
            if after is None:
                expr = Expr()
                condition = f"{expr.name('round')} = {expr.value(s(round_))}"  # a newer round is its own record's
                body = action("Delete", table, marker, expr, condition=condition)["Delete"]
                yield from write_if("delete_item", body)
                return True
        if ctx.monotonic() - started > slice_seconds or out_of_time(ctx, reserve):
            yield from _hand_on_forget(ctx, table, owner, None if memories_left else after)
            return False
