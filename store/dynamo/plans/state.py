"""Plans for a session's state (versioned), save_full/load_full, interrupts and records."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from store.codec import encode, encode_all
from store.dynamo import keys
from store.dynamo.attrs import Expr, Item, n, s
from store.dynamo.calls import Call, Plan
from store.dynamo.items import body_attrs, body_value, record_from_item, state_from_item, state_item
from store.dynamo.plans.base import (
    Context,
    Position,
    at_position,
    batch_get,
    check_sizes,
    find_head,
    get_item,
    guard,
    head_update,
    live_head,
    touch,
    write_session,
)
from store.dynamo.plans.messages import (
    drafts,
    first_message_landed,
    message_puts,
    query_range,
    total_usage,
    usage_adds,
)
from store.models import FullSession, Message, StateSnapshot
from store.timeutil import iso
from store.validation import new_id


def _state_actions(
    ctx: Context,
    session_id: str,
    owner: str | None,
    pos: Position,
    now: datetime,
    state: tuple[str, bytes],
    new_seq: int,
    extra_sets: list[str],
    expr: Expr,
    write_id: str,
    adds: list[str] | None = None,
) -> list[dict[str, Any]]:
    condition = f"{guard(expr, now, owner)} AND {at_position(expr, pos, seq=True, version=True)}"
    sets = [
        *touch(expr, session_id, now, pos.retention),
        *extra_sets,
        f"{expr.name('state_version')} = {expr.value(n(pos.state_version + 1))}",
    ]
    head = head_update(ctx, session_id, expr, condition, sets, adds or ())
    put = {
        "Put": {
            "TableName": ctx.sessions_table,
            "Item": state_item(session_id, pos.state_version + 1, new_seq, state, now, write_id),
        }
    }
    return [head, put]


def save_state(ctx: Context, session_id: str, owner: str | None, state: Any, expected_version: int | None) -> Plan[int]:
    """Store a new version of the state (conditional on `expected_version` when given); returns it."""
    now = ctx.now()
    encoded = encode(state, "state")
    write_id = new_id()
    check_sizes(ctx, [state_item(session_id, 0, 0, encoded, now, write_id)], "save_state")

    def build(pos: Position) -> list[dict[str, Any]]:
        return _state_actions(ctx, session_id, owner, pos, now, encoded, pos.last_seq, [], Expr(), write_id)

    def landed(pos: Position) -> Plan[bool]:
        item = yield from get_item(ctx.sessions_table, keys.session_key(session_id, keys.STATE))
        return item is not None and item.get("write_id") == s(write_id) and item["version"] == n(pos.state_version + 1)

    pos, _ = yield from write_session(
        ctx, session_id, owner, build, what="save_state", expect_version=expected_version, landed=landed
    )
    ctx.remember(session_id, replace(pos, state_version=pos.state_version + 1))
    return pos.state_version + 1


def save_full(
    ctx: Context, session_id: str, owner: str | None, messages: list[Message], state: Any, expected_seq: int | None
) -> Plan[StateSnapshot]:
    """Append messages and store the state that follows them, in one transaction."""
    now = ctx.now()
    encoded = encode_all([*(m.body() for m in messages), state], "save_full")
    items = drafts(ctx, session_id, messages, now, "save_full", encoded[:-1])
    write_id = new_id()
    check_sizes(ctx, [*items, state_item(session_id, 0, 0, encoded[-1], now, write_id)], "save_full")
    total = total_usage(messages)

    def build(pos: Position) -> list[dict[str, Any]]:
        expr = Expr()
        new_seq = pos.last_seq + len(items)
        seq_set = f"{expr.name('last_seq')} = {expr.value(n(new_seq))}"
        actions = _state_actions(
            ctx, session_id, owner, pos, now, encoded[-1], new_seq, [seq_set], expr, write_id, usage_adds(expr, total)
        )
        return actions + message_puts(ctx, items, pos.last_seq + 1)

    pos, _ = yield from write_session(
        ctx,
        session_id,
        owner,
        build,
        what="save_full",
        expect_seq=expected_seq,
        landed=first_message_landed(ctx, session_id, items),
    )
    new_seq = pos.last_seq + len(items)
    ctx.remember(session_id, replace(pos, last_seq=new_seq, state_version=pos.state_version + 1))
    return StateSnapshot(version=pos.state_version + 1, state=state, seq=new_seq, saved_at=now)


def load_child(ctx: Context, session_id: str, owner: str | None, sk: str) -> Plan[Item | None]:
    """One item of a live session's partition (None when absent); SessionNotFound when the session is."""
    key = keys.session_key(session_id, sk)
    items = yield from batch_get(ctx, ctx.sessions_table, [keys.head_key(session_id), key])
    live_head(ctx, session_id, find_head(items, session_id), owner)
    return next((i for i in items if i[keys.SK]["S"] == sk), None)


def load_state(ctx: Context, session_id: str, owner: str | None) -> Plan[StateSnapshot | None]:
    item = yield from load_child(ctx, session_id, owner, keys.STATE)
    return None if item is None else state_from_item(item)


def load_full(ctx: Context, session_id: str, owner: str | None, since_compaction: bool) -> Plan[FullSession]:
    """Head and state read in one transaction, then the messages up to the head's last_seq: together
    they are the session as of that transaction's instant."""
    resp = yield Call(
        "transact_get_items",
        {
            "TransactItems": [
                {"Get": {"TableName": ctx.sessions_table, "Key": keys.head_key(session_id)}},
                {"Get": {"TableName": ctx.sessions_table, "Key": keys.session_key(session_id, keys.STATE)}},
            ]
        },
    )
    found = [r.get("Item") for r in resp.get("Responses", [])] + [None, None]
    head = live_head(ctx, session_id, found[0], owner)
    lo = 1
    if since_compaction and head.session.compaction_seq is not None:
        lo = head.session.compaction_seq
    items = yield from query_range(ctx, session_id, lo, head.session.last_seq, newest_first=False, limit=None)
    return FullSession(
        session=head.session,
        messages=[record_from_item(i) for i in items],
        state=state_from_item(found[1]) if found[1] else None,
    )


def put_child(ctx: Context, session_id: str, owner: str | None, sk: str, value: Any, what: str) -> Plan[None]:
    """Store a JSON value in the session's partition (replacing any), recording activity on the head.
    `value` None deletes the item instead (idempotently)."""
    now = ctx.now()
    key = keys.session_key(session_id, sk)
    if value is not None:
        item: Item = {**key, "saved_at": s(iso(now)), **body_attrs(value, what)}
        check_sizes(ctx, [item], what)
        child: dict[str, Any] = {"Put": {"TableName": ctx.sessions_table, "Item": item}}
    else:
        child = {"Delete": {"TableName": ctx.sessions_table, "Key": key}}

    def build(pos: Position) -> list[dict[str, Any]]:
        expr = Expr()
        condition = f"{guard(expr, now, owner)} AND {at_position(expr, pos, seq=False)}"
        return [head_update(ctx, session_id, expr, condition, touch(expr, session_id, now, pos.retention)), child]

    yield from write_session(ctx, session_id, owner, build, what=what)


def load_value(ctx: Context, session_id: str, owner: str | None, sk: str, default: Any) -> Plan[Any]:
    """The JSON value `put_child` stored, or `default`."""
    item = yield from load_child(ctx, session_id, owner, sk)
    return default if item is None else body_value(item)
