"""Plans for a session's state (versioned), save_full/load_full, interrupts and records."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, n, s
from store.aws.calls import Call, Plan
from store.aws.items import body_value, encoded_attrs, record_from_item, state_from_item, state_item
from store.aws.plans.base import (
    Context,
    Position,
    batch_get,
    find_head,
    get_item,
    live_head,
    move_head,
    remember,
    touch_head,
    usage_adds,
)
from store.aws.plans.messages import drafts, message_puts, preview_sets, total_usage, write_messages
from store.aws.plans.partitions import Span, read_range
from store.aws.plans.payloads import Staged, committed, encode, encode_all, resolve, resolve_one, stage
from store.aws.plans.transactions import Actions
from store.aws.plans.writes import write_session
from store.core import rules
from store.core.slots import records_slot
from store.core.timeutil import iso
from store.core.windows import Widening, state_position, window_start
from store.errors import SessionNotFound
from store.models import FullSession, Session, StateSnapshot
from store.requests import (
    ClearInterrupt,
    LoadFull,
    LoadInterrupt,
    LoadRecords,
    LoadState,
    SaveFull,
    SaveInterrupt,
    SaveRecords,
    SaveState,
)


def _state_actions(
    ctx: Context,
    session_id: str,
    owner: str | None,
    pos: Position,
    now: datetime,
    stored: Item,
    new_seq: int,
    extra_sets: list[str],
    expr: Expr,
    adds: list[str] | None = None,
) -> Actions:
    """The head update and the state Put for a write against `pos`; `stored` is the staged state item."""
    sets = [*extra_sets, f"{expr.name('state_version')} = {expr.value(n(pos.state_version + 1))}"]
    head = move_head(ctx, session_id, owner, pos, now, expr, sets, version=True, adds=adds or ())
    item = {**stored, "version": n(pos.state_version + 1), "seq": n(new_seq)}
    return Actions(head=head, state={"Put": {"TableName": ctx.sessions_table, "Item": item}})


def save_state(ctx: Context, request: SaveState) -> Plan[int]:
    """Store a new version of the state (conditional on `expected_version` when given); returns it."""
    session_id, owner, state = request.session_id, request.owner, request.state
    expected_version = request.expected_version
    now = ctx.now()
    write_id = ctx.new_id()
    inline = state_item(session_id, 0, 0, encode(ctx, state, "state"), now, write_id)
    staged = yield from stage(ctx, [inline], "save_state", session=(session_id, owner), write_id=write_id)

    def build(pos: Position) -> Actions:
        actions = _state_actions(ctx, session_id, owner, pos, now, staged.items[0], pos.last_seq, [], Expr())
        return staged.release(ctx, actions)

    def landed(pos: Position) -> Plan[bool]:
        item = yield from get_item(ctx.sessions_table, keys.session_key(session_id, keys.STATE))
        return item is not None and item.get("write_id") == s(write_id) and item["version"] == n(pos.state_version + 1)

    def write() -> Plan[tuple[Position, dict[str, Any]]]:
        return write_session(
            ctx,
            session_id,
            owner,
            build,
            what="save_state",
            expect_version=expected_version,
            landed=landed,
            queued=True,
        )

    pos, _ = yield from committed(ctx, staged, write)
    yield from remember(session_id, replace(pos, state_version=pos.state_version + 1))
    return pos.state_version + 1


KEPT_STATE_PREFIX = "STATEK#"  # the states `save_full` wrote lately (Settings.state_history), for rewinds


def kept_state_sk(version: int, history: int) -> str:
    """Where the state of `version` is kept: a ring of `history` slots."""
    return f"{KEPT_STATE_PREFIX}{version % history:03d}"


def save_full(ctx: Context, request: SaveFull) -> Plan[StateSnapshot]:
    """Append messages and store the state that follows them, in one transaction (with a copy of the state
    in the session's ring of kept states, so that a rewind can bring it back)."""
    session_id, owner, messages = request.session_id, request.owner, request.messages
    state, expected_seq = request.state, request.expected_seq
    now = ctx.now()
    encoded = encode_all(ctx, [*(m.body() for m in messages), state], "save_full")
    write_id = ctx.new_id()
    # a copy is kept when it fits the transaction: head, state, its copy, an intent, and the messages
    history = ctx.settings.state_history
    if not (request.keep_state and rules.keeps_state(len(messages), history)):
        history = 0
    inline = [*drafts(ctx, session_id, messages, now, "save_full", encoded[:-1])]
    inline.append(state_item(session_id, 0, 0, encoded[-1], now, write_id))
    if history:
        inline.append(state_item(session_id, 0, 0, encoded[-1], now, write_id))
    staged = yield from stage(ctx, inline, "save_full", session=(session_id, owner), write_id=write_id)
    kept = staged.items.pop() if history else None
    items, stored_state = staged.items[:-1], staged.items[-1]
    total = total_usage(messages)

    def build(pos: Position) -> Actions:
        expr = Expr()
        new_seq = pos.last_seq + len(items)
        seq_set = f"{expr.name('last_seq')} = {expr.value(n(new_seq))}"
        actions = _state_actions(
            ctx,
            session_id,
            owner,
            pos,
            now,
            stored_state,
            new_seq,
            [seq_set, *preview_sets(expr, messages)],
            expr,
            usage_adds(expr, total),
        )
        actions.add_each("message", message_puts(ctx, items, pos.last_seq + 1, pos.messages_of(session_id)))
        actions = staged.release(ctx, actions)
        if kept is not None:
            version = pos.state_version + 1
            sk = keys.session_key(session_id, kept_state_sk(version, history))
            copy = {**kept, **sk, "version": n(version), "seq": n(new_seq)}
            actions.add("kept", {"Put": {"TableName": ctx.sessions_table, "Item": copy}})
        return actions

    pos, _ = yield from committed(
        ctx, staged, lambda: write_messages(ctx, session_id, owner, build, "save_full", expected_seq, items)
    )
    new_seq = pos.last_seq + len(items)
    yield from remember(session_id, replace(pos, last_seq=new_seq, state_version=pos.state_version + 1))
    return StateSnapshot(version=pos.state_version + 1, state=state, seq=new_seq, saved_at=now)


def load_child(ctx: Context, session_id: str, owner: str | None, sk: str) -> Plan[Item | None]:
    """One item of a live session's partition (None when absent); SessionNotFound when the session is."""
    key = keys.session_key(session_id, sk)
    items = yield from batch_get(ctx, ctx.sessions_table, [keys.head_key(session_id), key])
    yield from live_head(ctx, session_id, find_head(items, session_id), owner)
    return next((i for i in items if i[keys.SK]["S"] == sk), None)


def load_state(ctx: Context, request: LoadState) -> Plan[StateSnapshot | None]:
    session_id, owner = request.session_id, request.owner
    item = yield from load_child(ctx, session_id, owner, keys.STATE)
    item = yield from resolve_one(ctx, item)
    return None if item is None else state_from_item(item)


WIDEN_PAGE = 8  # the first page of older messages read to widen a window (then 4x per page)


def load_full(ctx: Context, request: LoadFull) -> Plan[FullSession]:
    """Head and state read in one transaction, then the messages up to the head's last_seq: together
    they are the session as of that transaction's instant."""
    session_id, owner = request.session_id, request.owner
    wanted = [session_id, *(other for other, _ in request.with_states)]
    gets = [
        {"Get": {"TableName": ctx.sessions_table, "Key": key}}
        for sid in wanted
        for key in (keys.head_key(sid), keys.session_key(sid, keys.STATE))
    ]
    resp = yield Call("transact_get_items", {"TransactItems": gets})
    found = ([r.get("Item") for r in resp.get("Responses", [])] + [None] * len(gets))[: len(gets)]
    head_found, state_found = found[0], found[1]
    head = yield from live_head(ctx, session_id, head_found, owner)
    states, others = yield from other_states(ctx, request, found[2:])
    session = head.session
    after = None
    if request.after_seq_at is not None and state_found is not None:  # the state says where the window starts
        state_found = yield from resolve_one(ctx, state_found)
        after = state_position(body_value(state_found) if state_found else None, request.after_seq_at)
    lo = window_start(session.last_seq, session.compaction_seq, request.since_compaction, request.last, after)
    items = yield from read_range(ctx, Span(head.part, lo, session.last_seq))
    state_items = [state_found] if state_found else []
    resolved = yield from resolve(ctx, [*state_items, *items])
    window = Widening([record_from_item(i) for i in resolved[len(state_items) :]])
    page = WIDEN_PAGE
    while window.wants:  # older messages, newest first, in growing pages, until every result has its call
        older = yield from read_range(ctx, Span(head.part, max(1, window.start - page), window.start - 1, True, page))
        window.take(record_from_item(i) for i in (yield from resolve(ctx, older)))
        page = min(page * 4, window.room)
    return FullSession(
        session=session,
        messages=window.window(),
        state=state_from_item(resolved[0]) if state_items else None,
        states=states,
        sessions=others,
    )


def other_states(
    ctx: Context, request: LoadFull, found: list[Item | None]
) -> Plan[tuple[dict[str, StateSnapshot | None], dict[str, Session | None]]]:
    """The states of the sessions `with_states` names, and those sessions, from their head and state items
    (in that order, read in load_full's transaction): None for a session absent to its owner (and for a state
    not saved); a Conflict for one whose transcript is still being copied in, as `load_state` says."""
    states: dict[str, StateSnapshot | None] = {}
    sessions: dict[str, Session | None] = {}
    for (other, owner), head_item, state_item_found in zip(request.with_states, found[::2], found[1::2], strict=True):
        try:
            head = yield from live_head(ctx, other, head_item, request.owner if owner is None else owner)
        except SessionNotFound:
            states[other] = sessions[other] = None
            continue
        sessions[other] = head.session
        resolved = yield from resolve_one(ctx, state_item_found)
        states[other] = state_from_item(resolved) if resolved is not None else None
    return states, sessions


def put_child(ctx: Context, session_id: str, owner: str | None, sk: str, value: Any, what: str) -> Plan[None]:
    """Store a JSON value in the session's partition (replacing any), recording activity on the head.
    `value` None deletes the item instead (idempotently)."""
    now = ctx.now()
    key = keys.session_key(session_id, sk)
    staged = Staged([])
    if value is not None:
        item: Item = {**key, "saved_at": s(iso(now)), **encoded_attrs(encode(ctx, value, what))}
        staged = yield from stage(ctx, [item], what, session=(session_id, owner), write_id=ctx.new_id())
        child: dict[str, Any] = {"Put": {"TableName": ctx.sessions_table, "Item": staged.items[0]}}
    else:
        child = {"Delete": {"TableName": ctx.sessions_table, "Key": key}}

    def build(pos: Position) -> Actions:
        return staged.release(ctx, Actions(head=touch_head(ctx, session_id, owner, pos, now), child=child))

    yield from committed(ctx, staged, lambda: write_session(ctx, session_id, owner, build, what=what))


def load_value(ctx: Context, session_id: str, owner: str | None, sk: str, default: Any) -> Plan[Any]:
    """The JSON value `put_child` stored, or `default`."""
    item = yield from load_child(ctx, session_id, owner, sk)
    item = yield from resolve_one(ctx, item)
    return default if item is None else body_value(item)


def save_interrupt(ctx: Context, request: SaveInterrupt) -> Plan[None]:
    """Store the pending interrupt (replacing any) with the head's touch."""
    session_id, owner, interrupt = request.session_id, request.owner, request.interrupt
    yield from put_child(ctx, session_id, owner, keys.INTERRUPT, interrupt, "interrupt")


def load_interrupt(ctx: Context, request: LoadInterrupt) -> Plan[dict[str, Any] | None]:
    """The pending interrupt, or None."""
    session_id, owner = request.session_id, request.owner
    found: dict[str, Any] | None = yield from load_value(ctx, session_id, owner, keys.INTERRUPT, None)
    return found


def clear_interrupt(ctx: Context, request: ClearInterrupt) -> Plan[None]:
    """Delete the pending interrupt (idempotently) with the head's touch."""
    session_id, owner = request.session_id, request.owner
    yield from put_child(ctx, session_id, owner, keys.INTERRUPT, None, "interrupt")


def save_records(ctx: Context, request: SaveRecords) -> Plan[None]:
    """Replace the session's records of `kind` with the head's touch."""
    session_id, owner, kind, records = request.session_id, request.owner, request.kind, request.records
    yield from put_child(ctx, session_id, owner, keys.records_sk(kind), records, records_slot(kind))


def load_records(ctx: Context, request: LoadRecords) -> Plan[list[Any]]:
    """The session's records of `kind` (empty when none were saved)."""
    session_id, owner, kind = request.session_id, request.owner, request.kind
    found: list[Any] = yield from load_value(ctx, session_id, owner, keys.records_sk(kind), [])
    return found
