"""S3 building blocks: writing objects behind an upload intent, reading them, deleting them.

The rule that keeps the bucket free of orphans: before any object is written, an intent item
(`UP#<upload id>`, listing the keys, with a TTL of `settings.upload_grace`) is stored in DynamoDB;
the transaction that commits the items pointing to the objects deletes the intent. If the commit
never happens, the intent expires, and its TTL removal (seen on the sessions table's stream) is the
signal to delete what it lists (see `plans/reclaim.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, n, s
from store.aws.calls import AwsError, Call, Parallel, Plan
from store.aws.plans.base import (
    PARALLEL_REQUESTS,
    Context,
    backoff,
    get_item,
    guard,
    out_of_time,
    read_head,
    stale_head,
)
from store.aws.plans.transactions import HEAD, Actions, cancelled, transact
from store.core.timeutil import epoch, expiry, iso, now_epoch
from store.errors import StoreError

DELETE_OBJECTS_MAX = 1000
INTENT_PREFIX = "U#"
INTENT_SK = "UPLOAD"
OBJECTS = "objects"
COMMITTED = "committed"  # a presigned upload's intent, kept until its URL expires: the version it became


def bucket(ctx: Context) -> str:
    """The configured bucket; StoreError when the store was built without one."""
    if ctx.bucket is None:
        raise StoreError("this store has no bucket: pass bucket=... or set ARTIFACTS_BUCKET")
    return ctx.bucket


def s3(op: str, ctx: Context, *, stream: bool = False, **params: Any) -> Call:
    """An S3 call on the store's bucket."""
    return Call(op, {"Bucket": bucket(ctx), **params}, service="s3", stream=stream)


def intent_key(upload_id: str) -> Item:
    """Intents have partitions of their own, so that deleting a session never deletes the record that
    an upload in flight for it must be reclaimed."""
    return {keys.PK: s(f"{INTENT_PREFIX}{upload_id}"), keys.SK: s(INTENT_SK)}


@dataclass
class Intent:
    """A recorded plan to write objects: the intent item's key and the object keys it covers."""

    key: Item
    objects: list[str] = field(default_factory=list)

    def release(self, ctx: Context) -> dict[str, Any]:
        """The transaction action that commits the objects: the intent goes, conditional on it being
        there and unexpired (once expired, its objects belong to the reclaimer)."""
        expr = Expr()
        return {
            "Delete": {
                "TableName": ctx.sessions_table,
                "Key": self.key,
                "ConditionExpression": _pending(expr, ctx),
                **expr.params(),
            }
        }

    def cover(self, ctx: Context, objects: Sequence[str], committed: str | None = None) -> dict[str, Any]:
        """An Update of the intent, while it is pending (unexpired, not committed), so that it covers
        `objects` from now on (what its expiry will reclaim); with `committed`, it also records the object
        that became a version, which ends its pending life."""
        expr = Expr()
        sets = [f"{expr.name(OBJECTS)} = {expr.value({'L': [s(k) for k in objects]})}"]
        if committed is not None:
            sets.append(f"{expr.name(COMMITTED)} = {expr.value(s(committed))}")
        return {
            "Update": {
                "TableName": ctx.sessions_table,
                "Key": self.key,
                "UpdateExpression": "SET " + ", ".join(sets),
                "ConditionExpression": f"{_pending(expr, ctx)} AND attribute_not_exists({expr.name(COMMITTED)})",
                **expr.params(),
            }
        }


def _pending(expr: Expr, ctx: Context) -> str:
    """Condition: the intent is there, not expired (once expired its objects belong to the reclaimer)."""
    return f"attribute_exists({expr.name(keys.PK)}) AND {expr.name(keys.TTL)} > {expr.value(n(now_epoch(ctx.now())))}"


def intent_item(ctx: Context, key: Item, objects: Sequence[str], extra: Item | None = None, grace: Any = None) -> Item:
    now = ctx.now()
    item: Item = {
        **key,
        OBJECTS: {"L": [s(k) for k in objects]},
        "created_at": s(iso(now)),
        keys.TTL: n(epoch(expiry(now, grace or ctx.settings.upload_grace))),
    }
    return {**item, **(extra or {})}


def session_owner(ctx: Context, session_id: str, owner: str | None) -> Plan[str]:
    """The owner of a live session (whose digest scopes its objects): from the known position when the
    caller's owner agrees with it, else read from the head (SessionNotFound when not live for `owner`)."""
    pos = ctx.positions.get(session_id)
    if pos is not None and pos.owner and (owner is None or owner == pos.owner):
        return pos.owner
    head = yield from read_head(ctx, session_id, owner)
    return head.session.owner


def record_intent(
    ctx: Context,
    objects: Sequence[str],
    *,
    session: tuple[str, str | None, str] | None = None,
    upload_id: str | None = None,
    extra: Item | None = None,
    grace: Any = None,
    life: str | None = None,
) -> Plan[Intent | None]:
    """Store the intent for `objects`. With `session` = (session id, caller's owner,
    session owner whose digest is in the keys): in one transaction with a check that the session is
    live and has that owner (and, with `life`, that creation time). Returns None when the session turned
    out to be another (the caller rebuilds its keys and tries again); SessionNotFound when it is not live
    for the caller."""
    key = intent_key(upload_id or ctx.new_id())
    item = intent_item(ctx, key, objects, extra, grace)
    put = {"TableName": ctx.sessions_table, "Item": item}
    if session is None:
        yield Call("put_item", put)
        return Intent(key, list(objects))
    session_id, owner, session_owner_ = session
    expr = Expr()
    check = {
        "ConditionCheck": {
            "TableName": ctx.sessions_table,
            "Key": keys.head_key(session_id),
            "ConditionExpression": guard(expr, ctx.now(), session_owner_)
            + ("" if life is None else f" AND {expr.name('created_at')} = {expr.value(s(life))}"),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **expr.params(),
        }
    }
    actions = Actions(head=check, intent={"Put": put})
    attempt = 0
    while True:
        try:
            yield transact(actions, ctx.new_id())
        except AwsError as err:
            failed = cancelled(err, actions)
            if failed.failed(HEAD):
                yield from stale_head(ctx, session_id, owner, failed.old(HEAD))  # SessionNotFound, or a new owner
                return None
            if not failed.conflicted():
                raise
            attempt = yield from backoff(ctx, attempt, "the intent of an upload")  # the same write, later
            continue
        return Intent(key, list(objects))


def put_objects(ctx: Context, objects: Sequence[tuple[str, bytes]]) -> Plan[None]:
    """Write the objects, concurrently when several (their keys are unique to one write)."""
    if not objects:
        return
    calls = tuple(
        s3("put_object", ctx, Key=k, Body=body, ContentType="application/octet-stream") for k, body in objects
    )
    yield Parallel(calls)


def get_objects(ctx: Context, object_keys: Sequence[str]) -> Plan[list[bytes]]:
    """The bytes of each object, fetched concurrently; StoreError naming any that is missing."""
    if not object_keys:
        return []
    try:
        responses = yield Parallel(tuple(s3("get_object", ctx, Key=k) for k in object_keys))
    except AwsError as err:
        if err.code in ("NoSuchKey", "404"):
            raise StoreError(f"a stored payload is missing from the bucket: {err.message}") from err
        raise
    return [bytes(r["Body"]) for r in responses]


def copy_objects(ctx: Context, pairs: Sequence[tuple[str, str]]) -> Plan[None]:
    """Copy objects inside the bucket (S3 moves the bytes), (source, target) pairs, up to PARALLEL_REQUESTS
    at once; StoreError naming a source that is missing. For bodies of at most 5 GB (spilled payloads)."""
    for start in range(0, len(pairs), PARALLEL_REQUESTS):
        calls = tuple(
            s3("copy_object", ctx, Key=target, CopySource={"Bucket": bucket(ctx), "Key": source})
            for source, target in pairs[start : start + PARALLEL_REQUESTS]
        )
        try:
            yield Parallel(calls)
        except AwsError as err:
            if err.code in ("NoSuchKey", "404"):
                raise StoreError(f"a stored payload is missing from the bucket: {err.message}") from err
            raise


def delete_objects(ctx: Context, object_keys: Sequence[str]) -> Plan[None]:
    """Delete objects by key, 1,000 a request, up to PARALLEL_REQUESTS requests at once; deleting what is
    already gone succeeds."""
    chunks = [object_keys[i : i + DELETE_OBJECTS_MAX] for i in range(0, len(object_keys), DELETE_OBJECTS_MAX)]
    for start in range(0, len(chunks), PARALLEL_REQUESTS):
        calls = tuple(
            s3("delete_objects", ctx, Delete={"Objects": [{"Key": k} for k in chunk], "Quiet": True})
            for chunk in chunks[start : start + PARALLEL_REQUESTS]
        )
        responses = yield Parallel(calls)
        errors = [e for resp in responses for e in resp.get("Errors", []) if e.get("Code") != "NoSuchKey"]
        if errors:
            first = errors[0]
            raise AwsError(str(first.get("Code")), str(first.get("Message")), "delete_objects", "s3")


def delete_prefix(ctx: Context, prefix: str, reserve: float | None = None) -> Plan[bool]:
    """Delete every object under `prefix`, a page of up to 1,000 at a time (an operations path, not a
    request path: it lists). Safe to repeat. With a `reserve`, it stops (False) once less than that is left
    before the enclosing `store.deadline`; True when nothing is left under the prefix."""
    token: str | None = None
    while True:
        if reserve is not None and out_of_time(ctx, reserve):
            return False
        params: dict[str, Any] = {"Prefix": prefix, "MaxKeys": DELETE_OBJECTS_MAX}
        if token:
            params["ContinuationToken"] = token
        resp = yield s3("list_objects_v2", ctx, **params)
        found = [o["Key"] for o in resp.get("Contents", [])]
        yield from delete_objects(ctx, found)
        token = resp.get("NextContinuationToken") if resp.get("IsTruncated") else None
        if not token:
            return True


def abandon(ctx: Context, intent: Intent | None) -> Plan[None]:
    """After a write that definitely did not commit: delete its objects, then its intent. Best effort:
    if this fails too, the intent's TTL reclaims the objects later."""
    if intent is None:
        return
    try:
        yield from delete_objects(ctx, intent.objects)
        yield Call("delete_item", {"TableName": ctx.sessions_table, "Key": intent.key})
    except AwsError:
        return


def load_intent(ctx: Context, upload_id: str) -> Plan[Item | None]:
    item: Item | None = yield from get_item(ctx.sessions_table, intent_key(upload_id))
    return item
