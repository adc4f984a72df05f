"""Reclaiming S3 objects nothing points to, driven by the sessions table's stream (NEW_AND_OLD_IMAGES).

Every object is unique to the one item (or intent) that names it, so the rules are local to one
stream record:
- an item that pointed to objects (`ref`: a spilled body; `object`: an artifact version) and was
  removed, or modified to point elsewhere, releases the objects it no longer names;
- an upload intent removed by DynamoDB's TTL (never by its writer's commit, which deletes it by hand)
  means the upload was never committed: its objects go, except a trace batch of a session that is
  still live (trace intents are left to expire; their batches are referenced by number);
- a session head removed (its TTL expired, or a delete finished) means: purge whatever of the session
  remains, S3 prefix included, unless the id holds a live session again;
- a deleting head marked `handoff` (a delete that ran out of its request's time) means: finish its purge;
- a head that gained a copy into its transcript (a long fork's or rewind's), or whose copy was handed on
  to the next invocation (a new `lap`), means: carry on that copy (for at most COPY_SLICE seconds, then
  hand it on again);
- a branch marked `handoff` (a `delete_branch` that ran out of its request's time) means: finish it;
- (the memories table's stream) an owner's forget marker written anew (a `forget_owner` with more than a
  call's batch, or a round handed on) means: carry the forget on (for at most FORGET_SLICE seconds).
An item only ever releases objects under its own session's prefix: a fork's artifact versions name their
source's objects until its copy has made their own, and those are the source's to release.
The stream-driven cascade function calls `reclaim_record` for each record; it is idempotent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Item, get_s
from store.aws.calls import Plan
from store.aws.items import SEED, Seed, head_from_item
from store.aws.plans.base import Context, get_item
from store.aws.plans.branches import BRANCH_PREFIX
from store.aws.plans.copies import finish_copy
from store.aws.plans.forget import FORGET_SLICE, finish_forget, forget_marked
from store.aws.plans.memories import MEMORY_PK
from store.aws.plans.message_index import drop_message_index
from store.aws.plans.objects import INTENT_PREFIX, OBJECTS, delete_objects
from store.aws.plans.rewinds import finish_branch_delete
from store.aws.plans.sessions import CASCADE, HANDOFF, HANDOFFS, purge, purge_removed
from store.core import memories as m
from store.requests import DropMessageIndex, Reclaim

POINTERS = ("ref", "object")
COPY_SLICE = 60.0  # seconds one record's invocation carries a copy on before handing it to the next
TTL_PRINCIPAL = "dynamodb.amazonaws.com"


def pointers(item: Item | None) -> set[str]:
    """The object keys an item names (for an intent: the objects it covers)."""
    if not item:
        return set()
    found = {str(item[a]["S"]) for a in POINTERS if a in item and "S" in item[a]}
    if OBJECTS in item:
        found |= {str(v["S"]) for v in item[OBJECTS].get("L", [])}
    return found


def removed_by_ttl(record: dict[str, Any]) -> bool:
    identity = record.get("userIdentity") or {}
    return identity.get("type") == "Service" and identity.get("principalId") == TTL_PRINCIPAL


def is_intent(item: Item | None) -> bool:
    return bool(item) and str(item.get(keys.PK, {}).get("S", "")).startswith(INTENT_PREFIX)  # type: ignore[union-attr]


def released(ctx: Context, record: dict[str, Any]) -> Plan[list[str]]:
    """The object keys a stream record releases (see the module docstring)."""
    change = record.get("dynamodb") or {}
    old, new = change.get("OldImage"), change.get("NewImage")
    if is_intent(old):
        if record.get("eventName") != "REMOVE" or not removed_by_ttl(record):
            return []
        if get_s(old or {}, "kind") == "trace":
            alive = yield from _session_live(ctx, get_s(old or {}, "session_id"), get_s(old or {}, "owner"))
            if alive:
                return []
        return sorted(pointers(old))
    if is_intent(new):
        return []
    return sorted(k for k in pointers(old) - pointers(new) if _own(old or {}, k))


def _own(item: Item, key: str) -> bool:
    """Whether object `key` is under the prefix of the session whose item `item` is, or of the owner whose
    memory it is (items of other partitions, run and workflow checkpoints, own what they name)."""
    pk = get_s(item, keys.PK) or ""
    if pk.startswith(MEMORY_PK) and (get_s(item, keys.SK) or "").startswith(m.MEMORY_PREFIX):
        return key.startswith(object_keys.memory_prefix(pk[len(MEMORY_PK) :]))
    if not pk.startswith(keys.session_pk("")):
        return True
    parts = key.split("/")
    return len(parts) > 3 and parts[0] == "sessions" and parts[2] == pk[len(keys.session_pk("")) :]


def _session_live(ctx: Context, session_id: str | None, owner: str | None) -> Plan[bool]:
    if not session_id:
        return False
    item = yield from get_item(ctx.sessions_table, keys.head_key(session_id))
    if item is None:
        return False
    head = head_from_item(item)
    same_scope = owner is None or object_keys.digest(head.session.owner) == object_keys.digest(owner)
    return same_scope and head.live(ctx.now(), None)


def removed_head(record: dict[str, Any]) -> tuple[str, str, Item] | None:
    """(session id, owner, the removed head) when the record is the removal of a session head not made by
    the cascade."""
    old = (record.get("dynamodb") or {}).get("OldImage") or {}
    if record.get("eventName") != "REMOVE" or get_s(old, keys.SK) != keys.HEAD:
        return None
    if old.get(CASCADE, {}).get("BOOL"):
        return None  # the cascade's own tombstone, removed by its purge
    session_id, owner = get_s(old, "id"), get_s(old, "owner")
    return (session_id, owner, old) if session_id and owner else None


def handed_off(record: dict[str, Any]) -> tuple[str, str, Item] | None:
    """(session id, owner, the head) when the record marks a deleting head `handoff`: its purge is the
    cascade's."""
    images = record.get("dynamodb") or {}
    new, old = images.get("NewImage") or {}, images.get("OldImage") or {}
    if record.get("eventName") != "MODIFY" or get_s(new, keys.SK) != keys.HEAD:
        return None
    if not _handed_on(old, new):
        return None
    session_id, owner = get_s(new, "id"), get_s(new, "owner")
    return (session_id, owner, new) if session_id and owner else None


def _handed_on(old: Item, new: Item) -> bool:
    """Whether the change marks the item `handoff` anew (first marked, or handed on once more)."""
    if not new.get(HANDOFF, {}).get("BOOL"):
        return False
    return not old.get(HANDOFF, {}).get("BOOL") or old.get(HANDOFFS) != new.get(HANDOFFS)


def copy_started(record: dict[str, Any]) -> str | None:
    """The session id when the record is a head gaining a copy into its transcript, or the copy's next
    lap: the copy is the cascade's to carry on."""
    images = record.get("dynamodb") or {}
    new, old = images.get("NewImage") or {}, images.get("OldImage") or {}
    if record.get("eventName") not in ("INSERT", "MODIFY") or get_s(new, keys.SK) != keys.HEAD:
        return None
    seed = Seed.from_attr(new.get(SEED))
    if seed is None or new.get("deleting", {}).get("BOOL"):
        return None
    before = Seed.from_attr(old.get(SEED))
    if before is not None and (before.token, before.lap) == (seed.token, seed.lap):
        return None
    return get_s(new, "id")


def branch_handed_off(record: dict[str, Any]) -> tuple[str, str] | None:
    """(session id, branch) when the record marks a branch being deleted `handoff`: its purge is the
    cascade's."""
    images = record.get("dynamodb") or {}
    new, old = images.get("NewImage") or {}, images.get("OldImage") or {}
    sk = get_s(new, keys.SK) or ""
    if record.get("eventName") != "MODIFY" or not sk.startswith(BRANCH_PREFIX):
        return None
    if not _handed_on(old, new):
        return None
    pk = get_s(new, keys.PK) or ""
    return pk[len(keys.session_pk("")) :], sk[len(BRANCH_PREFIX) :]


def _purge_job(ctx: Context, record: dict[str, Any], _: Reclaim) -> Plan[int]:
    """Purge what remains of a session whose head was removed (by TTL, or at the end of a delete: a
    backstop that also catches uploads that landed late), or whose delete was handed on."""
    head = removed_head(record)
    if head is not None:
        yield from purge_removed(ctx, *head)
        if ctx.memories_table is not None:  # the session's message index goes with it
            while not (yield from drop_message_index(ctx, DropMessageIndex(owner=head[1], session_id=head[0]))):
                pass
    unfinished = handed_off(record)
    if unfinished is not None:
        session_id, owner, item = unfinished
        yield from purge(ctx, session_id, owner, head=item, may_hand_off=True)
    return 0


def _copy_job(ctx: Context, record: dict[str, Any], _: Reclaim) -> Plan[int]:
    """Carry a copy into a session on (a long fork's or rewind's), handing it on when its slice is up."""
    copying = copy_started(record)
    if copying is not None:
        yield from finish_copy(ctx, copying, slice_seconds=COPY_SLICE, hand_off=True)
    return 0


def _branch_job(ctx: Context, record: dict[str, Any], _: Reclaim) -> Plan[int]:
    """Finish the delete of a branch that was handed on."""
    branch = branch_handed_off(record)
    if branch is not None:
        yield from finish_branch_delete(ctx, *branch)
    return 0


def _forget_job(ctx: Context, record: dict[str, Any], request: Reclaim) -> Plan[int]:
    """Carry an owner's forget on (`forget_owner` of more than one call does), rewriting the session records
    `request.reduce` names."""
    marked = forget_marked(record)
    if marked is not None:
        yield from finish_forget(ctx, *marked, request.reduce, slice_seconds=FORGET_SLICE)
    return 0


def _objects_job(ctx: Context, record: dict[str, Any], _: Reclaim) -> Plan[int]:
    """Delete the objects the record releases; how many."""
    found = yield from released(ctx, record)
    yield from delete_objects(ctx, found)
    return len(found)


JOBS: dict[str, Callable[[Context, dict[str, Any], Reclaim], Plan[int]]] = {
    "purge": _purge_job,
    "copy": _copy_job,
    "branch": _branch_job,
    "objects": _objects_job,
    "forget": _forget_job,
}


def reclaim(ctx: Context, request: Reclaim) -> Plan[int]:
    """Each of the request's jobs for each record, in order; the total of objects released (a purge's are
    not counted)."""
    total = 0
    for record in request.records:
        for name, job in JOBS.items():
            if name in request.jobs:
                total += yield from job(ctx, record, request)
    return total
