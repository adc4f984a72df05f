"""The part of `forget_owner` on the sessions table: an owner's sessions' memory extraction runs (a record item
`R#memory-extraction` in each session's partition) reduced to what a forget leaves (`core.extraction_runs.
forgotten`), a page of the owner's sessions at a time, so that a call stays bounded however many sessions the
owner has: one Query of the owner index (keys only), one BatchGetItem of the pages' run records, and one
conditional PutItem for each record that changes (none when a forget already went over it)."""

from __future__ import annotations

from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, get_s, s
from store.aws.calls import Call, Plan
from store.aws.items import body_value, encoded_attrs
from store.aws.plans.base import Context, batch_get, write_if
from store.aws.plans.payloads import encode, resolve
from store.core.extraction_runs import RUNS_KIND, forgotten
from store.core.timeutil import iso

FORGET_SESSIONS = 25  # sessions one page of a forget reduces the runs of


def forget_runs_page(ctx: Context, owner: str, after: Item | None) -> Plan[Item | None]:
    """Reduce the run records of one page of the owner's sessions (from `after`, the previous page's end; None:
    the first): where the next page starts, or None when the owner has no more sessions. A record rewritten
    meanwhile (a run saved after this read) is left as it is: that run came after the forget."""
    expr = Expr()
    params: dict[str, Any] = {
        "TableName": ctx.sessions_table,
        "IndexName": keys.BY_OWNER,
        "KeyConditionExpression": f"{expr.name(keys.GSI1PK)} = {expr.value(s(owner))}",
        "ProjectionExpression": ", ".join(expr.name(a) for a in (keys.PK, keys.SK, keys.GSI1PK, keys.GSI1SK)),
        "Limit": FORGET_SESSIONS,
        **expr.params(),
    }
    if after is not None:
        params["ExclusiveStartKey"] = after
    answer = yield Call("query", params)
    prefix = keys.session_pk("")
    sessions = [
        pk[len(prefix) :]
        for item in answer.get("Items", [])
        if (pk := get_s(item, keys.PK) or "").startswith(prefix) and get_s(item, keys.SK) == keys.HEAD
    ]
    wanted = [keys.session_key(i, keys.records_sk(RUNS_KIND)) for i in sessions]
    found = yield from batch_get(ctx, ctx.sessions_table, wanted)
    found = yield from resolve(ctx, found)
    now = ctx.now()
    for item in found:
        before = body_value(item)
        left = forgotten(before, now)
        if left == before:
            continue
        put = Expr()
        condition = f"{put.name('saved_at')} = {put.value(s(get_s(item, 'saved_at') or ''))}"
        replaced: Item = {
            keys.PK: item[keys.PK],
            keys.SK: item[keys.SK],
            "saved_at": s(iso(now)),
            **encoded_attrs(encode(ctx, left, "records")),
        }
        yield from write_if(
            "put_item",
            {"TableName": ctx.sessions_table, "Item": replaced, "ConditionExpression": condition, **put.params()},
        )
    last: Item | None = answer.get("LastEvaluatedKey")
    return last
