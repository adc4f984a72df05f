"""Bodies too large for a DynamoDB item: moved to S3 before the write, read back transparently.

An item whose size with its body inline exceeds `settings.spill_item_bytes` keeps only a pointer
(`ref`, the object key) beside its codec; the body's stored bytes go to
`payloads/<write id>/<sha256>` under the session's (or checkpoint's) prefix. When a write's items
together would exceed the transaction limit, the largest bodies move out until they fit. Objects
are written, behind an upload intent, before the transaction that commits the pointers."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from store.aws import object_keys
from store.aws.attrs import Item, get_b, item_size, s
from store.aws.calls import AwsError, Plan
from store.aws.items import BODY
from store.aws.plans.base import Context, again, check_sizes
from store.aws.plans.objects import Intent, abandon, get_objects, put_objects, record_intent, session_owner
from store.aws.plans.transactions import Actions
from store.core import codec
from store.errors import StoreError

T = TypeVar("T")

REF = "ref"
TRANSACTION_HEADROOM = 64 * 1024
STAGE_ATTEMPTS = 5


def body_limit(ctx: Context) -> int:
    """The largest stored body this store accepts: the hard cap with a bucket, the item limit without."""
    return ctx.settings.max_payload_bytes if ctx.bucket else codec.MAX_BODY_BYTES


def write_limit(ctx: Context) -> int:
    """The largest total of stored bodies in one call."""
    return ctx.settings.max_payload_bytes if ctx.bucket else codec.MAX_WRITE_BYTES


def encode_all(ctx: Context, values: list[Any], what: str) -> list[tuple[str, bytes]]:
    """`codec.encode_all` with this store's limits."""
    return codec.encode_all(values, what, body_limit(ctx), write_limit(ctx))


def encode(ctx: Context, value: Any, what: str) -> tuple[str, bytes]:
    return codec.encode(value, what, body_limit(ctx))


def spill(ctx: Context, items: list[Item], prefix: str, write_id: str) -> tuple[list[Item], list[tuple[str, bytes]]]:
    """`items` with the bodies that must live in S3 replaced by pointers, and the objects to write."""
    out = list(items)
    sizes = [item_size(i) for i in out]
    objects: dict[str, bytes] = {}

    def move(i: int) -> None:
        payload = get_b(out[i], BODY) or b""
        key = object_keys.payload_key(prefix, write_id, payload)
        if key in objects:  # two bodies of one write alike: each item still has an object of its own
            key = object_keys.payload_key(prefix, f"{write_id}-{i}", payload)
        out[i] = {**{k: v for k, v in out[i].items() if k != BODY}, REF: s(key)}
        objects[key] = payload
        sizes[i] = item_size(out[i])

    for i, size in enumerate(sizes):
        if size > ctx.settings.spill_item_bytes and BODY in out[i]:
            move(i)
    budget = ctx.settings.max_transaction_bytes - TRANSACTION_HEADROOM
    while sum(sizes) > budget:
        inline = [i for i in range(len(out)) if BODY in out[i]]
        if not inline:
            break
        move(max(inline, key=lambda i: sizes[i]))
    return out, list(objects.items())


@dataclass
class Staged:
    """The items to commit (bodies replaced by pointers where needed) and the intent covering the
    objects already written for them (None when nothing spilled)."""

    items: list[Item]
    intent: Intent | None = None

    def release(self, ctx: Context, actions: Actions) -> Actions:
        """`actions` with the intent's removal added (as "intent") when objects were staged: the commit
        that points at the objects also releases them."""
        return actions if self.intent is None else actions.add("intent", self.intent.release(ctx))


def stage(
    ctx: Context,
    items: list[Item],
    what: str,
    *,
    session: tuple[str, str | None] | None,
    prefix: str | None = None,
    write_id: str,
    fixed: list[Item] | None = None,
) -> Plan[Staged]:
    """Make `items` fit in DynamoDB: spill what must go to S3, record the intent and write the objects.
    For a session's items pass `session` = (session id, caller's owner): the prefix is its owner's and
    the intent is checked against its head. Otherwise pass the `prefix`.
    `fixed` are the write's other items (they count toward the transaction size but never spill).
    PayloadTooLarge when the items cannot fit even so (no bucket configured, or too many)."""
    fixed = fixed or []
    attempt = 0
    while True:
        if session is not None:
            session_id, owner = session
            owner_of = yield from session_owner(ctx, session_id, owner)
            prefix = object_keys.session_prefix(owner_of, session_id)
        if prefix is None:
            raise TypeError("stage() needs a session or a prefix")
        out, objects = spill(ctx, [*fixed, *items], prefix, write_id) if ctx.bucket else ([*fixed, *items], [])
        check_sizes(ctx, out, what)
        out = out[len(fixed) :]
        if not objects:
            return Staged(out)
        intent = yield from record_intent(
            ctx,
            [k for k, _ in objects],
            session=(session[0], session[1], owner_of) if session is not None else None,
        )
        if intent is not None:
            break
        attempt = yield from again(ctx, attempt, what)  # the session turned out to be another: rebuild
    try:
        yield from put_objects(ctx, objects)
    except AwsError:
        yield from abandon(ctx, intent)
        raise
    return Staged(out, intent)


def committed(ctx: Context, staged: Staged, write: Callable[[], Plan[T]]) -> Plan[T]:
    """Run `write` (the commit); if it definitely failed (a StoreError raised by the plan: a condition,
    a conflict, a missing session), the staged objects and intent are removed at once. An AWS error
    leaves them: the write may have landed, and if it did not, the intent's TTL reclaims them."""
    try:
        result = yield from write()
    except StoreError:
        yield from abandon(ctx, staged.intent)
        raise
    return result


def resolve(ctx: Context, items: list[Item]) -> Plan[list[Item]]:
    """`items` with every pointer replaced by its body, fetched from S3 concurrently and checked
    against the SHA-256 its key names."""
    spilled = [i for i, item in enumerate(items) if REF in item]
    if not spilled:
        return items
    refs = [items[i][REF]["S"] for i in spilled]
    bodies = yield from get_objects(ctx, refs)
    out = list(items)
    for i, ref, body in zip(spilled, refs, bodies, strict=True):
        if hashlib.sha256(body).hexdigest() != object_keys.payload_sha256(ref):
            raise StoreError(f"stored payload {ref} does not match its digest")
        out[i] = {**{k: v for k, v in out[i].items() if k != REF}, BODY: {"B": body}}
    return out


def resolve_one(ctx: Context, item: Item | None) -> Plan[Item | None]:
    if item is None:
        return None
    (out,) = yield from resolve(ctx, [item])
    return out
