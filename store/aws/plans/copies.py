"""The copy job: a long fork's or rewind's transcript brought into its session after the call that made it
(docs/decisions.md, "Fork and rewind"); and items of one session placed in another.

A copy into a session is its head's `seed`: messages 1..`through` of partition `part`, `done` of them in so
far. While it is going on the session is `copying`: it can be looked at and deleted, nothing else
(`base.live_head`, `base.guard`). The partition it reads does not change meanwhile: a fork's source holds a
pin (`pin:<target>`, and `pinned`, the last message any copy out of it still takes), and a write that would
change a pinned message is refused (`base.unpinned`); a rewind's copy reads the session's own branch, which
never changes.

`finish_copy` is idempotent and resumable: each transaction puts up to COPY_BATCH messages the partition
does not have yet (a put never overwrites), adds their usage to the head's totals and moves `done`, all
conditioned on the copy being the one the head still has. Then the artifact versions that still name the
source's objects get their own (server-side copies), and one transaction ends the copy: the seed goes (a
hidden head, a short fork's, becomes visible with it), and so does the source's pin."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, Item, action, boolean, get_s, n, need_s, s
from store.aws.calls import AwsError, Call, Plan
from store.aws.items import FORKING, PINNED, PINREV, SEED, Head, Seed, head_from_item, item_usage, pin_attr
from store.aws.plans.base import (
    Context,
    again,
    get_item,
    out_of_time,
    partition_prefix,
    query,
    settle,
    usage_adds,
    write_if,
)
from store.aws.plans.objects import abandon, copy_objects, record_intent
from store.aws.plans.partitions import Span, put_new, read_range
from store.aws.plans.payloads import REF, Staged
from store.aws.plans.transactions import HEAD, Actions, Cancelled, cancelled, contended, transact
from store.aws.plans.uploads import copy_object, head_object
from store.core import rules
from store.errors import StoreError
from store.models import TokenUsage

COPY_BATCH = 97  # messages one copy transaction puts (with the head and an upload intent)
OBJECT = "object"
LATEST_KEY = "latest_key"


# ---------------------------------------------------------------- placing items in a session


def placed(ctx: Context, items: Sequence[Item], session_id: str, owner: str, *, fresh: bool = False) -> Plan[Staged]:
    """`items` (read from another session, or from another item of this one) as items of `session_id`:
    every spilled body they point to is copied (server-side) under the session's prefix, behind an upload
    intent that the commit releases, unless it is there already (with `fresh`, always: no two items share an
    object). Nothing is copied when no item has a spilled body."""
    prefix = object_keys.session_prefix(owner, session_id)
    out: list[Item] = []
    pairs: list[tuple[str, str]] = []
    for item in items:
        ref = get_s(item, REF)
        if ref is None or (ref.startswith(prefix) and not fresh):
            out.append(dict(item))
            continue
        target = object_keys.copied_payload_key(prefix, ctx.new_id(), ref)
        pairs.append((ref, target))
        out.append({**item, REF: s(target)})
    if not pairs:
        return Staged(out)
    intent = yield from record_intent(ctx, [t for _, t in pairs])
    if intent is None:  # not reached: an intent without a session check is always recorded
        raise StoreError("the copy's upload intent was not recorded")
    try:
        yield from copy_objects(ctx, pairs)
    except (AwsError, StoreError):
        yield from abandon(ctx, intent)
        raise
    return Staged(out, intent)


def into(item: Item, part: str) -> Item:
    """A message item as one of partition `part`."""
    return {**item, keys.SID: s(part)}


# ---------------------------------------------------------------- the copy


def finish_copy(
    ctx: Context, session_id: str, *, slice_seconds: float | None = None, hand_off: bool = False
) -> Plan[bool]:
    """Carry on the copy into the session until it is over (True: no copy is going on, or the session is gone
    or being deleted). It stops early (False) once `slice_seconds` have passed, or when less than
    `settings.handoff_reserve` is left before the enclosing `store.deadline`; with `hand_off` it then records
    a new lap on the head, whose change on the stream has the copy job carry on."""
    started = ctx.monotonic()
    reserve = ctx.settings.handoff_reserve.total_seconds()
    attempt = 0
    head: Head | None = None
    while True:
        if head is None:
            item = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
            if item is None:
                return True
            head = head_from_item(item)
        seed = head.seed
        if seed is None or (head.deleting and not seed.hidden):
            return True  # no copy, or the session is being deleted: its purge takes what was copied
        if (slice_seconds is not None and ctx.monotonic() - started > slice_seconds) or out_of_time(ctx, reserve):
            if hand_off:
                yield from _next_lap(ctx, session_id, seed)
            return False
        if seed.done < seed.through:
            done = yield from _copy_step(ctx, head, seed)
            # what this step recorded is known: no need to read the head again before the next
            head = replace(head, seed=replace(seed, done=done)) if done is not None else None
            moved = done is not None
        elif seed.objects:
            moved = yield from _adopt_objects(ctx, session_id, head.session.owner, seed)
            head = None
        else:
            moved = yield from _publish(ctx, session_id, seed)
            if moved:
                return True
            head = None
        if not moved:  # another writer changed the head first: read it again
            attempt = yield from again(ctx, attempt, "the copy of a transcript")


def _copy_step(ctx: Context, head: Head, seed: Seed) -> Plan[int | None]:
    """Copy the next page of messages (up to `rules.COPY_PAGE`) that the session's partition does not have yet;
    how far the copy got (recorded on the head), or None when the head's copy changed before any of it was."""
    lo, hi = seed.done + 1, min(seed.through, seed.done + rules.COPY_PAGE)
    found = yield from read_range(ctx, Span(seed.part, lo, hi))
    if len(found) != hi - lo + 1:
        raise StoreError(f"the copy into session {head.session.id!r} found messages {lo}..{hi} missing in its source")
    own = yield from query(Span(head.part, lo, hi).query(ctx, keys_only=True))
    have = {int(i[keys.SEQ]["N"]) for i in own}
    wanted = [into(i, head.part) for i in found if int(i[keys.SEQ]["N"]) not in have]
    done = seed.done
    for start in range(0, max(len(wanted), 1), COPY_BATCH):
        if start and out_of_time(ctx, ctx.settings.handoff_reserve.total_seconds()):
            return done  # what is done is recorded: the caller sees the time is up and hands the copy on
        batch = wanted[start : start + COPY_BATCH]
        upto = hi if start + COPY_BATCH >= len(wanted) else int(batch[-1][keys.SEQ]["N"])
        moved = yield from _put_batch(ctx, head.session.id, head.session.owner, seed, done, upto, batch)
        if not moved:
            return done if done > seed.done else None  # the head's copy changed (or the session went)
        done = upto
    return done


def _put_batch(
    ctx: Context, session_id: str, owner: str, seed: Seed, done: int, upto: int, batch: list[Item]
) -> Plan[bool]:
    """One transaction: the messages of `batch` put (the caller left out those already there), their usage
    added to the totals, and the copy's progress moved from `done` to `upto`. False when the head's copy is no longer
    the one read (another copier moved it, the session popped below it, or it is over or gone)."""
    staged = yield from placed(ctx, batch, session_id, owner)
    items = list(staged.items)
    total = TokenUsage()
    for item in items:
        total = total.plus(item_usage(item))
    expr = Expr()
    path = expr.name(SEED)
    hidden = f"{path}.{expr.name('hd')} = {expr.value(boolean(True))}"
    condition = (
        f"{path}.{expr.name('t')} = {expr.value(s(seed.token))} AND "
        f"{path}.{expr.name('dn')} = {expr.value(n(done))} AND "
        f"{path}.{expr.name('th')} >= {expr.value(n(upto))} AND "
        # a head being deleted takes no more (a hidden one is `deleting` until it is published)
        f"(attribute_not_exists({expr.name('deleting')}) OR {hidden})"
    )
    update = f"SET {path}.{expr.name('dn')} = {expr.value(n(upto))}"
    adds = usage_adds(expr, total)
    if adds:
        update += " ADD " + ", ".join(adds)
    head = action("Update", ctx.sessions_table, keys.head_key(session_id), expr, update=update, condition=condition)
    actions = Actions(head=head).add_each("message", [put_new(ctx, i) for i in items])
    if staged.intent is not None:
        actions.add("intent", staged.intent.release(ctx))
    try:
        refused = yield from settle(ctx, actions, "the copy of a transcript")
    except BaseException:
        yield from abandon(ctx, staged.intent)
        raise
    if refused is None:
        return True
    yield from abandon(ctx, staged.intent)
    if refused.failed.failed(HEAD):
        return False
    # the head's copy held, so nothing else wrote these messages (a copying session takes no writes, and
    # another copier moves `dn` first): anything else is not a race
    raise Cancelled(refused.failed, "the copy of a transcript") from refused.cause


def _publish(ctx: Context, session_id: str, seed: Seed) -> Plan[bool]:
    """End a copy that has everything: the seed goes (a hidden head becomes visible, with the TTL it was to
    have), and with it the source's pin, in one transaction while the source still holds it (the session's
    alone when it does not: the source was deleted). False when either head changed meanwhile."""
    expr = Expr()
    path = expr.name(SEED)
    condition = (
        f"{path}.{expr.name('t')} = {expr.value(s(seed.token))} AND "
        f"{path}.{expr.name('dn')} >= {path}.{expr.name('th')} AND "
        f"{path}.{expr.name('ob')} = {expr.value({'BOOL': False})}"
    )
    removes = [path]
    sets: list[str] = []
    if seed.hidden:  # published whole: it was invisible until now
        removes += [expr.name("deleting"), expr.name(FORKING)]
        ttl = expr.name(keys.TTL)
        if seed.ttl is None:
            removes.append(ttl)
        else:
            sets.append(f"{ttl} = {expr.value(n(seed.ttl))}")
    update = (f"SET {', '.join(sets)} " if sets else "") + f"REMOVE {', '.join(removes)}"
    end = action("Update", ctx.sessions_table, keys.head_key(session_id), expr, update=update, condition=condition)
    source = None
    if seed.source_session != session_id:  # a rewind's copy comes out of the session's own branch: no pin
        source = yield from unpin_action(ctx, seed.source_session, session_id, seed.token)
    actions = Actions(head=end) if source is None else Actions(head=end, source=source)
    try:
        yield transact(actions, ctx.new_id()) if source is not None else Call("update_item", end["Update"])
    except AwsError as err:
        if err.code in ("ConditionalCheckFailedException", "TransactionConflictException") or contended(err):
            return False
        failed = cancelled(err, actions)
        if failed.failed(HEAD) or failed.failed("source") or failed.conflicted():
            return False
        raise
    return True


def unpin_action(ctx: Context, source: str, target: str, token: str) -> Plan[dict[str, Any] | None]:
    """The Update removing from `source`'s head the pin of the copy `token` into `target` (`pinned` becomes
    the last message the other copies out of it take), conditioned on no pin having come or gone since the
    head was read; None when the source no longer holds that pin."""
    item = yield from get_item(ctx.sessions_table, keys.head_key(source))
    head = head_from_item(item) if item is not None else None
    if head is None or head.pins.get(target) is None or head.pins[target].token != token:
        return None
    others = [p.through for t, p in head.pins.items() if t != target]
    expr = Expr()
    pin, pinned, rev = expr.name(pin_attr(target)), expr.name(PINNED), expr.name(PINREV)
    update = (f"SET {pinned} = {expr.value(n(max(others)))} " if others else "") + f"REMOVE {pin}"
    if not others:
        update += f", {pinned}"
    condition = f"{pin}.{expr.name('t')} = {expr.value(s(token))} AND {rev} = {expr.value(n(head.pinrev))}"
    return action("Update", ctx.sessions_table, keys.head_key(source), expr, update=update, condition=condition)


def unpin(ctx: Context, source: str, target: str, token: str) -> Plan[None]:
    """Remove the pin of a copy that will not finish (its target is being deleted); gone already is fine."""
    for _ in range(ctx.settings.conflict_retries):
        unpinning = yield from unpin_action(ctx, source, target, token)
        if unpinning is None:
            return
        done = yield from write_if("update_item", unpinning["Update"])
        if done:
            return
    raise StoreError(f"the pin of a copy out of session {source!r} kept changing")


def _next_lap(ctx: Context, session_id: str, seed: Seed) -> Plan[None]:
    """Hand the copy to the next cascade invocation: a new lap on the head is a change on its stream."""
    yield from _set_on_seed(ctx, session_id, seed, "lap", n(seed.lap + 1))


def _set_on_seed(ctx: Context, session_id: str, seed: Seed, field: str, value: dict[str, Any]) -> Plan[bool]:
    """Set one field of the head's copy while it is still the copy `seed` (False when it is not)."""
    expr = Expr()
    path = expr.name(SEED)
    update = f"SET {path}.{expr.name(field)} = {expr.value(value)}"
    condition = f"{path}.{expr.name('t')} = {expr.value(s(seed.token))}"
    head = action("Update", ctx.sessions_table, keys.head_key(session_id), expr, update=update, condition=condition)
    return (yield from write_if("update_item", head["Update"]))


# ---------------------------------------------------------------- artifacts' objects


def _adopt_objects(ctx: Context, session_id: str, owner: str, seed: Seed) -> Plan[bool]:
    """Copy (server-side) every object the session's artifact versions still borrow from the source into the
    session's own prefix and point the versions at the copies; once none borrows, mark the copy's objects
    done. False when some version still borrows (a concurrent write moved its name: the caller goes on)."""
    prefix = object_keys.session_prefix(owner, session_id)
    versions = yield from partition_prefix(ctx, session_id, keys.ARTIFACT_VERSION_PREFIX)
    borrowing = [v for v in versions if not need_s(v, OBJECT).startswith(prefix)]
    for version in borrowing:
        yield from adopt_object(ctx, session_id, prefix, version)
    if borrowing:
        return False  # read them again: only a version that borrows nothing any more is done
    return (yield from _set_on_seed(ctx, session_id, seed, "ob", boolean(False)))


def adopt_object(ctx: Context, session_id: str, prefix: str, version: Item) -> Plan[None]:
    """Give one artifact version of the session an object of its own: copied server-side from the one it
    borrows, behind an intent; the version (and its name's index, when it is the latest) then points at the
    copy, only while they still point where they did (else the copy is removed: the version was deleted)."""
    borrowed = need_s(version, OBJECT)
    stored = yield from head_object(ctx, borrowed)
    if stored is None:
        raise StoreError(f"an artifact's object is missing from the bucket: {borrowed}")
    name = need_s(version, "name")
    target = object_keys.artifact_key(prefix, name, ctx.new_id())
    intent = yield from record_intent(ctx, [target])
    if intent is None:
        raise StoreError("the copy's upload intent was not recorded")
    try:
        yield from copy_object(ctx, borrowed, target, stored, get_s(version, "content_type") or "")
        index_key = keys.session_key(session_id, keys.artifact_sk(object_keys.digest(name)))
        version_key = {keys.PK: version[keys.PK], keys.SK: version[keys.SK]}
        actions = Actions(version=_repoint(ctx.sessions_table, version_key, OBJECT, borrowed, target))
        latest = yield from get_item(ctx.sessions_table, index_key, projection=[LATEST_KEY])
        if latest is not None and get_s(latest, LATEST_KEY) == borrowed:
            actions.add("index", _repoint(ctx.sessions_table, index_key, LATEST_KEY, borrowed, target))
        actions.add("intent", intent.release(ctx))
        yield transact(actions, ctx.new_id())
    except AwsError as err:
        yield from abandon(ctx, intent)
        if err.code != "TransactionCanceledException":
            raise


def _repoint(table: str, key: Item, attr: str, old: str, new: str) -> dict[str, Any]:
    """The Update pointing `attr` of the item at `new`, while it still points at `old`."""
    expr = Expr()
    update, condition = f"SET {expr.name(attr)} = {expr.value(s(new))}", f"{expr.name(attr)} = {expr.value(s(old))}"
    return action("Update", table, key, expr, update=update, condition=condition)
