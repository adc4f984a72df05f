"""The part of `forget_owner` on the sessions table: the session records a layer above the store asked a forget
to rewrite (`core.forgetting`: a kind and its reducer), a page of the owner's sessions at a time, so that a call
stays bounded however many sessions the owner has: one Query of the owner index (keys only), one BatchGetItem
of the page's records of those kinds, and one conditional PutItem for each record that changes (none when a
forget already went over it)."""

from __future__ import annotations

from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, get_s, s
from store.aws.calls import Call, Plan
from store.aws.items import body_value, encoded_attrs
from store.aws.plans.base import Context, batch_get, write_if
from store.aws.plans.payloads import encode, resolve
from store.core.forgetting import ForgetReducers
from store.core.timeutil import iso

FORGET_SESSIONS = 25  # sessions one page of a forget rewrites the records of


def _sessions_page(ctx: Context, owner: str, after: Item | None) -> Plan[tuple[list[str], Item | None]]:
    """One page of the owner's session ids (from `after`) and where the next page starts (None: the last)."""
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
    return sessions, answer.get("LastEvaluatedKey")


def forget_records_page(ctx: Context, owner: str, after: Item | None, reduce: ForgetReducers) -> Plan[Item | None]:
    """Rewrite the records `reduce` names for one page of the owner's sessions (from `after`, the previous page's
    end; None: the first): where the next page starts, or None when the owner has no more sessions. A record
    rewritten meanwhile (saved after this read) is left as it is: it came after the forget."""
    if not reduce:
        return None
    sessions, last = yield from _sessions_page(ctx, owner, after)
    kinds = {keys.records_sk(kind): reducer for kind, reducer in reduce.items()}
    wanted = [keys.session_key(i, sk) for i in sessions for sk in kinds]
    found = yield from batch_get(ctx, ctx.sessions_table, wanted)
    found = yield from resolve(ctx, found)
    now = ctx.now()
    for item in found:
        before = body_value(item)
        left = kinds[get_s(item, keys.SK) or ""](before if isinstance(before, list) else [], now)
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
    return last
