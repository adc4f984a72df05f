"""Plans for forks (docs/decisions.md, "Fork and rewind"; rewinds and branches are `rewinds.py`).

A fork is a new session holding its source's messages 1..at_seq, its state, records and artifacts. What
goes along besides the messages is put under an invisible head first; then one transaction makes the fork
and pins its copy on the source (`copies.py`): a fork of up to `Settings.fork_inline_messages` messages (and
a few artifact versions) stays invisible while its copy is made within the call, and is published whole; a
longer one is visible at once as `copying`, with its progress, and the copy job brings its messages in after
the call. Meanwhile the messages it takes are pinned in its source (a change to them is refused)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, Item, action, get_int, get_s, n, s
from store.aws.calls import Plan
from store.aws.items import (
    FORKING,
    PINNED,
    PINREV,
    SEED,
    Head,
    Pin,
    Seed,
    head_from_item,
    head_item,
    pin_attr,
    record_from_item,
    state_item,
)
from store.aws.plans.base import (
    EDITS,
    Context,
    Refused,
    again,
    batch_delete,
    get_item,
    guard,
    in_part,
    partition_prefix,
    read_head,
    settle,
)
from store.aws.plans.copies import finish_copy, placed
from store.aws.plans.objects import abandon
from store.aws.plans.partitions import Span, previous_compaction, read_range
from store.aws.plans.payloads import Staged, encode, resolve, stage
from store.aws.plans.sessions import claim, purge, unseen_head
from store.aws.plans.state import KEPT_STATE_PREFIX
from store.aws.plans.transactions import HEAD, Actions, Cancelled
from store.conversation.preview import preview_of
from store.core import rules
from store.core.forking import forked_session
from store.core.timeutil import epoch
from store.errors import Conflict
from store.models import Session
from store.requests import UNSET, ForkSession

COPIED = ("ART", keys.RECORDS_PREFIX, KEPT_STATE_PREFIX)  # sort-key prefixes of what a fork takes along


# ---------------------------------------------------------------- fork


def fork_session(ctx: Context, request: ForkSession) -> Plan[Session]:
    """Fork the session (see the module docstring): a head claimed invisibly, the source's state, records,
    kept states and artifact items copied under it, then one transaction that makes the fork and pins its copy
    on the source, only while what the fork takes is as it was read: appends and saves to the source
    meanwhile leave it alone (the fork is the source as read), while a pop into it, an artifact deleted, a
    moved compaction marker or a rewind make the fork start over. Bounded: a few requests plus one per 25
    items copied along, whatever the transcript's length; its messages are copied within the call only up to
    `fork_inline_messages`. A session whose own copy is still going on is not forked (Conflict)."""
    source_id, owner, target = request.session_id, request.owner, request.new_session_id
    attempt = 0
    token = ctx.new_id()
    head = yield from read_head(ctx, source_id, owner)
    names = request.metadata is not UNSET
    rules.check_copyable("fork_session", head.session.metadata, names_its_metadata=names)
    last = rules.fork_point(request.at_seq, head.session.last_seq)

    def forking(now: datetime) -> Item:
        return {**unseen_head(target, head.session.owner, now), FORKING: s(token)}

    # the new id is held by an invisible head for every attempt (one claim: a head removed between attempts
    # would bring the cascade's purge of that id down on the next one)
    claimed_for = head.session.owner
    yield from claim(ctx, target, claimed_for, forking, lambda old: get_s(old, FORKING) == token)
    try:
        while True:
            made = yield from _fork_once(ctx, request, head, last, token)
            if made is not None:
                break
            attempt = yield from again(ctx, attempt, "fork_session")  # the source moved: fork it as it is now
            head = yield from read_head(ctx, source_id, owner)
            if head.session.owner != claimed_for:
                raise Conflict(f"fork_session: session {source_id!r} was replaced while it was being forked")
            last = rules.fork_point(request.at_seq, head.session.last_seq)
        if made.seed is not None and made.seed.hidden:  # a short fork: copied now, and published whole
            yield from finish_copy(ctx, target)
    except BaseException:
        yield from _undo(ctx, target, claimed_for, [])  # nothing of an attempt is left: the head goes too
        raise
    item = yield from get_item(ctx.sessions_table, keys.head_key(target))
    return head_from_item(item).session if item is not None else made.session


def _fork_once(ctx: Context, request: ForkSession, head: Head, last: int, token: str) -> Plan[Head | None]:
    """One attempt at a fork of `head` (as read) under the invisible head `token` holds: the new head, or None
    when the source moved meanwhile (what the attempt put under the head is then taken back; the head stays,
    for the next attempt). Anything else removes the head too."""
    target, source = request.new_session_id, head.session
    owner = source.owner
    staged: list[Staged] = []
    items: list[Item] = []
    try:
        children = yield from _children(ctx, request, source.id, target, last)
        taken = yield from placed(ctx, children, target, owner)
        staged.append(taken)
        if request.state is not UNSET:
            given = yield from _given_state(ctx, target, owner, request.state, last)
            staged.append(given)
        items = [i for done in staged for i in done.items]
        yield from _put_children(ctx, target, token, items)
        made, seed = yield from _forked_head(ctx, request, head, last, token, items, children)
        actions = _fork_actions(ctx, request, head, made, token, seed, target)
        actions.add_each("intent", [done.intent.release(ctx) for done in staged if done.intent is not None])
        refused = yield from settle(ctx, actions, "fork_session")
        if refused is not None:
            if refused.failed.failed("fork") or not refused.failed.failed(HEAD):
                _refused(refused, target)
            yield from _take_back(ctx, staged, items)  # the source moved: start over
            return None
        return head_from_item(made)
    except BaseException:
        yield from _undo(ctx, target, owner, staged)
        raise


def _forked_head(
    ctx: Context, request: ForkSession, head: Head, last: int, token: str, items: list[Item], children: list[Item]
) -> Plan[tuple[Item, Seed | None]]:
    """The fork's head item (its compaction, preview and state version as of message `last`) and its copy's
    seed when it has messages or artifact versions to copy (a fork too long to copy inline stays invisible,
    `unseen_head`, until its copy is done)."""
    source, target = head.session, request.new_session_id
    state = next((i for i in items if i[keys.SK]["S"] == keys.STATE), None)
    compaction = source.compaction_seq
    if compaction is not None and compaction > last:
        compaction = yield from previous_compaction(ctx, head.part, last + 1)
    preview = yield from preview_span(ctx, head.part, 1, min(last, rules.PREVIEW_WINDOW))
    versions = sum(1 for c in children if c[keys.SK]["S"].startswith(keys.ARTIFACT_VERSION_PREFIX))
    now = ctx.now()
    session = forked_session(
        source,
        target,
        last,
        now,
        title=request.title,
        metadata=request.metadata,
        state_version=get_int(state, "version") if state else 0,
        compaction_seq=compaction,
        preview=preview,
    )
    ttl = epoch(session.expires_at) if session.expires_at else None
    made = head_item(session, ttl)
    made.update(last_seq=n(last), state_version=n(session.state_version))
    if compaction is not None:
        made["compaction_seq"] = n(compaction)
    if preview is not None:
        made["preview"] = s(preview)
    if last == 0 and not versions:
        return made, None
    return made, _seeded(ctx, made, head, token, (last, versions), (ttl, now))


def _seeded(
    ctx: Context, made: Item, head: Head, token: str, sizes: tuple[int, int], times: tuple[int | None, datetime]
) -> Seed:
    """The fork's copy seed, put on its head `made` (and the head made invisible when the copy is too long to
    make inline: a dead one expires and is purged). `sizes`: the messages and artifact versions to copy;
    `times`: the fork's expiry (epoch seconds) and when it is made."""
    (last, versions), (ttl, now) = sizes, times
    hidden = rules.copies_inline(last, versions, ctx.settings.fork_inline_messages)
    seed = Seed(token, last, 0, head.session.id, head.part, bool(versions), hidden=hidden, ttl=ttl)
    made[SEED] = seed.to_attr()
    if hidden:  # invisible until its copy is done (`copies._publish`)
        target = made[keys.PK]["S"][len(keys.session_pk("")) :]
        unseen = unseen_head(target, head.session.owner, now)
        made.update({k: v for k, v in unseen.items() if k in ("deleting", keys.TTL)})
        made[FORKING] = s(token)
    return seed


CHILDREN_PER_WRITE = 99  # a transaction's items: the fork's head checked, and these


def _put_children(ctx: Context, target: str, token: str, items: list[Item]) -> Plan[None]:
    """Put what the fork takes along under its invisible head, 99 items a transaction, each conditioned on the
    head still being this fork's (a session made under the id meanwhile has purged it: then Conflict, and
    nothing lands in that session)."""
    for start in range(0, len(items), CHILDREN_PER_WRITE):
        check = _still_forking(ctx, target, token, "ConditionCheck", keys.head_key(target))
        puts = [action("Put", ctx.sessions_table, i) for i in items[start : start + CHILDREN_PER_WRITE]]
        refused = yield from settle(ctx, Actions(fork=check).add_each("child", puts), "fork_session")
        if refused is not None:
            _refused(refused, target)


def _refused(refused: Refused, target: str) -> None:
    """Raise what a refused write of the fork means: Conflict when its head is no longer this fork's (a
    session made under the id meanwhile), else the cancellation as it came."""
    if refused.failed.failed("fork"):
        raise Conflict(f"fork_session: session {target!r} was taken over while it was being made") from refused.cause
    raise Cancelled(refused.failed, "fork_session") from refused.cause


def _fork_actions(
    ctx: Context, request: ForkSession, head: Head, made: Item, token: str, seed: Seed | None, target: str
) -> Actions:
    """The transaction making the fork: its head (while it is still this fork's), and the source's head,
    unchanged since it was read, pinning the copy when there is one."""
    fork = _still_forking(ctx, target, token, "Put", made)
    expr = Expr()
    last = seed.through if seed is not None else 0
    compaction = head.session.compaction_seq
    condition = " AND ".join(
        [
            guard(expr, ctx.now(), request.owner),
            in_part(expr, head.part_attr),
            # what the fork takes is as read: no message up to `last` popped (appends after it are not its),
            # no artifact deleted, the compaction marker where it was
            f"{expr.name('last_seq')} >= {expr.value(n(last))}",
            expr.as_read(EDITS, head.edits or None),
            expr.as_read("compaction_seq", compaction),
        ]
    )
    source = keys.head_key(head.session.id)
    if seed is None:
        return Actions(
            head=action("ConditionCheck", ctx.sessions_table, source, expr, condition=condition, old=True), fork=fork
        )
    # the pin, and `pinned` (the last message any copy out of the source takes) worked out from the pins as
    # read: only while no pin came or went meanwhile
    rev = expr.name(PINREV)
    condition += " AND " + expr.as_read(PINREV, head.pinrev or None)
    pin = expr.value(Pin(token, seed.through).to_attr())
    pinned = expr.value(n(max(head.pinned, seed.through)))
    update = f"SET {expr.name(pin_attr(target))} = {pin}, {expr.name(PINNED)} = {pinned} ADD {rev} {expr.value(n(1))}"
    pinning = action("Update", ctx.sessions_table, source, expr, update=update, condition=condition, old=True)
    return Actions(head=pinning, fork=fork)


def _still_forking(ctx: Context, target: str, token: str, kind: str, item: Item) -> dict[str, Any]:
    """The action `kind` on `item` (a key for a check), while the fork's head is still its invisible one."""
    expr = Expr()
    return action(kind, ctx.sessions_table, item, expr, condition=f"{expr.name(FORKING)} = {expr.value(s(token))}")


def _children(ctx: Context, request: ForkSession, source: str, target: str, last: int) -> Plan[list[Item]]:
    """What the fork takes along besides its messages, as the fork's items: the source's records, the states
    it keeps for rewinds (those saved at or before `last`), its artifact index and version items (whose
    objects are still the source's), and its state (unless the caller gives one) as having seen no message
    past `last`."""
    found: list[Item] = []
    for prefix in COPIED:
        found += yield from partition_prefix(ctx, source, prefix)
    if request.state is UNSET:
        stored = yield from get_item(ctx.sessions_table, keys.session_key(source, keys.STATE))
        if stored is not None:
            found.append({**stored, "seq": n(min(get_int(stored, "seq"), last))})
    pk = s(keys.session_pk(target))
    return [
        {**i, keys.PK: pk}
        for i in found
        if not (i[keys.SK]["S"].startswith(KEPT_STATE_PREFIX) and get_int(i, "seq") > last)
    ]


def _given_state(ctx: Context, target: str, owner: str, state: Any, last: int) -> Plan[Staged]:
    """The state a fork is given, as its first version (its body in S3 when it does not fit an item)."""
    write_id = ctx.new_id()
    item = state_item(target, 1, last, encode(ctx, state, "state"), ctx.now(), write_id)
    staged: Staged = yield from stage(
        ctx, [item], "fork_session", session=None, prefix=object_keys.session_prefix(owner, target), write_id=write_id
    )
    return staged


def preview_span(ctx: Context, part: str, lo: int, hi: int) -> Plan[str | None]:
    """The preview of messages lo..hi of a partition (the start of the first user message among them)."""
    if lo > hi:
        return None
    items = yield from read_range(ctx, Span(part, lo, hi))
    resolved = yield from resolve(ctx, items)
    return preview_of(record_from_item(i) for i in resolved)


def _take_back(ctx: Context, staged: list[Staged], items: list[Item]) -> Plan[None]:
    """Remove what one fork attempt put under the fork's invisible head (its items, its staged objects)."""
    for done in staged:
        yield from abandon(ctx, done.intent)
    yield from batch_delete(ctx, ctx.sessions_table, [{k: i[k] for k in (keys.PK, keys.SK)} for i in items])


def _undo(ctx: Context, target: str, owner: str, staged: list[Staged]) -> Plan[None]:
    """Remove what a fork attempt made (its head is still the invisible one, so the purge owns all of it)."""
    for done in staged:
        yield from abandon(ctx, done.intent)
    item = yield from get_item(ctx.sessions_table, keys.head_key(target))
    if item is not None and FORKING in item:
        yield from purge(ctx, target, owner, head=item)
