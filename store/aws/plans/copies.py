"""Copies of a transcript into another partition: what a fork or a rewind of a long transcript leaves to
after its call (docs/decisions.md, "Fork and rewind").

A copy into a session's partition is its head's `seed`: messages `done`+1..`through` may still be only in
the sources it is copied from. Readers merge them in (`transcript.py`). The copy itself, `finish_copy`, is
idempotent and resumable: each transaction puts up to COPY_BATCH messages that the partition does not
have yet (a put never overwrites), adds their usage to the head's totals and moves `done`, all conditioned
on the copy being the one the head still has; the last step removes the seed (and the source's pin) and
the transcript is an ordinary one.

While a copy reads a source session's partition, that session's head holds a pin (`pin:<target>`), and
every write that changes or removes a pinned message first copies it, as it was, to the target (the
`help` actions, in the same transaction; `Helpers`). So the target gets the source's messages as of the
fork, whatever the source does meanwhile. A session whose copy is still going on changes a message not
copied yet by putting its own version first (a copy's put then finds it there and leaves it).

Usage totals count what is in the session's own partition: each message adds its usage once, when it is
put there (by the copy, a help, or a change of the session's own); so a session's totals are exact once
its copy is over, and count what was copied so far meanwhile (`Session.copying`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, Item, get_s, n, need_s, s
from store.aws.calls import AwsError, Call, Plan
from store.aws.items import Pin, Seed, head_from_item, item_usage, pin_attr
from store.aws.plans.base import (
    Context,
    Position,
    again,
    backoff,
    get_item,
    out_of_time,
    partition_prefix,
    query,
    usage_adds,
    write_if,
)
from store.aws.plans.objects import abandon, copy_objects, record_intent
from store.aws.plans.payloads import REF, Staged
from store.aws.plans.transactions import HEAD, Actions, Failed, cancelled, contended, transact
from store.aws.plans.transcript import Transcript, range_query
from store.aws.plans.uploads import copy_object, head_object
from store.core.validation import new_id
from store.errors import StoreError
from store.models import TokenUsage

SEED = "seed"
COPY_PAGE = 1000  # messages a copy step reads from its sources at once
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
        target = object_keys.copied_payload_key(prefix, new_id(), ref)
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


def seed_takes(expr: Expr, seed: Seed, seq: int) -> str:
    """Condition on a head: its copy is still the one `seed` describes and still takes message `seq`."""
    path = expr.name(SEED)
    return f"{path}.{expr.name('t')} = {expr.value(s(seed.token))} AND {path}.{expr.name('th')} >= {expr.value(n(seq))}"


def pins_unchanged(expr: Expr, pos: Position) -> str:
    """Condition on a head: it has taken no pin since `pos` was read (a write to a message a copy may still
    read sees every copy it must help)."""
    rev = expr.name("pinrev")
    return f"attribute_not_exists({rev})" if pos.pinrev == 0 else f"{rev} = {expr.value(n(pos.pinrev))}"


# ---------------------------------------------------------------- helping the copies out of a session


@dataclass
class Helpers:
    """The copies a write makes, in its own transaction, before it changes or removes message `seq` of a
    session that copies out of it still read (its pins): for each, the target's head (its copy still takes
    the message: it gains its usage) and the message as it was, put in the target's partition (only if it
    is not there). A target that no longer wants it (`HelpRefused`) is left out of the next attempt."""

    ctx: Context
    session_id: str
    skip: set[str] = field(default_factory=set)
    staged: dict[tuple[str, int, str], Staged] = field(default_factory=dict)
    targets: list[tuple[str, Pin]] = field(default_factory=list)

    def wanted(self, pos: Position, seq: int) -> list[tuple[str, Pin]]:
        part = pos.messages_of(self.session_id)
        return [(t, p) for t, p in pos.pins if p.part == part and seq <= p.through and t not in self.skip]

    def prepare(self, pos: Position, seq: int, item: Item) -> Plan[None]:
        """Copy what the message points to (a spilled body) under each target's prefix, once per target."""
        self.targets = self.wanted(pos, seq)
        for target, pin in self.targets:
            key = (target, seq, need_s(item, keys.MID))
            if key not in self.staged:
                self.staged[key] = yield from placed(self.ctx, [into(item, pin.target_part)], target, pos.owner)

    def add(self, actions: Actions, pos: Position, seq: int, item: Item) -> Actions:
        """`actions` with the copies of message `seq` (as read: `item`) that the write makes first."""
        if not self.targets:
            return actions
        usage = item_usage(item)
        helps: list[dict[str, Any]] = []
        intents: list[dict[str, Any]] = []
        for target, pin in self.targets:
            staged = self.staged[(target, seq, need_s(item, keys.MID))]
            helps.append(_target_check(self.ctx, target, pin, seq, usage))
            helps.append(_put_new(self.ctx.messages_table, staged.items[0]))
            if staged.intent is not None:
                intents.append(staged.intent.release(self.ctx))
        actions.add_each("help", helps)
        if intents:
            actions.add_each("copied", intents)
        return actions

    def refused(self, failed: Failed) -> None:
        """Leave out the targets whose copy refused the message (it has it, or its copy is over)."""
        for name in failed.failed_of("help"):
            index = int(name[len("help[") : -1]) // 2
            if index < len(self.targets):
                self.skip.add(self.targets[index][0])

    def abandon(self) -> Plan[None]:
        """Remove the staged copies of a write that did not happen (their intents reclaim them otherwise)."""
        for staged in self.staged.values():
            yield from abandon(self.ctx, staged.intent)
        self.staged.clear()


def _target_check(ctx: Context, target: str, pin: Pin, seq: int, usage: TokenUsage | None) -> dict[str, Any]:
    """The target's head: its copy (the pin's) still takes message `seq` and has not copied it; with the
    message's usage added to its totals."""
    expr = Expr()
    path = expr.name(SEED)
    condition = (
        f"{path}.{expr.name('t')} = {expr.value(s(pin.token))} AND {path}.{expr.name('th')} >= {expr.value(n(seq))}"
        f" AND {path}.{expr.name('dn')} < {expr.value(n(seq))}"
    )
    adds = usage_adds(expr, usage) if usage is not None else []
    body: dict[str, Any] = {
        "TableName": ctx.sessions_table,
        "Key": keys.head_key(target),
        "ConditionExpression": condition,
    }
    if adds:
        return {"Update": {**body, "UpdateExpression": "ADD " + ", ".join(adds), **expr.params()}}
    return {"ConditionCheck": {**body, **expr.params()}}


def _put_new(table: str, item: Item) -> dict[str, Any]:
    """A transaction Put that never overwrites."""
    return {
        "Put": {
            "TableName": table,
            "Item": item,
            "ConditionExpression": "attribute_not_exists(#s)",
            "ExpressionAttributeNames": {"#s": keys.SID},
        }
    }


# ---------------------------------------------------------------- the copy


def finish_copy(
    ctx: Context, session_id: str, *, slice_seconds: float | None = None, hand_off: bool = False
) -> Plan[bool]:
    """Carry on the copy into the session's partition until it is over (True: no copy is going on, or the
    session is gone or being deleted). It stops early (False) once `slice_seconds` have passed, or when
    less than `settings.handoff_reserve` is left before the enclosing `store.deadline`; with `hand_off` it
    then records a new lap on the head, whose change on the stream has the cascade carry on."""
    started = time.monotonic()
    reserve = ctx.settings.handoff_reserve.total_seconds()
    attempt = 0
    while True:
        item = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
        if item is None:
            return True
        head = head_from_item(item)
        seed = head.seed
        if seed is None or head.deleting:
            return True
        if (slice_seconds is not None and time.monotonic() - started > slice_seconds) or out_of_time(reserve):
            if hand_off:
                yield from _next_lap(ctx, session_id, seed)
            return False
        if seed.objects:
            moved = yield from _adopt_objects(ctx, session_id, head.session.owner, seed)
        elif seed.done >= seed.through:
            moved = yield from _finish(ctx, session_id, seed)
            if moved:
                return True
        else:
            moved = yield from _copy_step(ctx, Transcript.of(head), seed, head.session.owner)
        if not moved:  # another writer changed the head first: read it again
            attempt = yield from again(ctx, attempt, "the copy of a transcript")


def _copy_step(ctx: Context, transcript: Transcript, seed: Seed, owner: str) -> Plan[bool]:
    """Copy the next page of messages (up to COPY_PAGE) that the session's partition does not have yet;
    False when the head's copy changed before any of it was recorded."""
    lo, hi = seed.done + 1, min(seed.through, seed.done + COPY_PAGE)
    merged: dict[int, Item] = {}
    for part, a, b in transcript.spans(lo, hi):  # farthest first, then the session's own (see transcript.py)
        found = yield from query(range_query(ctx, part, a, b, newest_first=False, limit=None))
        merged.update((int(i[keys.SEQ]["N"]), i) for i in found)
    own = yield from query(range_query(ctx, transcript.part, lo, hi, newest_first=False, limit=None, keys_only=True))
    have = {int(i[keys.SEQ]["N"]) for i in own}
    missing = [q for q in range(lo, hi + 1) if q not in have and q not in merged]
    if missing:
        raise StoreError(
            f"the copy into session {transcript.session_id!r} found message {missing[0]} in none of its sources"
        )
    wanted = [into(merged[q], transcript.part) for q in sorted(merged) if q not in have]
    done = seed.done
    for start in range(0, max(len(wanted), 1), COPY_BATCH):
        if start and out_of_time(ctx.settings.handoff_reserve.total_seconds()):
            return True  # what is done is recorded: the caller sees the time is up and hands the copy on
        batch = wanted[start : start + COPY_BATCH]
        upto = hi if start + COPY_BATCH >= len(wanted) else int(batch[-1][keys.SEQ]["N"])
        moved = yield from _put_batch(ctx, transcript.session_id, owner, seed, done, upto, batch)
        if not moved:
            return done > seed.done  # the head's copy changed (or the session went): the caller reads it again
        done = upto
    return True


def _put_batch(
    ctx: Context, session_id: str, owner: str, seed: Seed, done: int, upto: int, batch: list[Item]
) -> Plan[bool]:
    """One transaction: the messages of `batch` put (those already there are left out), their usage added to
    the totals, and the copy's progress moved from `done` to `upto`. False when the head's copy is no longer
    the one read (another copier moved it, the session popped below it, or it is over or gone)."""
    attempt = 0
    staged = yield from placed(ctx, batch, session_id, owner)
    items = list(staged.items)
    try:
        while True:
            total = TokenUsage()
            for item in items:
                total = total.plus(item_usage(item))
            expr = Expr()
            path = expr.name(SEED)
            condition = (
                f"{path}.{expr.name('t')} = {expr.value(s(seed.token))} AND "
                f"{path}.{expr.name('dn')} = {expr.value(n(done))} AND "
                f"{path}.{expr.name('th')} >= {expr.value(n(upto))} AND attribute_not_exists({expr.name('deleting')})"
            )
            update = f"SET {path}.{expr.name('dn')} = {expr.value(n(upto))}"
            adds = usage_adds(expr, total)
            if adds:
                update += " ADD " + ", ".join(adds)
            head = {
                "Update": {
                    "TableName": ctx.sessions_table,
                    "Key": keys.head_key(session_id),
                    "UpdateExpression": update,
                    "ConditionExpression": condition,
                    **expr.params(),
                }
            }
            actions = Actions(head=head).add_each("message", [_put_new(ctx.messages_table, i) for i in items])
            if staged.intent is not None:
                actions.add("intent", staged.intent.release(ctx))
            try:
                yield transact(actions)
                return True
            except AwsError as err:
                if contended(err):
                    attempt = yield from backoff(ctx, attempt, "the copy of a transcript")
                    continue
                failed = cancelled(err, actions)
                if failed.conflicted():
                    attempt = yield from backoff(ctx, attempt, "the copy of a transcript")
                    continue
                if failed.failed(HEAD):
                    yield from abandon(ctx, staged.intent)
                    return False
                there = {int(name[len("message[") : -1]) for name in failed.failed_of("message")}
                if not there:
                    raise
                # put meanwhile (a change of the session's own, or a source's help): theirs stays
                items = [i for k, i in enumerate(items) if k not in there]
                attempt = yield from again(ctx, attempt, "the copy of a transcript")
    except BaseException:
        yield from abandon(ctx, staged.intent)
        raise


def _finish(ctx: Context, session_id: str, seed: Seed) -> Plan[bool]:
    """End a copy that has everything: the seed goes, and with it the source's pin (one transaction while
    the source's head is there; the target's alone when it is not). False when the head changed meanwhile."""
    expr = Expr()
    path = expr.name(SEED)
    condition = (
        f"{path}.{expr.name('t')} = {expr.value(s(seed.token))} AND "
        f"{path}.{expr.name('dn')} >= {path}.{expr.name('th')} AND "
        f"{path}.{expr.name('ob')} = {expr.value({'BOOL': False})}"
    )
    end = {
        "Update": {
            "TableName": ctx.sessions_table,
            "Key": keys.head_key(session_id),
            "UpdateExpression": f"REMOVE {path}",
            "ConditionExpression": condition,
            **expr.params(),
        }
    }
    if seed.source_session != session_id:  # a rewind's copy comes out of the session's own branch: no pin
        actions = Actions(head=end, source=unpin_action(ctx, seed.source_session, session_id, seed.token))
        try:
            yield transact(actions)
            return True
        except AwsError as err:
            if contended(err):
                return False
            failed = cancelled(err, actions)
            if failed.failed(HEAD) or failed.conflicted():
                return False
            # the source's pin is gone (the source was deleted, or a repeat removed it): end the seed alone
    try:
        yield Call("update_item", end["Update"])
    except AwsError as err:
        if err.code in ("ConditionalCheckFailedException", "TransactionConflictException"):
            return False
        raise
    return True


def unpin_action(ctx: Context, source: str, target: str, token: str) -> dict[str, Any]:
    """The Update removing from `source`'s head the pin of the copy `token` into `target`."""
    expr = Expr()
    pin = expr.name(pin_attr(target))
    return {
        "Update": {
            "TableName": ctx.sessions_table,
            "Key": keys.head_key(source),
            "UpdateExpression": f"REMOVE {pin}",
            "ConditionExpression": f"{pin}.{expr.name('t')} = {expr.value(s(token))}",
            **expr.params(),
        }
    }


def unpin(ctx: Context, source: str, target: str, token: str) -> Plan[None]:
    """Remove the pin of a copy that will not finish (its target is being deleted); gone already is fine."""
    yield from write_if("update_item", unpin_action(ctx, source, target, token)["Update"])


def _next_lap(ctx: Context, session_id: str, seed: Seed) -> Plan[None]:
    """Hand the copy to the next cascade invocation: a new lap on the head is a change on its stream."""
    expr = Expr()
    path = expr.name(SEED)
    yield from write_if(
        "update_item",
        {
            "TableName": ctx.sessions_table,
            "Key": keys.head_key(session_id),
            "UpdateExpression": f"SET {path}.{expr.name('lap')} = {expr.value(n(seed.lap + 1))}",
            "ConditionExpression": f"{path}.{expr.name('t')} = {expr.value(s(seed.token))}",
            **expr.params(),
        },
    )


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
    expr = Expr()
    path = expr.name(SEED)
    return (
        yield from write_if(
            "update_item",
            {
                "TableName": ctx.sessions_table,
                "Key": keys.head_key(session_id),
                "UpdateExpression": f"SET {path}.{expr.name('ob')} = {expr.value({'BOOL': False})}",
                "ConditionExpression": f"{path}.{expr.name('t')} = {expr.value(s(seed.token))}",
                **expr.params(),
            },
        )
    )


def adopt_versions(ctx: Context, session_id: str, owner: str, digest: str) -> Plan[None]:
    """Give every version of one artifact name (by its digest) that still borrows an object (its session is
    a fork whose copy is going on) an object of its own."""
    prefix = object_keys.session_prefix(owner, session_id)
    versions = yield from partition_prefix(ctx, session_id, keys.artifact_versions_prefix(digest))
    for version in versions:
        if not need_s(version, OBJECT).startswith(prefix):
            yield from adopt_object(ctx, session_id, prefix, version)


def adopt_object(ctx: Context, session_id: str, prefix: str, version: Item) -> Plan[None]:
    """Give one artifact version of the session an object of its own: copied server-side from the one it
    borrows, behind an intent; the version (and its name's index, when it is the latest) then points at the
    copy, only while they still point where they did (else the copy is removed: the version was deleted)."""
    borrowed = need_s(version, OBJECT)
    stored = yield from head_object(ctx, borrowed)
    if stored is None:
        raise StoreError(f"an artifact's object is missing from the bucket: {borrowed}")
    name = need_s(version, "name")
    target = object_keys.artifact_key(prefix, name, new_id())
    intent = yield from record_intent(ctx, [target])
    if intent is None:
        raise StoreError("the copy's upload intent was not recorded")
    try:
        yield from copy_object(ctx, borrowed, target, stored, get_s(version, "content_type") or "")
        vexpr = Expr()
        repoint = {
            "Update": {
                "TableName": ctx.sessions_table,
                "Key": {keys.PK: version[keys.PK], keys.SK: version[keys.SK]},
                "UpdateExpression": f"SET {vexpr.name(OBJECT)} = {vexpr.value(s(target))}",
                "ConditionExpression": f"{vexpr.name(OBJECT)} = {vexpr.value(s(borrowed))}",
                **vexpr.params(),
            }
        }
        iexpr = Expr()
        index_key = keys.session_key(session_id, keys.artifact_sk(object_keys.digest(name)))
        index = {
            "Update": {
                "TableName": ctx.sessions_table,
                "Key": index_key,
                "UpdateExpression": f"SET {iexpr.name(LATEST_KEY)} = {iexpr.value(s(target))}",
                "ConditionExpression": f"{iexpr.name(LATEST_KEY)} = {iexpr.value(s(borrowed))}",
                **iexpr.params(),
            }
        }
        latest = yield from get_item(ctx.sessions_table, index_key, projection=[LATEST_KEY])
        actions = Actions(version=repoint)
        if latest is not None and get_s(latest, LATEST_KEY) == borrowed:
            actions.add("index", index)
        actions.add("intent", intent.release(ctx))
        yield transact(actions)
    except AwsError as err:
        yield from abandon(ctx, intent)
        if err.code != "TransactionCanceledException":
            raise
