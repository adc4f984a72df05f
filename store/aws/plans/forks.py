"""Plans for forks, rewinds and branches (docs/decisions.md, "Fork and rewind").

A fork is a new session holding its source's messages 1..at_seq, its state, records and artifacts. What
goes along besides the messages is put under an invisible head first; then one transaction makes the fork
and pins its copy on the source (`copies.py`): a fork of up to `Settings.fork_inline_messages` messages (and
a few artifact versions) stays invisible while its copy is made within the call, and is published whole; a
longer one is visible at once as `copying`, with its progress, and the copy job brings its messages in after
the call. Meanwhile the messages it takes are pinned in its source (a change to them is refused).

A rewind keeps the session's partition as a branch (`branches.py`) and gives the session a new one, whose
messages 1..to_seq the same copy brings in (within the call up to `fork_inline_messages`); a restore swaps a
branch's partition back in. Neither happens to a session a copy still takes messages out of."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, Item, boolean, get_int, get_s, n, s
from store.aws.calls import AwsError, Plan
from store.aws.items import (
    BRANCHES,
    FORKING,
    PART,
    PART_MARK,
    PINNED,
    PINREV,
    SEED,
    USAGE_PREFIX,
    Head,
    Pin,
    Seed,
    head_from_item,
    head_item,
    metadata_attrs,
    pin_attr,
    record_from_item,
    state_from_item,
    state_item,
)
from store.aws.plans.base import (
    EDITS,
    Context,
    Position,
    again,
    backoff,
    batch_delete,
    get_item,
    guard,
    head_update,
    in_part,
    partition_prefix,
    read_head,
    touch,
    touch_head,
    unpinned,
    write_if,
)
from store.aws.plans.branches import (
    BranchItem,
    all_branches,
    branch_item,
    branch_sk,
    read_branch,
)
from store.aws.plans.copies import finish_copy, placed
from store.aws.plans.objects import abandon
from store.aws.plans.partitions import Span, previous_compaction, read_range
from store.aws.plans.payloads import Staged, encode, resolve, stage
from store.aws.plans.sessions import claim, hand_off, purge, purge_partition, unseen_head
from store.aws.plans.state import KEPT_STATE_PREFIX
from store.aws.plans.transactions import HEAD, Actions, Cancelled, cancelled, contended, transact
from store.aws.plans.writes import write_session
from store.conversation.preview import preview_of
from store.core import paging, rules
from store.core.forking import forked_session
from store.core.timeutil import epoch
from store.errors import Conflict
from store.models import Branches, Session, TokenUsage
from store.requests import UNSET, DeleteBranch, ForkSession, ListBranches, RestoreBranch, RewindSession, Unset

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
        state = next((i for i in items if i[keys.SK]["S"] == keys.STATE), None)
        yield from _put_children(ctx, target, token, items)
        compaction = source.compaction_seq
        if compaction is not None and compaction > last:
            compaction = yield from previous_compaction(ctx, head.part, last + 1)
        preview = yield from _preview(ctx, head.part, 1, min(last, rules.PREVIEW_WINDOW))
        versions = sum(1 for c in children if c[keys.SK]["S"].startswith(keys.ARTIFACT_VERSION_PREFIX))
        now = ctx.now()
        session = forked_session(
            source,
            request.new_session_id,
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
        seed = None
        if last > 0 or versions:
            hidden = rules.copies_inline(last, versions, ctx.settings.fork_inline_messages)
            seed = Seed(token, last, 0, source.id, head.part, bool(versions), hidden=hidden, ttl=ttl)
            made[SEED] = seed.to_attr()
            if hidden:  # invisible until its copy is done (`copies._publish`): a dead one expires and is purged
                made.update({k: v for k, v in unseen_head(target, owner, now).items() if k in ("deleting", keys.TTL)})
                made[FORKING] = s(token)
        actions = _fork_actions(ctx, request, head, made, token, seed, target)
        actions.add_each("intent", [done.intent.release(ctx) for done in staged if done.intent is not None])
        try:
            yield transact(actions, ctx.new_id())
        except AwsError as err:
            failed = None if contended(err) else cancelled(err, actions)
            if failed is not None and failed.failed("fork"):
                raise Conflict(f"fork_session: session {target!r} was taken over while it was being made") from err
            if failed is not None and not failed.failed(HEAD) and not failed.conflicted():
                raise Cancelled(failed, "fork_session") from err
            yield from _take_back(ctx, staged, items)  # the source moved (or contention): start over
            return None
        return head_from_item(made)
    except BaseException:
        yield from _undo(ctx, target, owner, staged)
        raise


CHILDREN_PER_WRITE = 99  # a transaction's items: the fork's head checked, and these


def _put_children(ctx: Context, target: str, token: str, items: list[Item]) -> Plan[None]:
    """Put what the fork takes along under its invisible head, 99 items a transaction, each conditioned on the
    head still being this fork's (a session made under the id meanwhile has purged it: then Conflict, and
    nothing lands in that session)."""
    for start in range(0, len(items), CHILDREN_PER_WRITE):
        expr = Expr()
        check = {
            "ConditionCheck": {
                "TableName": ctx.sessions_table,
                "Key": keys.head_key(target),
                "ConditionExpression": f"{expr.name(FORKING)} = {expr.value(s(token))}",
                **expr.params(),
            }
        }
        puts = [
            {"Put": {"TableName": ctx.sessions_table, "Item": i}} for i in items[start : start + CHILDREN_PER_WRITE]
        ]
        actions = Actions(fork=check).add_each("child", puts)
        attempt = 0
        while True:
            try:
                yield transact(actions, ctx.new_id())
                break
            except AwsError as err:
                failed = None if contended(err) else cancelled(err, actions)
                if failed is not None and failed.failed("fork"):
                    raise Conflict(f"fork_session: session {target!r} was taken over while it was being made") from err
                if failed is not None and not failed.conflicted():
                    raise Cancelled(failed, "fork_session") from err
                attempt = yield from backoff(ctx, attempt, "fork_session")


def _fork_actions(
    ctx: Context, request: ForkSession, head: Head, made: Item, token: str, seed: Seed | None, target: str
) -> Actions:
    """The transaction making the fork: its head (while it is still this fork's), and the source's head,
    unchanged since it was read, pinning the copy when there is one."""
    fexpr = Expr()
    fork = {
        "Put": {
            "TableName": ctx.sessions_table,
            "Item": made,
            "ConditionExpression": f"{fexpr.name(FORKING)} = {fexpr.value(s(token))}",
            **fexpr.params(),
        }
    }
    expr = Expr()
    edits, cseq = expr.name(EDITS), expr.name("compaction_seq")
    last = seed.through if seed is not None else 0
    compaction = head.session.compaction_seq
    condition = " AND ".join(
        [
            guard(expr, ctx.now(), request.owner),
            in_part(expr, head.part_attr),
            # what the fork takes is as read: no message up to `last` popped (appends after it are not its),
            # no artifact deleted, the compaction marker where it was
            f"{expr.name('last_seq')} >= {expr.value(n(last))}",
            f"attribute_not_exists({edits})" if not head.edits else f"{edits} = {expr.value(n(head.edits))}",
            f"attribute_not_exists({cseq})" if compaction is None else f"{cseq} = {expr.value(n(compaction))}",
        ]
    )
    body: dict[str, Any] = {
        "TableName": ctx.sessions_table,
        "Key": keys.head_key(head.session.id),
        "ConditionExpression": condition,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    if seed is None:
        return Actions(head={"ConditionCheck": {**body, **expr.params()}}, fork=fork)
    # the pin, and `pinned` (the last message any copy out of the source takes) worked out from the pins as
    # read: only while no pin came or went meanwhile
    rev = expr.name(PINREV)
    body["ConditionExpression"] += (
        f" AND attribute_not_exists({rev})" if not head.pinrev else f" AND {rev} = {expr.value(n(head.pinrev))}"
    )
    pin = expr.value(Pin(token, seed.through).to_attr())
    pinned = expr.value(n(max(head.pinned, seed.through)))
    update = f"SET {expr.name(pin_attr(target))} = {pin}, {expr.name(PINNED)} = {pinned} ADD {rev} {expr.value(n(1))}"
    return Actions(head={"Update": {**body, "UpdateExpression": update, **expr.params()}}, fork=fork)


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


def _preview(ctx: Context, part: str, lo: int, hi: int) -> Plan[str | None]:
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


# ---------------------------------------------------------------- rewind and branches


def rewind_session(ctx: Context, request: RewindSession) -> Plan[Session]:
    """Keep the transcript as the branch `request.branch` and continue from `to_seq` in a new partition whose
    messages 1..to_seq the copy brings in from the branch (one transaction; the copy within the call up to
    `fork_inline_messages`, the session `copying` until it is done). Not while a fork's copy takes messages
    out of the session (Conflict)."""
    session_id, owner, to_seq, name = request.session_id, request.owner, request.to_seq, request.branch
    attempt = 0
    while True:
        head = yield from read_head(ctx, session_id, owner)
        names = request.metadata is not UNSET
        rules.check_copyable("rewind_session", head.session.metadata, names_its_metadata=names)
        rules.check_branch_room(head.branches)
        rules.check_unpinned("rewind_session", 0, head.pinned)
        last = head.session.last_seq
        rules.check_rewind(to_seq, last)
        if to_seq == last:
            return head.session
        state = yield from get_item(ctx.sessions_table, keys.session_key(session_id, keys.STATE))
        kept = yield from partition_prefix(ctx, session_id, KEPT_STATE_PREFIX)
        current = state_from_item(state) if state is not None else None
        chosen = rules.state_as_of(current, [state_from_item(k) for k in kept], to_seq)
        restored = next((k for k in kept if chosen is not None and get_int(k, "version") == chosen.version), None)
        compaction = head.session.compaction_seq
        if compaction is not None and compaction > to_seq:
            compaction = yield from previous_compaction(ctx, head.part, to_seq + 1)
        preview = yield from _preview(ctx, head.part, 1, min(to_seq, rules.PREVIEW_WINDOW))
        copies = yield from placed(
            ctx, [x for x in (state, restored) if x is not None], session_id, head.session.owner, fresh=True
        )
        kept_state, new_state = _split(copies.items, state, restored)
        now = ctx.now()
        token = ctx.new_id()
        part = f"{session_id}{PART_MARK}{ctx.new_id()}"
        seed = Seed(token, to_seq, 0, session_id, head.part) if to_seq > 0 else None
        kept_branch = yield from _current_line(ctx, head, name, to_seq, now, kept_state)
        actions = _switch(
            ctx,
            head,
            owner,
            now,
            part=part,
            last_seq=to_seq,
            usage=TokenUsage(),
            compaction_seq=compaction,
            preview=preview,
            seed=seed,
            state=_as_state(new_state, session_id, head.session.state_version + 1, ctx.new_id()) if new_state else None,
            metadata=request.metadata,
            new_branch=True,
        )
        actions.add("branch", _put_branch(ctx, kept_branch, None))
        if copies.intent is not None:
            actions.add("intent", copies.intent.release(ctx))
        outcome = yield from _commit(ctx, actions, copies, "rewind_session")
        if outcome == "branch":
            raise rules.branch_exists(name)
        if outcome == "done":
            break
        attempt = yield from again(ctx, attempt, "rewind_session")
    ctx.forget(session_id)
    if seed is not None and rules.copies_inline(to_seq, 0, ctx.settings.fork_inline_messages):
        yield from finish_copy(ctx, session_id)
    return (yield from read_head(ctx, session_id, owner, copying_ok=True)).session


def _current_line(ctx: Context, head: Head, name: str, from_seq: int, now: datetime, state: Item | None) -> Plan[Item]:
    """The BR# item keeping the session's current line as the branch `name` (it parts from the other line
    after `from_seq`): its partition, usage, compaction, both previews and `state` (a STATE item or None)."""
    last = head.session.last_seq
    window = min(last, from_seq + rules.PREVIEW_WINDOW)
    own_preview = yield from _preview(ctx, head.part, from_seq + 1, window)
    return branch_item(
        head.session.id,
        name,
        part=head.part,
        from_seq=from_seq,
        last_seq=last,
        created_at=now,
        usage=head.session.usage,
        compaction_seq=head.session.compaction_seq,
        preview=head.session.preview,
        own_preview=own_preview,
        state=state,
    )


def restore_branch(ctx: Context, request: RestoreBranch) -> Plan[Session]:
    """Swap the branch's partition (and state) in, keeping the transcript it replaces as `keep_as`: one
    transaction, nothing copied but a spilled state's body."""
    session_id, owner, name, keep_as = request.session_id, request.owner, request.branch, request.keep_as
    attempt = 0
    while True:
        head = yield from read_head(ctx, session_id, owner)
        rules.check_unpinned("restore_branch", 0, head.pinned)
        branch = yield from read_branch(ctx, session_id, owner, name)
        state = yield from get_item(ctx.sessions_table, keys.session_key(session_id, keys.STATE))
        wanted = branch.state_item()
        copies = yield from placed(
            ctx, [x for x in (state, wanted) if x is not None], session_id, head.session.owner, fresh=True
        )
        kept_state, new_state = _split(copies.items, state, wanted)
        now = ctx.now()
        kept_branch = yield from _current_line(ctx, head, keep_as, branch.from_seq, now, kept_state)
        actions = _switch(
            ctx,
            head,
            owner,
            now,
            part=branch.part,
            last_seq=branch.last_seq,
            usage=branch.usage,
            compaction_seq=branch.compaction_seq,
            preview=branch.preview,
            seed=None,
            state=_as_state(new_state, session_id, head.session.state_version + 1, ctx.new_id()) if new_state else None,
            metadata=request.metadata,
        )
        if keep_as != name:
            bexpr = Expr()
            actions.add(
                "restored",
                {
                    "Delete": {
                        "TableName": ctx.sessions_table,
                        "Key": keys.session_key(session_id, branch_sk(name)),
                        "ConditionExpression": f"{bexpr.name('part')} = {bexpr.value(s(branch.part))}",
                        **bexpr.params(),
                    }
                },
            )
        actions.add("branch", _put_branch(ctx, kept_branch, branch.part if keep_as == name else None))
        if copies.intent is not None:
            actions.add("intent", copies.intent.release(ctx))
        outcome = yield from _commit(ctx, actions, copies, "restore_branch")
        if outcome == "branch" and keep_as != name:
            raise rules.branch_exists(keep_as)
        if outcome == "done":
            break
        attempt = yield from again(ctx, attempt, "restore_branch")
    ctx.forget(session_id)
    return (yield from read_head(ctx, session_id, owner)).session


def _split(copies: list[Item], first: Item | None, second: Item | None) -> tuple[Item | None, Item | None]:
    """The placed copies of (first, second), either of which may be absent."""
    out = iter(copies)
    return (next(out) if first is not None else None), (next(out) if second is not None else None)


def _as_state(kept: Item, session_id: str, version: int, write_id: str) -> Item:
    """A kept state (a branch's, or one kept by save_full) as the session's state of `version`."""
    fields = {k: v for k, v in kept.items() if k in ("seq", "saved_at", "c", "b", "ref")}
    return {**keys.session_key(session_id, keys.STATE), **fields, "version": n(version), "write_id": s(write_id)}


def _switch(
    ctx: Context,
    head: Head,
    owner: str | None,
    now: datetime,
    *,
    part: str,
    last_seq: int,
    usage: TokenUsage,
    compaction_seq: int | None,
    preview: str | None,
    seed: Seed | None,
    state: Item | None,
    metadata: dict[str, Any] | Unset = UNSET,
    new_branch: bool = False,
) -> Actions:
    """The session's head moved to another transcript (and state and metadata, when given), while it is as
    read; with `new_branch`, counting one more branch, while the session has room for it."""
    session_id = head.session.id
    expr = Expr()
    sets = touch(expr, session_id, now, Position.of(head).retention)
    sets += [f"{expr.name(PART)} = {expr.value(s(part))}", f"{expr.name('last_seq')} = {expr.value(n(last_seq))}"]
    removes: list[str] = []
    numbers = usage.numbers()
    for f in TokenUsage.fields():
        name = expr.name(USAGE_PREFIX + f)
        if f in numbers:
            sets.append(f"{name} = {expr.value(n(numbers[f]))}")
        else:
            removes.append(name)
    for attr, value in (("compaction_seq", compaction_seq), ("preview", preview)):
        if value is None:
            removes.append(expr.name(attr))
        else:
            sets.append(f"{expr.name(attr)} = {expr.value(n(value) if isinstance(value, int) else s(value))}")
    if seed is not None:
        sets.append(f"{expr.name(SEED)} = {expr.value(seed.to_attr())}")
    if metadata is not UNSET:
        sets += [f"{expr.name(k)} = {expr.value(v)}" for k, v in metadata_attrs(metadata).items()]
    version = head.session.state_version
    if state is not None:
        sets.append(f"{expr.name('state_version')} = {expr.value(n(version + 1))}")
    condition = " AND ".join(
        [
            guard(expr, now, owner),
            f"{expr.name('last_seq')} = {expr.value(n(head.session.last_seq))}",
            f"{expr.name('state_version')} = {expr.value(n(version))}",
            in_part(expr, head.part_attr),
            unpinned(expr, 0),
        ]
    )
    adds = []
    if new_branch:
        count = expr.name(BRANCHES)
        condition += f" AND (attribute_not_exists({count}) OR {count} < {expr.value(n(rules.MAX_BRANCHES))})"
        adds.append(f"{count} {expr.value(n(1))}")
    actions = Actions(head=head_update(ctx, session_id, expr, condition, sets, adds, removes=removes))
    if state is not None:
        actions.add("state", {"Put": {"TableName": ctx.sessions_table, "Item": state}})
    return actions


def _put_branch(ctx: Context, item: Item, replacing: str | None) -> dict[str, Any]:
    """The Put of a branch item: a new name (refused when the session has a branch of that name), or over
    the branch in partition `replacing` (a restore that keeps the replaced transcript under its name)."""
    expr = Expr()
    condition = (
        f"attribute_not_exists({expr.name(keys.PK)})"
        if replacing is None
        else f"{expr.name('part')} = {expr.value(s(replacing))}"
    )
    return {
        "Put": {
            "TableName": ctx.sessions_table,
            "Item": item,
            "ConditionExpression": condition,
            **expr.params(),
        }
    }


def _commit(ctx: Context, actions: Actions, copies: Staged, what: str) -> Plan[str]:
    """Run a rewind's or restore's transaction: "done", "branch" (the branch name is taken), or "again"
    (the head moved: read it again); the copies it staged are removed unless it committed."""
    attempt = 0
    while True:
        try:
            yield transact(actions, ctx.new_id())
            return "done"
        except AwsError as err:
            failed = None if contended(err) else cancelled(err, actions)
            if failed is None or failed.conflicted():
                attempt = yield from backoff(ctx, attempt, what)
                continue
            yield from abandon(ctx, copies.intent)
            if failed.failed(HEAD) or failed.failed("restored"):
                return "again"
            if failed.failed("branch"):
                return "branch"
            raise Cancelled(failed, what) from err


def list_branches(ctx: Context, request: ListBranches) -> Plan[Branches]:
    """A page of the session's branches, oldest first: 1 GetItem (head) + 1 Query (`begins_with(sk, "BR#")`:
    a session keeps at most `rules.MAX_BRANCHES`, so one query reads them all)."""
    session_id, owner = request.session_id, request.owner
    yield from read_head(ctx, session_id, owner)
    found = yield from all_branches(ctx, session_id)
    live = [b.model(session_id) for b in found if not b.deleting]
    return paging.branch_page(session_id, live, request.limit, request.cursor)


def delete_branch(ctx: Context, request: DeleteBranch) -> Plan[None]:
    """Remove a branch: the copies still reading it finish first; the branch item is marked deleting (with
    the head's touch), its partition purged a page at a time (inside a request's deadline, what is left is
    handed to the cascade), then the item goes. Idempotent."""
    session_id, owner, name = request.session_id, request.owner, request.branch
    head = yield from read_head(ctx, session_id, owner)
    item = yield from get_item(ctx.sessions_table, keys.session_key(session_id, branch_sk(name)))
    if item is None:
        return
    branch = BranchItem.of(item)
    if not branch.deleting:
        now = ctx.now()

        def build(pos: Any) -> Actions:
            expr = Expr()
            mark = {
                "Update": {
                    "TableName": ctx.sessions_table,
                    "Key": keys.session_key(session_id, branch_sk(name)),
                    "UpdateExpression": f"SET {expr.name('deleting')} = {expr.value(boolean(True))}",
                    "ConditionExpression": f"{expr.name('part')} = {expr.value(s(branch.part))}",
                    **expr.params(),
                }
            }
            less = touch_head(ctx, session_id, owner, pos, now, adds=lambda e: [f"{e.name(BRANCHES)} {e.value(n(-1))}"])
            return Actions(head=less, branch=mark)

        try:
            yield from write_session(ctx, session_id, owner, build, what="delete_branch")
        except Cancelled:
            return  # deleted (or replaced) meanwhile
    finished = yield from _purge_branch(ctx, head, branch, hand_off=True)
    if not finished:
        yield from hand_off(ctx, session_id, branch_sk(name))


def _purge_branch(ctx: Context, head: Head | None, branch: BranchItem, *, hand_off: bool) -> Plan[bool]:
    """Finish the session's copy if it still reads the branch's partition (a rewind's), purge it, remove its
    item; False when the request's deadline came first (with `hand_off`)."""
    reserve = ctx.settings.handoff_reserve.total_seconds() if hand_off else None
    session_id = branch.item[keys.PK]["S"][len(keys.session_pk("")) :]
    if head is not None and head.seed is not None and head.seed.part == branch.part:
        finished = yield from finish_copy(ctx, session_id)
        if not finished:
            return False
    done = yield from purge_partition(ctx, branch.part, reserve, objects=True)
    if not done:
        return False
    expr = Expr()
    yield from write_if(
        "delete_item",
        {
            "TableName": ctx.sessions_table,
            "Key": keys.session_key(session_id, branch_sk(branch.name)),
            "ConditionExpression": f"{expr.name('part')} = {expr.value(s(branch.part))}",
            **expr.params(),
        },
    )
    return True


def finish_branch_delete(ctx: Context, session_id: str, name: str) -> Plan[None]:
    """The cascade's part of a `delete_branch` that ran out of its request's time."""
    item = yield from get_item(ctx.sessions_table, keys.session_key(session_id, branch_sk(name)))
    if item is None or "deleting" not in item:
        return
    found = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    head = head_from_item(found) if found is not None else None
    finished = yield from _purge_branch(ctx, head, BranchItem.of(item), hand_off=True)
    if not finished:  # the invocation's deadline came first: the next one carries on
        yield from hand_off(ctx, session_id, branch_sk(name))
