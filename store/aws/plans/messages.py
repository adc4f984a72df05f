"""Plans for the transcript: append, list, read one, usage, compaction and pop.

A session's messages are in its partition of the messages table (`Position.part`, the session id's own
until a rewind moves it: `partitions.py`). Of forks, a write that changes a message already there knows
one thing: a copy out of the session may still take it (`Position.pinned`), and then it is refused."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, action, n, s
from store.aws.calls import AwsError, Plan
from store.aws.items import Head, message_item, record_from_item, usage_attr
from store.aws.packs import PACK_MARK, assign_ids, stored_items
from store.aws.plans.base import (
    Context,
    Position,
    again,
    backoff,
    count_edit,
    get_item,
    guard,
    head_update,
    in_part,
    move_head,
    read_head,
    remember,
    touch,
    touch_head,
    unpinned,
    usage_adds,
)
from store.aws.plans.branches import read_branch
from store.aws.plans.objects import delete_objects
from store.aws.plans.partitions import (
    Span,
    find,
    find_stored,
    head_and_range,
    previous_compaction,
    put_new,
    read_at,
    read_range,
    stored_at,
)
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
from store.aws.plans.unpacking import own_item
from store.aws.plans.writes import write_session
from store.conversation.preview import preview_of
from store.core import codec, paging, rules
from store.core.paging import MAX_SEQ
from store.core.timeutil import epoch, expiry, now_epoch
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


def drafts(
    ctx: Context,
    session_id: str,
    messages: list[Message],
    now: Any,
    what: str,
    encoded: list[tuple[str, bytes]] | None = None,
) -> list[Item]:
    """Message items without their sequence numbers (ids assigned once, so retries reuse them; small ones
    marked with the pack they go in, `packs.assign_ids`), bodies inline; `payloads.stage` then moves out what
    does not fit."""
    if encoded is None:
        encoded = encode_all(ctx, [m.body() for m in messages], what)
    ids, packs = assign_ids([m.id or None for m in messages], [len(e[1]) for e in encoded], ctx.new_id)
    out = []
    for m, e, mid, pack in zip(messages, encoded, ids, packs, strict=True):
        item = message_item(session_id, 0, m, mid, now, e)
        out.append(item if pack is None else {**item, PACK_MARK: s(pack)})
    return out


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
    landed: Callable[[Position], Plan[bool]] = lambda pos: first_item_is(  # noqa: E731
        ctx, stored_items(items, pos.last_seq + 1, pos.messages_of(session_id))[0]
    )
    result: tuple[Position, dict[str, Any]] = yield from write_session(
        ctx, session_id, owner, build, what=what, expect_seq=expected_seq, landed=landed, expected=expected, queued=True
    )
    return result


def message_puts(ctx: Context, items: list[Item], first_seq: int, part: str) -> list[dict[str, Any]]:
    """Transaction Puts of message drafts into partition `part`, numbered from `first_seq` (small ones packed,
    `packs.stored_items`), each refusing to overwrite."""
    return [put_new(ctx, item) for item in stored_items(items, first_seq, part)]


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
    staged = yield from stage(ctx, inline, "append_messages", session=(session_id, owner), write_id=ctx.new_id())
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
        actions.add_each("message", message_puts(ctx, items, pos.last_seq + 1, pos.messages_of(session_id)))
        return staged.release(ctx, actions)

    def write() -> Plan[tuple[Position, dict[str, Any]]]:
        return write_messages(ctx, session_id, owner, build, "append_messages", expected_seq, items, (KeyClaimed,))

    try:
        pos, _ = yield from committed(ctx, staged, write)
    except KeyClaimed as exc:  # an earlier append with this key: its records are the result
        return (yield from replay(ctx, session_id, owner, idempotency_key or "", digest, exc.old))
    yield from remember(session_id, replace(pos, last_seq=pos.last_seq + len(items)))
    return records(inline, pos.last_seq + 1)


def first_item_is(ctx: Context, written: Item) -> Plan[bool]:
    """True when the item stored at `written`'s key is `written` (ids are assigned before the first attempt)."""
    key = {k: written[k] for k in (keys.SID, keys.SEQ)}
    item = yield from get_item(ctx.messages_table, key, projection=[keys.MID])
    return item is not None and item.get(keys.MID) == written[keys.MID]


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
    condition = f"attribute_not_exists({expr.name(keys.PK)}) OR {ttl} <= {expr.value(n(now_epoch(now)))}"
    return action("Put", ctx.sessions_table, item, expr, condition=condition, old=True)


def replay(
    ctx: Context, session_id: str, owner: str | None, key: str, digest: str, claim: Item | None
) -> Plan[list[MessageRecord]]:
    """The records an earlier append with this idempotency key wrote."""
    if claim is None:
        claim = yield from get_item(ctx.sessions_table, keys.session_key(session_id, keys.idempotency_sk(key)))
        if claim is None:
            raise Conflict("append_messages: idempotency key changed state during the call; retry")
    rules.check_replay(key, same_messages=claim["fingerprint"]["S"] == digest, intact=True)
    first, count = int(claim["first_seq"]["N"]), int(claim["count"]["N"])
    head = yield from read_head(ctx, session_id, owner)
    found = yield from read_range(ctx, Span(head.part, first, first + count - 1))
    first_id = claim.get("first_mid", {}).get("S")
    intact = len(found) == count and (first_id is None or found[0][keys.MID]["S"] == first_id)
    rules.check_replay(key, same_messages=True, intact=intact)
    return [record_from_item(i) for i in (yield from resolve(ctx, found))]


def list_messages(ctx: Context, request: ListMessages) -> Plan[Page[MessageRecord]]:
    """A page of the transcript (or of one of its branches): the session head and the first 1 MB page read side
    by side (`head_and_range`; a branch's item first, for a branch), then one Query per 1 MB page more."""
    session_id, owner, query, branch = request.session_id, request.owner, request.query, request.branch
    scope = paging.cursor_scope(session_id, branch)

    def span_of(part: str, compaction_seq: int | None) -> Span:
        lo, hi = query.window(scope, compaction_seq)
        return Span(part, lo, hi, query.newest_first, query.fetch, query.roles)

    if branch is None:
        _, items = yield from head_and_range(ctx, session_id, owner, span_of)
    else:
        kept = yield from read_branch(ctx, session_id, owner, branch)
        items = yield from read_range(ctx, span_of(kept.part, kept.compaction_seq))
    return query.page(scope, [record_from_item(i) for i in (yield from resolve(ctx, items))])


def last_messages(ctx: Context, request: LastMessages) -> Plan[list[MessageRecord]]:
    """The latest `count` messages, in chronological order: the head and them read side by side."""
    session_id, owner, count = request.session_id, request.owner, request.n
    _, items = yield from head_and_range(
        ctx, session_id, owner, lambda part, _: Span(part, 1, MAX_SEQ, newest_first=True, limit=count)
    )
    return [record_from_item(i) for i in reversed((yield from resolve(ctx, items)))]


def get_message(ctx: Context, request: GetMessage) -> Plan[MessageRecord | None]:
    session_id, owner, message_id = request.session_id, request.owner, request.message_id
    head = yield from read_head(ctx, session_id, owner)
    found = yield from find(ctx, head.part, message_id)
    item = yield from resolve_one(ctx, found)
    return None if item is None else record_from_item(item)


def usage_unchanged(expr: Expr, item: Item | None) -> str:
    """A condition that holds while the message `item` (as read) is still there with the usage it had:
    a write that depends on that usage (an update's difference, a pop's subtraction) fails, rather than
    double-counting, when a concurrent usage update commits in between."""
    old_usage = None if item is None else item.get("usage")
    if old_usage:
        return f"{expr.name('usage')} = {expr.value(old_usage)}"
    return f"attribute_exists({expr.name(keys.SID)}) AND attribute_not_exists({expr.name('usage')})"


def message_update(ctx: Context, part: str, seq: int, changes: dict[str, Any], condition: str, expr: Expr) -> Any:
    """The transaction Update of message `seq` of partition `part`: SET `changes`, while `condition` holds."""
    sets = ", ".join(f"{expr.name(k)} = {expr.value(v)}" for k, v in changes.items())
    return action(
        "Update",
        ctx.messages_table,
        keys.message_key(part, seq),
        expr,
        update=f"SET {sets}",
        condition=condition,
        old=True,
    )


def found_message(ctx: Context, session_id: str, owner: str | None, message_id: str) -> Plan[tuple[Head, Item]]:
    """The session's head and its message `message_id` as stored in an item of its own (MessageNotFound when it
    has none): a message in a pack is unpacked first (`unpacking.unpack`)."""
    head = yield from read_head(ctx, session_id, owner)
    item = yield from own_item(ctx, session_id, owner, head.part_attr, lambda: find_stored(ctx, head.part, message_id))
    if item is None:
        raise MessageNotFound(session_id, message_id)
    return head, item


def update_usage(ctx: Context, request: UpdateUsage) -> Plan[MessageRecord]:
    """Replace a message's usage and move the session totals by the difference, atomically (reading the
    message again when a concurrent update changed it first). A message a fork's copy still takes is not
    changed meanwhile (a retryable Conflict)."""
    session_id, owner, message_id, usage = request.session_id, request.owner, request.message_id, request.usage
    attempt = 0
    while True:
        head, item = yield from found_message(ctx, session_id, owner, message_id)
        seq = int(item[keys.SEQ]["N"])
        rules.check_unpinned("update_usage", seq, head.pinned)
        old = record_from_item((yield from resolve_one(ctx, item)) or item)
        delta = usage.plus(None, minus=old.usage)
        now = ctx.now()

        def build(
            pos: Position, seq: int = seq, item: Item = item, delta: TokenUsage = delta, now: datetime = now
        ) -> Actions:
            rules.check_unpinned("update_usage", seq, pos.pinned)
            head = touch_head(
                ctx, session_id, owner, pos, now, lambda e: usage_adds(e, delta), lambda e: [unpinned(e, seq)]
            )
            mexpr = Expr()
            part = pos.messages_of(session_id)
            message = message_update(ctx, part, seq, {"usage": usage_attr(usage)}, usage_unchanged(mexpr, item), mexpr)
            return Actions(head=head, message=message)

        try:
            yield from write_session(ctx, session_id, owner, build, what="update_usage", expected=(MessageChanged,))
        except MessageChanged:  # another write changed it first: again at once, from what is there now
            attempt = yield from again(ctx, attempt, "update_usage")
            continue
        return old.model_copy(update={"usage": usage})


def mark_compaction(ctx: Context, request: MarkCompaction) -> Plan[MessageRecord]:
    """Mark an appended message as a compaction; the latest such message starts the live context. A message
    a fork's copy still takes is not changed meanwhile (a retryable Conflict)."""
    session_id, owner, message_id = request.session_id, request.owner, request.message_id
    attempt = 0
    while True:
        head, item = yield from found_message(ctx, session_id, owner, message_id)
        seq = int(item[keys.SEQ]["N"])
        rules.check_unpinned("mark_compaction", seq, head.pinned)
        current = head.session.compaction_seq
        now = ctx.now()
        expr = Expr()
        cseq = expr.name("compaction_seq")
        marker = expr.as_read("compaction_seq", current)
        condition = " AND ".join([guard(expr, now, owner), marker, in_part(expr, head.part_attr), unpinned(expr, seq)])
        sets = [
            *touch(expr, session_id, now, Position.of(head).retention),
            f"{cseq} = {expr.value(n(max(seq, current or 0)))}",
        ]
        mexpr = Expr()
        marked = message_update(
            ctx, head.part, seq, {"kind": s("compaction")}, f"attribute_exists({mexpr.name(keys.SID)})", mexpr
        )
        actions = Actions(head=head_update(ctx, session_id, expr, condition, sets), message=marked)
        try:
            yield transact(actions, ctx.new_id())
        except AwsError as err:
            failed = None if contended(err) else cancelled(err, actions)
            if failed is None or failed.conflicted():
                attempt = yield from backoff(ctx, attempt, "mark_compaction")
                continue
            # the head moved (another compaction, a pin; or the session went: the re-read says so) or the
            # message was popped (the re-read says so): again at once; anything else is not retried
            if not (failed.failed(HEAD) or failed.failed("message")):
                raise Cancelled(failed, "mark_compaction") from err
            attempt = yield from again(ctx, attempt, "mark_compaction")
            continue
        resolved = yield from resolve_one(ctx, item)
        return record_from_item({**(resolved or item), "kind": s("compaction")})


def get_latest_compaction(ctx: Context, request: GetLatestCompaction) -> Plan[MessageRecord | None]:
    session_id, owner = request.session_id, request.owner
    head = yield from read_head(ctx, session_id, owner)
    if head.session.compaction_seq is None:
        return None
    found = yield from read_at(ctx, head.part, head.session.compaction_seq)
    item = yield from resolve_one(ctx, found)
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
    compaction marker move back with it; a saved state that has seen the message makes it a Conflict, and so
    does a fork's copy that still takes it (retryable)."""
    session_id, owner, expected_seq = request.session_id, request.owner, request.expected_seq
    tail = Tail()

    def prepare(pos: Position) -> Plan[None]:
        if pos.last_seq == 0:  # a head read (or a failure's) says so: nothing to pop
            raise EmptyTranscript
        rules.check_unpinned("pop_message", pos.last_seq, pos.pinned)
        part = pos.messages_of(session_id)
        # the last message in an item of its own (one that shares a pack is unpacked first)
        stored = yield from own_item(ctx, session_id, owner, pos.part, lambda: stored_at(ctx, part, pos.last_seq))
        item = yield from resolve_one(ctx, stored)
        tail.seq, tail.stored = pos.last_seq, stored
        tail.record = None if item is None else record_from_item(item)
        cseq = pos.compaction_seq
        tail.compaction_seq = (
            (yield from previous_compaction(ctx, part, pos.last_seq))
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
        marker = expr.as_read("compaction_seq", cseq)
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
            adds=[*usage_adds(expr, delta), count_edit(expr)],
            removes=removes,
            conditions=[marker, unpinned(expr, last)],
        )
        sexpr, mexpr = Expr(), Expr()
        unseen = f"attribute_not_exists({sexpr.name(keys.PK)}) OR {sexpr.name('seq')} < {sexpr.value(n(last))}"
        state = action(
            "ConditionCheck", ctx.sessions_table, keys.session_key(session_id, keys.STATE), sexpr, condition=unseen
        )
        # the head's totals lose the usage read in prepare: only while it is still that usage
        gone = usage_unchanged(mexpr, tail.stored)
        message_key = keys.message_key(pos.messages_of(session_id), last)
        message = action("Delete", ctx.messages_table, message_key, mexpr, condition=gone, old=True)
        return Actions(head=head, state=state, message=message)

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
        except StateSeen as seen:
            raise rules.state_has_seen(tail.seq) from seen
        except MessageChanged:  # a write got there first: again, reading it anew
            attempt = yield from again(ctx, attempt, "pop_message")
            continue
        break
    yield from remember(session_id, replace(pos, last_seq=pos.last_seq - 1, compaction_seq=tail.compaction_seq))
    if tail.stored is not None and REF in tail.stored:
        # the messages table has no stream, so the popped body's object goes now; best effort: the
        # session's purge deletes whatever a failure here leaves under its prefix
        with contextlib.suppress(AwsError):
            yield from delete_objects(ctx, [tail.stored[REF]["S"]])
    if tail.record is None:  # not reached: the write held only with the message there
        raise Conflict("pop_message: the message moved during the call; retry")
    return tail.record
