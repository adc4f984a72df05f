"""Plans for rewinds and branches (docs/decisions.md, "Fork and rewind").

A rewind keeps the session's partition as a branch (`branches.py`) and gives the session a new one, whose
messages 1..to_seq the fork's copy (`copies.py`) brings in (within the call up to `fork_inline_messages`); a
restore swaps a branch's partition back in. Neither happens to a session a copy still takes messages out of.
A branch's delete purges its partition inside the call's deadline and hands the rest to the cascade."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, action, boolean, get_int, n, s
from store.aws.calls import Plan
from store.aws.items import (
    BRANCHES,
    PART,
    PART_MARK,
    SEED,
    USAGE_PREFIX,
    Head,
    Seed,
    head_from_item,
    metadata_attrs,
    state_from_item,
)
from store.aws.plans.base import (
    Context,
    Position,
    again,
    forget,
    get_item,
    guard,
    head_update,
    in_part,
    partition_prefix,
    read_head,
    settle,
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
from store.aws.plans.forks import preview_span
from store.aws.plans.objects import abandon
from store.aws.plans.partitions import previous_compaction
from store.aws.plans.payloads import Staged
from store.aws.plans.sessions import hand_off, purge_partition
from store.aws.plans.state import KEPT_STATE_PREFIX
from store.aws.plans.transactions import HEAD, Actions, Cancelled
from store.aws.plans.writes import write_session
from store.core import paging, rules
from store.models import Branches, Session, TokenUsage
from store.requests import UNSET, DeleteBranch, ListBranches, RestoreBranch, RewindSession, Unset


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
        rules.check_rewind(to_seq, head.session.last_seq)
        if to_seq == head.session.last_seq:
            return head.session
        state = yield from get_item(ctx.sessions_table, keys.session_key(session_id, keys.STATE))
        kept = yield from partition_prefix(ctx, session_id, KEPT_STATE_PREFIX)
        current = state_from_item(state) if state is not None else None
        chosen = rules.state_as_of(current, [state_from_item(k) for k in kept], to_seq)
        compaction = head.session.compaction_seq
        if compaction is not None and compaction > to_seq:
            compaction = yield from previous_compaction(ctx, head.part, to_seq + 1)
        seed = Seed(ctx.new_id(), to_seq, 0, session_id, head.part) if to_seq > 0 else None
        line = Line(
            part=f"{session_id}{PART_MARK}{ctx.new_id()}",
            last_seq=to_seq,
            usage=TokenUsage(),
            compaction_seq=compaction,
            preview=(yield from preview_span(ctx, head.part, 1, min(to_seq, rules.PREVIEW_WINDOW))),
            from_seq=to_seq,
            seed=seed,
            state=next((k for k in kept if chosen is not None and get_int(k, "version") == chosen.version), None),
        )
        outcome = yield from _move(ctx, head, owner, line, state, name, request.metadata, "rewind_session")
        if outcome == "branch":
            raise rules.branch_exists(name)
        if outcome == "done":
            break
        attempt = yield from again(ctx, attempt, "rewind_session")
    yield from forget(session_id)
    if seed is not None and rules.copies_inline(to_seq, 0, ctx.settings.fork_inline_messages):
        yield from finish_copy(ctx, session_id)
    return (yield from read_head(ctx, session_id, owner, copying_ok=True)).session


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
        line = Line(
            part=branch.part,
            last_seq=branch.last_seq,
            usage=branch.usage,
            compaction_seq=branch.compaction_seq,
            preview=branch.preview,
            from_seq=branch.from_seq,
            state=branch.state_item(),
        )
        outcome = yield from _move(ctx, head, owner, line, state, keep_as, request.metadata, "restore_branch", branch)
        if outcome == "branch" and keep_as != name:
            raise rules.branch_exists(keep_as)
        if outcome == "done":
            break
        attempt = yield from again(ctx, attempt, "restore_branch")
    yield from forget(session_id)
    return (yield from read_head(ctx, session_id, owner)).session


@dataclass(frozen=True)
class Line:
    """The transcript a rewind or restore moves the session to: its partition and what the head says of it,
    where it parts from the line the session leaves (`from_seq`), the copy that brings its messages in (a
    rewind's), and the state it brings back (a kept state or a branch's: None, none)."""

    part: str
    last_seq: int
    usage: TokenUsage
    compaction_seq: int | None
    preview: str | None
    from_seq: int
    seed: Seed | None = None
    state: Item | None = None


def _move(
    ctx: Context,
    head: Head,
    owner: str | None,
    line: Line,
    state: Item | None,
    keep_as: str,
    metadata: dict[str, Any] | Unset,
    what: str,
    restored: BranchItem | None = None,
) -> Plan[str]:
    """Move the session (as read: `head`, its `state` item) to `line` in one transaction, keeping the line it
    leaves as the branch `keep_as` (over the `restored` branch when a restore keeps it under its own name);
    a new branch counts against the session's room. The outcome as `_commit` says."""
    session_id = head.session.id
    wanted = [x for x in (state, line.state) if x is not None]
    copies = yield from placed(ctx, wanted, session_id, head.session.owner, fresh=True)
    out = iter(copies.items)
    kept_state = next(out) if state is not None else None
    brought = next(out) if line.state is not None else None
    now = ctx.now()
    kept = yield from _current_line(ctx, head, keep_as, line.from_seq, now, kept_state)
    version = head.session.state_version + 1
    new_state = _as_state(brought, session_id, version, ctx.new_id()) if brought is not None else None
    actions = _switch(ctx, head, owner, now, line, new_state, metadata, new_branch=restored is None)
    replacing = None
    if restored is not None and restored.name != keep_as:
        removed = keys.session_key(session_id, branch_sk(restored.name))
        actions.add("restored", _on_branch(ctx, "Delete", removed, restored.part))
    elif restored is not None:
        replacing = restored.part
    actions.add("branch", _put_branch(ctx, kept, replacing))
    if copies.intent is not None:
        actions.add("intent", copies.intent.release(ctx))
    return (yield from _commit(ctx, actions, copies, what))


def _current_line(ctx: Context, head: Head, name: str, from_seq: int, now: datetime, state: Item | None) -> Plan[Item]:
    """The BR# item keeping the session's current line as the branch `name` (it parts from the other line
    after `from_seq`): its partition, usage, compaction, both previews and `state` (a STATE item or None)."""
    last = head.session.last_seq
    window = min(last, from_seq + rules.PREVIEW_WINDOW)
    own_preview = yield from preview_span(ctx, head.part, from_seq + 1, window)
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


def _as_state(kept: Item, session_id: str, version: int, write_id: str) -> Item:
    """A kept state (a branch's, or one kept by save_full) as the session's state of `version`."""
    fields = {k: v for k, v in kept.items() if k in ("seq", "saved_at", "c", "b", "ref")}
    return {**keys.session_key(session_id, keys.STATE), **fields, "version": n(version), "write_id": s(write_id)}


def _switch(
    ctx: Context,
    head: Head,
    owner: str | None,
    now: datetime,
    line: Line,
    state: Item | None,
    metadata: dict[str, Any] | Unset,
    *,
    new_branch: bool,
) -> Actions:
    """The session's head moved to `line` (and to `state` and `metadata`, when given), while it is as read;
    with `new_branch`, counting one more branch, while the session has room for it."""
    session_id = head.session.id
    expr = Expr()
    sets = touch(expr, session_id, now, Position.of(head).retention)
    sets += [
        f"{expr.name(PART)} = {expr.value(s(line.part))}",
        f"{expr.name('last_seq')} = {expr.value(n(line.last_seq))}",
    ]
    removes: list[str] = []
    numbers = line.usage.numbers()
    for f in TokenUsage.fields():
        name = expr.name(USAGE_PREFIX + f)
        if f in numbers:
            sets.append(f"{name} = {expr.value(n(numbers[f]))}")
        else:
            removes.append(name)
    for attr, value in (("compaction_seq", line.compaction_seq), ("preview", line.preview)):
        if value is None:
            removes.append(expr.name(attr))
        else:
            sets.append(f"{expr.name(attr)} = {expr.value(n(value) if isinstance(value, int) else s(value))}")
    if line.seed is not None:
        sets.append(f"{expr.name(SEED)} = {expr.value(line.seed.to_attr())}")
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
        actions.add("state", action("Put", ctx.sessions_table, state))
    return actions


def _put_branch(ctx: Context, item: Item, replacing: str | None) -> dict[str, Any]:
    """The Put of a branch item: a new name (refused when the session has a branch of that name), or over
    the branch in partition `replacing` (a restore that keeps the replaced transcript under its name)."""
    if replacing is not None:
        return _on_branch(ctx, "Put", item, replacing)
    expr = Expr()
    return action("Put", ctx.sessions_table, item, expr, condition=f"attribute_not_exists({expr.name(keys.PK)})")


def _on_branch(ctx: Context, kind: str, item: Item, part: str, update: tuple[str, Any] | None = None) -> dict[str, Any]:
    """The action `kind` on a branch's `item` (its key, but for a Put), while the branch is the one in
    partition `part`; an Update sets `update` (an attribute and its value)."""
    expr = Expr()
    sets = f"SET {expr.name(update[0])} = {expr.value(update[1])}" if update is not None else None
    condition = expr.as_read("part", part)
    return action(kind, ctx.sessions_table, item, expr, update=sets, condition=condition)


def _commit(ctx: Context, actions: Actions, copies: Staged, what: str) -> Plan[str]:
    """Run a rewind's or restore's transaction: "done", "branch" (the branch name is taken), or "again"
    (the head moved: read it again); the copies it staged are removed unless it committed."""
    refused = yield from settle(ctx, actions, what)
    if refused is None:
        return "done"
    yield from abandon(ctx, copies.intent)
    if refused.failed.failed(HEAD) or refused.failed.failed("restored"):
        return "again"
    if refused.failed.failed("branch"):
        return "branch"
    raise Cancelled(refused.failed, what) from refused.cause


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
    item_key = keys.session_key(session_id, branch_sk(name))
    item = yield from get_item(ctx.sessions_table, item_key)
    if item is None:
        return
    branch = BranchItem.of(item)
    if not branch.deleting:
        now = ctx.now()

        def build(pos: Any) -> Actions:
            mark = _on_branch(ctx, "Update", item_key, branch.part, ("deleting", boolean(True)))
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
    removal = _on_branch(ctx, "Delete", keys.session_key(session_id, branch_sk(branch.name)), branch.part)
    yield from write_if("delete_item", removal["Delete"])
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
