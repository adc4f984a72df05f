"""Plans for the transcript: append, list, read one, usage and compaction."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, n, s
from store.aws.calls import AwsError, Plan
from store.aws.items import message_item, record_from_item, usage_attr
from store.aws.plans.base import (
    Context,
    Position,
    again,
    backoff,
    get_item,
    guard,
    head_update,
    move_head,
    query,
    read_head,
    touch,
    touch_head,
    write_session,
)
from store.aws.plans.objects import delete_objects
from store.aws.plans.payloads import REF, committed, encode_all, resolve, resolve_one, stage
from store.aws.plans.transactions import (
    HEAD,
    IDEMPOTENCY,
    Actions,
    Cancelled,
    KeyClaimed,
    MessageChanged,
    Outcome,
    StateSeen,
    cancelled,
    contended,
    transact,
)
from store.conversation.preview import preview_of
from store.core import codec, rules
from store.core.paging import MAX_SEQ
from store.core.timeutil import epoch, expiry, now_epoch
from store.core.validation import new_id
from store.errors import Conflict, MessageNotFound
from store.models import Message, MessageRecord, Page, TokenUsage
from store.requests import (
    AppendMessages,
    GetLatestCompaction,
    GetMessage,
    LastMessages,
    ListMessages,
    MarkCompaction,
    PopMessage,
    UpdateUsage,
)


def usage_adds(expr: Expr, delta: TokenUsage) -> list[str]:
    """ADD clauses applying a usage delta to the head's totals."""
    return [f"{expr.name('usage_' + f)} {expr.value(n(v))}" for f, v in delta.numbers().items()]


def drafts(
    ctx: Context,
    session_id: str,
    messages: list[Message],
    now: Any,
    what: str,
    encoded: list[tuple[str, bytes]] | None = None,
) -> list[Item]:
    """Message items without their sequence numbers (ids assigned once, so retries reuse them), bodies
    inline; `payloads.stage` then moves out what does not fit."""
    if encoded is None:
        encoded = encode_all(ctx, [m.body() for m in messages], what)
    return [message_item(session_id, 0, m, m.id or new_id(), now, e) for m, e in zip(messages, encoded, strict=True)]


def write_messages(
    ctx: Context,
    session_id: str,
    owner: str | None,
    build: Callable[[Position], Actions],
    what: str,
    expected_seq: int | None,
    items: list[Item],
    expected: tuple[type[Outcome], ...] = (),
) -> Plan[tuple[Position, dict[str, Any]]]:
    """`write_session` for a write that appends the message drafts `items`: conditional on `expected_seq`,
    and recognising its own resent write by the first message being stored where it put it."""
    landed: Callable[[Position], Plan[bool]] = lambda pos: first_message_is(  # noqa: E731
        ctx, session_id, pos.last_seq + 1, items[0]
    )
    result: tuple[Position, dict[str, Any]] = yield from write_session(
        ctx, session_id, owner, build, what=what, expect_seq=expected_seq, landed=landed, expected=expected, queued=True
    )
    return result


def message_puts(ctx: Context, items: list[Item], first_seq: int) -> list[dict[str, Any]]:
    """Transaction Puts of message drafts numbered from `first_seq`, each refusing to overwrite."""
    return [
        {
            "Put": {
                "TableName": ctx.messages_table,
                "Item": {**item, keys.SEQ: n(first_seq + i)},
                "ConditionExpression": "attribute_not_exists(#s)",
                "ExpressionAttributeNames": {"#s": keys.SID},
            }
        }
        for i, item in enumerate(items)
    ]


def records(items: list[Item], first_seq: int) -> list[MessageRecord]:
    """The records of message drafts written from `first_seq`."""
    return [record_from_item({**item, keys.SEQ: n(first_seq + i)}) for i, item in enumerate(items)]


def preview_sets(expr: Expr, messages: list[Message]) -> list[str]:
    """The head's `preview` (the start of the first user message), set once: by the first write that has
    one, in the same update (no request of its own)."""
    text = preview_of(messages)
    if text is None:
        return []
    name = expr.name("preview")
    return [f"{name} = if_not_exists({name}, {expr.value(s(text))})"]


def total_usage(messages: list[Message]) -> TokenUsage:
    """The sum of the messages' usages."""
    total = TokenUsage()
    for m in messages:
        total = total.plus(m.usage)
    return total


def append_messages(ctx: Context, request: AppendMessages) -> Plan[list[MessageRecord]]:
    """Append atomically at the end of the transcript (gapless seqs), once per idempotency key."""
    session_id, owner, messages = request.session_id, request.owner, request.messages
    expected_seq, idempotency_key = request.expected_seq, request.idempotency_key
    now = ctx.now()
    inline = drafts(ctx, session_id, messages, now, "append_messages")
    staged = yield from stage(ctx, inline, "append_messages", session=(session_id, owner), write_id=new_id())
    items = staged.items
    total = total_usage(messages)
    digest = codec.digest([m.model_dump(mode="json") for m in messages]) if idempotency_key else ""

    def build(pos: Position) -> Actions:
        expr = Expr()
        sets = [f"{expr.name('last_seq')} = {expr.value(n(pos.last_seq + len(items)))}", *preview_sets(expr, messages)]
        actions = Actions(head=move_head(ctx, session_id, owner, pos, now, expr, sets, adds=usage_adds(expr, total)))
        if idempotency_key:
            first = items[0][keys.MID]["S"]
            claim = idempotency_put(ctx, session_id, idempotency_key, pos.last_seq + 1, len(items), digest, now, first)
            actions.add(IDEMPOTENCY, claim)
        actions.add_each("message", message_puts(ctx, items, pos.last_seq + 1))
        return staged.release(ctx, actions)

    def write() -> Plan[tuple[Position, dict[str, Any]]]:
        return write_messages(ctx, session_id, owner, build, "append_messages", expected_seq, items, (KeyClaimed,))

    try:
        pos, _ = yield from committed(ctx, staged, write)
    except KeyClaimed as exc:  # an earlier append with this key: its records are the result
        return (yield from replay(ctx, session_id, idempotency_key or "", digest, exc.old))
    ctx.remember(session_id, replace(pos, last_seq=pos.last_seq + len(items)))
    return records(inline, pos.last_seq + 1)


def first_message_is(ctx: Context, session_id: str, seq: int, draft: Item) -> Plan[bool]:
    """True when the message stored at `seq` is `draft` (ids are assigned before the first attempt)."""
    item = yield from get_item(ctx.messages_table, keys.message_key(session_id, seq), projection=[keys.MID])
    return item is not None and item.get(keys.MID) == draft[keys.MID]


def idempotency_put(
    ctx: Context, session_id: str, key: str, first_seq: int, count: int, digest: str, now: Any, first_id: str
) -> dict[str, Any]:
    """The transaction action that claims an idempotency key (an expired claim may be taken over). The
    claim names the first message's id, so a replay can tell its messages from later ones that took
    their places after a pop_message."""
    expr = Expr()
    ttl = expr.name(keys.TTL)
    item: Item = {
        **keys.session_key(session_id, keys.idempotency_sk(key)),
        "first_seq": n(first_seq),
        "count": n(count),
        "first_mid": s(first_id),
        "fingerprint": s(digest),
        keys.TTL: n(epoch(expiry(now, ctx.settings.idempotency_ttl))),
    }
    return {
        "Put": {
            "TableName": ctx.sessions_table,
            "Item": item,
            "ConditionExpression": f"attribute_not_exists({expr.name(keys.PK)}) OR {ttl} <= "
            f"{expr.value(n(now_epoch(now)))}",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **expr.params(),
        }
    }


def replay(ctx: Context, session_id: str, key: str, digest: str, claim: Item | None) -> Plan[list[MessageRecord]]:
    """The records an earlier append with this idempotency key wrote."""
    if claim is None:
        claim = yield from get_item(ctx.sessions_table, keys.session_key(session_id, keys.idempotency_sk(key)))
        if claim is None:
            raise Conflict("append_messages: idempotency key changed state during the call; retry")
    rules.check_replay(key, same_messages=claim["fingerprint"]["S"] == digest, intact=True)
    first, count = int(claim["first_seq"]["N"]), int(claim["count"]["N"])
    found = yield from query_range(ctx, session_id, first, first + count - 1, newest_first=False, limit=None)
    first_id = claim.get("first_mid", {}).get("S")
    intact = len(found) == count and (first_id is None or found[0][keys.MID]["S"] == first_id)
    rules.check_replay(key, same_messages=True, intact=intact)
    return [record_from_item(i) for i in (yield from resolve(ctx, found))]


def query_range(
    ctx: Context,
    session_id: str,
    lo: int,
    hi: int,
    *,
    newest_first: bool,
    limit: int | None,
    roles: frozenset[str] | None = None,
) -> Plan[list[Item]]:
    """Messages with lo <= seq <= hi, in either order, at most `limit` (filtered by role if asked)."""
    if lo > hi:
        return []
    params = range_query(ctx, session_id, lo, hi, newest_first=newest_first, limit=limit, roles=roles)
    items: list[Item] = yield from query(params, limit=limit, growing=bool(roles))
    return items


def range_query(
    ctx: Context,
    session_id: str,
    lo: int,
    hi: int,
    *,
    newest_first: bool,
    limit: int | None,
    roles: frozenset[str] | None = None,
) -> dict[str, Any]:
    """The Query parameters of `query_range` (strongly consistent), for plans that run several at once."""
    expr = Expr()
    params: dict[str, Any] = {
        "TableName": ctx.messages_table,
        "ConsistentRead": True,
        "ScanIndexForward": not newest_first,
        "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(session_id))} AND "
        f"{expr.name(keys.SEQ)} BETWEEN {expr.value(n(lo))} AND {expr.value(n(hi))}",
    }
    if roles:
        params["FilterExpression"] = f"{expr.name('role')} IN ({', '.join(expr.value(s(r)) for r in sorted(roles))})"
    if limit is not None:
        params["Limit"] = limit
    params.update(expr.params())
    return params


def list_messages(ctx: Context, request: ListMessages) -> Plan[Page[MessageRecord]]:
    """A page of the transcript: one session-head read, then one Query per 1 MB page."""
    session_id, owner, query = request.session_id, request.owner, request.query
    head = yield from read_head(ctx, session_id, owner)
    lo, hi = query.window(session_id, head.session.compaction_seq)
    items = yield from query_range(
        ctx, session_id, lo, hi, newest_first=query.newest_first, limit=query.fetch, roles=query.roles
    )
    return query.page(session_id, [record_from_item(i) for i in (yield from resolve(ctx, items))])


def last_messages(ctx: Context, request: LastMessages) -> Plan[list[MessageRecord]]:
    """The latest `count` messages, in chronological order."""
    session_id, owner, count = request.session_id, request.owner, request.n
    yield from read_head(ctx, session_id, owner)
    items = yield from query_range(ctx, session_id, 1, MAX_SEQ, newest_first=True, limit=count)
    return [record_from_item(i) for i in reversed((yield from resolve(ctx, items)))]


def find_message(ctx: Context, session_id: str, message_id: str) -> Plan[Item | None]:
    """A message item by id (through the by_message_id index, then by its key)."""
    expr = Expr()
    hits = yield from query(
        {
            "TableName": ctx.messages_table,
            "IndexName": keys.BY_MESSAGE_ID,
            "ConsistentRead": True,
            "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(session_id))} AND "
            f"{expr.name(keys.MID)} = {expr.value(s(message_id))}",
            **expr.params(),
        }
    )
    if not hits:
        return None
    seq = min(int(h[keys.SEQ]["N"]) for h in hits)
    item: Item | None = yield from get_item(ctx.messages_table, keys.message_key(session_id, seq))
    return (yield from resolve_one(ctx, item))


def get_message(ctx: Context, request: GetMessage) -> Plan[MessageRecord | None]:
    session_id, owner, message_id = request.session_id, request.owner, request.message_id
    yield from read_head(ctx, session_id, owner)
    item = yield from find_message(ctx, session_id, message_id)
    return None if item is None else record_from_item(item)


def usage_unchanged(expr: Expr, item: Item | None) -> str:
    """A condition that holds while the message `item` (as read) is still there with the usage it had:
    a write that depends on that usage (an update's difference, a pop's subtraction) fails, rather than
    double-counting, when a concurrent usage update commits in between."""
    old_usage = None if item is None else item.get("usage")
    if old_usage:
        return f"{expr.name('usage')} = {expr.value(old_usage)}"
    return f"attribute_exists({expr.name(keys.SID)}) AND attribute_not_exists({expr.name('usage')})"


def _usage_actions(
    ctx: Context,
    session_id: str,
    owner: str | None,
    item: Item,
    usage: TokenUsage,
    delta: TokenUsage,
    now: datetime,
    pos: Position,
) -> Actions:
    """The head moves its totals by `delta`; the message takes `usage` if its usage is still as read."""
    head = touch_head(ctx, session_id, owner, pos, now, lambda expr: usage_adds(expr, delta))
    mexpr = Expr()
    unchanged = usage_unchanged(mexpr, item)
    message = {
        "Update": {
            "TableName": ctx.messages_table,
            "Key": keys.message_key(session_id, int(item[keys.SEQ]["N"])),
            "UpdateExpression": f"SET {mexpr.name('usage')} = {mexpr.value(usage_attr(usage))}",
            "ConditionExpression": unchanged,
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **mexpr.params(),
        }
    }
    return Actions(head=head, message=message)


def update_usage(ctx: Context, request: UpdateUsage) -> Plan[MessageRecord]:
    """Replace a message's usage and move the session totals by the difference, atomically (re-reading
    the message when a concurrent update changed it first)."""
    session_id, owner, message_id, usage = request.session_id, request.owner, request.message_id, request.usage
    yield from read_head(ctx, session_id, owner)
    attempt = 0
    item = yield from find_message(ctx, session_id, message_id)
    while True:
        if item is None:
            raise MessageNotFound(session_id, message_id)
        old = record_from_item(item)
        delta = usage.plus(None, minus=old.usage)
        build = partial(_usage_actions, ctx, session_id, owner, item, usage, delta, ctx.now())
        try:
            yield from write_session(ctx, session_id, owner, build, what="update_usage", expected=(MessageChanged,))
        except MessageChanged as exc:  # another update got there first: again at once, from what it wrote
            attempt = yield from again(ctx, attempt, "update_usage")
            item = exc.old if exc.old is not None else (yield from find_message(ctx, session_id, message_id))
            continue
        return old.model_copy(update={"usage": usage})


def mark_compaction(ctx: Context, request: MarkCompaction) -> Plan[MessageRecord]:
    """Mark an appended message as a compaction; the latest such message starts the live context."""
    session_id, owner, message_id = request.session_id, request.owner, request.message_id
    attempt = 0
    while True:
        head = yield from read_head(ctx, session_id, owner)
        item = yield from find_message(ctx, session_id, message_id)
        if item is None:
            raise MessageNotFound(session_id, message_id)
        seq = int(item[keys.SEQ]["N"])
        now = ctx.now()
        current = head.session.compaction_seq
        expr = Expr()
        cseq = expr.name("compaction_seq")
        condition = (
            guard(expr, now, owner)
            + " AND "
            + (f"attribute_not_exists({cseq})" if current is None else f"{cseq} = {expr.value(n(current))}")
        )
        sets = touch(expr, session_id, now, Position.of(head).retention)
        sets.append(f"{cseq} = {expr.value(n(max(seq, current or 0)))}")
        mexpr = Expr()
        message = {
            "Update": {
                "TableName": ctx.messages_table,
                "Key": keys.message_key(session_id, seq),
                "UpdateExpression": f"SET {mexpr.name('kind')} = {mexpr.value(s('compaction'))}",
                "ConditionExpression": f"attribute_exists({mexpr.name(keys.SID)})",
                **mexpr.params(),
            }
        }
        actions = Actions(head=head_update(ctx, session_id, expr, condition, sets), message=message)
        try:
            yield transact(actions)
        except AwsError as err:
            if contended(err) or (failed := cancelled(err, actions)).conflicted():
                attempt = yield from backoff(ctx, attempt, "mark_compaction")
                continue
            # the head moved (another compaction; or the session went: the re-read says so) or the message
            # was popped (the re-read says so): again at once; anything else is not retried
            if not (failed.failed(HEAD) or failed.failed("message")):
                raise Cancelled(failed, "mark_compaction") from None
            attempt = yield from again(ctx, attempt, "mark_compaction")
            continue
        return record_from_item({**item, "kind": s("compaction")})


def get_latest_compaction(ctx: Context, request: GetLatestCompaction) -> Plan[MessageRecord | None]:
    session_id, owner = request.session_id, request.owner
    head = yield from read_head(ctx, session_id, owner)
    if head.session.compaction_seq is None:
        return None
    item = yield from get_item(ctx.messages_table, keys.message_key(session_id, head.session.compaction_seq))
    item = yield from resolve_one(ctx, item)
    return None if item is None else record_from_item(item)


class EmptyTranscript(Exception):
    """pop_message found nothing to pop (internal: the plan returns None)."""


@dataclass
class Tail:
    """What pop_message read of the transcript's last message for one position."""

    seq: int = 0
    stored: Item | None = None
    record: MessageRecord | None = None
    compaction_seq: int | None = None  # the head's compaction marker once the message is gone


def pop_message(ctx: Context, request: PopMessage) -> Plan[MessageRecord | None]:
    """Remove the latest message and return it (None for an empty transcript), in one transaction that
    holds only while the head is still at that message: of two concurrent pops one removes it and the
    other, learning the new head, takes the message before it. The head's sequence, usage totals and
    compaction marker move back with it; a saved state that has seen the message makes it a Conflict."""
    session_id, owner, expected_seq = request.session_id, request.owner, request.expected_seq
    tail = Tail()

    def prepare(pos: Position) -> Plan[None]:
        if pos.last_seq == 0:  # a head read (or a failure's) says so: nothing to pop
            raise EmptyTranscript
        stored = yield from get_item(ctx.messages_table, keys.message_key(session_id, pos.last_seq))
        item = yield from resolve_one(ctx, stored)
        tail.seq, tail.stored = pos.last_seq, stored
        tail.record = None if item is None else record_from_item(item)
        cseq = pos.compaction_seq
        tail.compaction_seq = (
            (yield from previous_compaction(ctx, session_id, pos.last_seq))
            if rules.marker_moves_back(cseq, pos.last_seq)
            else cseq
        )

    def build(pos: Position) -> Actions:
        # a message missing at the head's last_seq means the head moved: the head's condition fails
        usage = tail.record.usage if tail.record is not None else None
        last, cseq, new_cseq = pos.last_seq, pos.compaction_seq, tail.compaction_seq
        now = ctx.now()
        expr = Expr()
        cname = expr.name("compaction_seq")
        marker = f"attribute_not_exists({cname})" if cseq is None else f"{cname} = {expr.value(n(cseq))}"
        sets = [f"{expr.name('last_seq')} = {expr.value(n(last - 1))}"]
        if new_cseq is not None and new_cseq != cseq:
            sets.append(f"{cname} = {expr.value(n(new_cseq))}")
        removes = [cname] if new_cseq is None and cseq is not None else []
        delta = TokenUsage().plus(None, minus=usage)
        head = move_head(
            ctx,
            session_id,
            owner,
            pos,
            now,
            expr,
            sets,
            adds=usage_adds(expr, delta),
            removes=removes,
            conditions=[marker],
        )
        sexpr = Expr()
        mexpr = Expr()
        return Actions(
            head=head,
            state={
                "ConditionCheck": {
                    "TableName": ctx.sessions_table,
                    "Key": keys.session_key(session_id, keys.STATE),
                    "ConditionExpression": f"attribute_not_exists({sexpr.name(keys.PK)}) OR "
                    f"{sexpr.name('seq')} < {sexpr.value(n(last))}",
                    **sexpr.params(),
                }
            },
            message={
                "Delete": {
                    "TableName": ctx.messages_table,
                    "Key": keys.message_key(session_id, last),
                    # the head's totals lose the usage read in prepare: only while it is still that usage
                    "ConditionExpression": usage_unchanged(mexpr, tail.stored),
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    **mexpr.params(),
                }
            },
        )

    head = yield from read_head(ctx, session_id, owner)  # the position to start from, as it is now
    last = head.session.last_seq
    rules.expect(rules.stale_seq("pop_message", expected_seq, last))
    if last == 0:
        return None
    attempt = 0
    while True:
        try:
            pos, _ = yield from write_session(
                ctx,
                session_id,
                owner,
                build,
                what="pop_message",
                expect_seq=expected_seq,
                prepare=prepare,
                expected=(StateSeen, MessageChanged),
                queued=True,
            )
        except EmptyTranscript:
            return None
        except StateSeen:
            raise rules.state_has_seen(tail.seq) from None
        except MessageChanged:  # a usage update committed after prepare read the message: again, reading it anew
            attempt = yield from again(ctx, attempt, "pop_message")
            continue
        break
    ctx.remember(session_id, replace(pos, last_seq=pos.last_seq - 1, compaction_seq=tail.compaction_seq))
    if tail.stored is not None and REF in tail.stored:
        # the messages table has no stream, so the popped body's object goes now; best effort: the
        # session's purge deletes whatever a failure here leaves under its prefix
        with contextlib.suppress(AwsError):
            yield from delete_objects(ctx, [tail.stored[REF]["S"]])
    if tail.record is None:  # not reached: the write held only with the message there
        raise Conflict("pop_message: the message moved during the call; retry")
    return tail.record


def previous_compaction(ctx: Context, session_id: str, before: int) -> Plan[int | None]:
    """The sequence number of the latest compaction message before `before`, or None (reads newest
    first, a page at a time; only a pop of the compaction marker itself needs this)."""
    hi = before - 1
    while hi >= 1:
        lo = max(1, hi - 99)
        items = yield from query_range(ctx, session_id, lo, hi, newest_first=True, limit=None)
        for item in items:
            if item.get("kind", {}).get("S") == "compaction":
                return int(item[keys.SEQ]["N"])
        hi = lo - 1
    return None
