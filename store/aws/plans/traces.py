"""Plans for trace events: each batch one gzip-compressed JSON-lines object in S3.

A run's item (`RUN#<run id>` in the session's partition) counts its batches. Appending allocates
the next batch number with a conditional write (the count must still be what this store last saw,
or what the failed condition returned), in one transaction with the session head's touch; the
batch is then written to `traces/<run id>/<batch number>`. Batches of one run are therefore
ordered by allocation, even when concurrent invocations append to the same run, and loading reads
batches 1..count concurrently. A batch whose upload failed after its number was allocated is a gap
that loading skips (the append raised, so its caller knows).

The allocating transaction also stores an intent naming the batch's key, deleted once the object is
written. If the writer dies first, the intent expires, and the reclaimer deletes the object only if
its session is gone (an upload that landed after its session was deleted); a batch of a live session
is kept, since its number was allocated."""

from __future__ import annotations

import gzip
import json
from typing import Any

from store.aws import keys, object_keys
from store.aws.attrs import Expr, Item, get_int, get_s, n, s
from store.aws.calls import AwsError, Call, Learn, Parallel, Plan
from store.aws.plans.base import (
    PARALLEL_REQUESTS,
    TRACE_BATCHES,
    Context,
    Position,
    again,
    batch_get,
    find_head,
    live_head,
    partition_prefix,
    read_head,
    touch_head,
)
from store.aws.plans.objects import bucket, intent_item, intent_key, s3, session_owner
from store.aws.plans.transactions import Actions, BatchNumbered
from store.aws.plans.writes import write_session
from store.core import codec
from store.core.timeutil import iso
from store.errors import PayloadTooLarge
from store.requests import AppendTraceEvents, AppendTraceRuns, ListTraceRuns, LoadTraceEvents

GZIP_LEVEL = 6
KIND_TRACE = "trace"
LOAD_CONCURRENCY = 32


def encode_batch(events: list[dict[str, Any]]) -> bytes:
    """Events as gzip-compressed JSON lines (one compact JSON object per line)."""
    lines = "".join(codec.dumps(e, "trace event") + "\n" for e in events)
    return gzip.compress(lines.encode("utf-8"), compresslevel=GZIP_LEVEL, mtime=0)


def decode_batch(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines() if line]


def append_trace_events(ctx: Context, request: AppendTraceEvents) -> Plan[int]:
    """Append one batch to a run; returns its batch number (1, 2, 3, ... per run)."""
    numbers = yield from append_batches(ctx, request.session_id, request.owner, {request.run_id: request.events})
    return numbers[request.run_id]


def append_trace_runs(ctx: Context, request: AppendTraceRuns) -> Plan[dict[str, int]]:
    """Append one batch to each of several runs of a session; returns each run's batch number."""
    return (yield from append_batches(ctx, request.session_id, request.owner, request.runs))


def append_batches(
    ctx: Context, session_id: str, owner: str | None, runs: dict[str, list[dict[str, Any]]]
) -> Plan[dict[str, int]]:
    """Number a batch of each run in one transaction (the head's touch, each run's count n -> n + 1, one
    intent naming every object), then write the objects (PARALLEL_REQUESTS at once) and delete the intent.
    A run whose number another writer took first is numbered again at once, from the count it returned."""
    bucket(ctx)  # before anything is written
    bodies = {run_id: encode_batch(events) for run_id, events in runs.items()}
    size = sum(len(b) for b in bodies.values())
    if size > ctx.settings.max_payload_bytes:
        raise PayloadTooLarge(
            f"trace batches of {size} bytes compressed; the limit is {ctx.settings.max_payload_bytes}"
        )
    owner_of = yield from session_owner(ctx, session_id, owner)
    prefix = object_keys.session_prefix(owner_of, session_id)
    order = list(runs)
    known = {run_id: ctx.trace_batches.get(f"{session_id}/{run_id}") or 0 for run_id in order}
    ikey = intent_key(ctx.new_id())
    attempt = 0
    while True:
        now = ctx.now()
        numbered = dict(known)

        def build(pos: Position, now: Any = now, numbered: dict[str, int] = numbered) -> Actions:
            head = touch_head(ctx, session_id, owner or owner_of, pos, now)
            updates = [
                _run_update(ctx, session_id, run_id, numbered[run_id], len(runs[run_id]), now) for run_id in order
            ]
            keys_ = [object_keys.trace_key(prefix, run_id, numbered[run_id] + 1) for run_id in order]
            extra = {"kind": s(KIND_TRACE), "session_id": s(session_id), "owner": s(owner_of)}
            intent = {"Put": {"TableName": ctx.sessions_table, "Item": intent_item(ctx, ikey, keys_, extra)}}
            return Actions(head=head, intent=intent).add_each("run", updates)

        try:
            yield from write_session(
                ctx, session_id, owner, build, what="append_trace_events", expected=(BatchNumbered,)
            )
        except BatchNumbered as exc:  # another batch took these numbers: the next ones, at once
            for name in exc.failed.failed_of("run"):
                run_id = order[int(name[len("run[") : -1])]
                known[run_id] = get_int(exc.failed.old(name) or {}, "batches")
            attempt = yield from again(ctx, attempt, "append_trace_events")
            continue
        break
    numbers = {run_id: known[run_id] + 1 for run_id in order}
    for run_id, batch in numbers.items():
        yield Learn(TRACE_BATCHES, f"{session_id}/{run_id}", batch)
    puts = [
        s3(
            "put_object",
            ctx,
            Key=object_keys.trace_key(prefix, run_id, numbers[run_id]),
            Body=bodies[run_id],
            ContentType="application/x-ndjson",
            ContentEncoding="gzip",
        )
        for run_id in order
    ]
    for start in range(0, len(puts), PARALLEL_REQUESTS):
        yield Parallel(tuple(puts[start : start + PARALLEL_REQUESTS]))
    yield Call("delete_item", {"TableName": ctx.sessions_table, "Key": ikey})
    return numbers


def _run_update(ctx: Context, session_id: str, run_id: str, known: int, events: int, now: Any) -> dict[str, Any]:
    """The transaction Update numbering a run's next batch: `batches` known -> known + 1 (only if still
    `known`: the failed condition returns the run as it is), `events` counted, the run's times set."""
    rexpr = Expr()
    count = rexpr.name("batches")
    stamp = rexpr.value(s(iso(now)))
    return {
        "Update": {
            "TableName": ctx.sessions_table,
            "Key": keys.session_key(session_id, keys.run_sk(run_id)),
            "UpdateExpression": f"SET {count} = {rexpr.value(n(known + 1))}, "
            f"{rexpr.name('run_id')} = {rexpr.value(s(run_id))}, "
            f"{rexpr.name('created_at')} = if_not_exists({rexpr.name('created_at')}, {stamp}), "
            f"{rexpr.name('updated_at')} = {stamp} "
            f"ADD {rexpr.name('events')} {rexpr.value(n(events))}",
            "ConditionExpression": f"attribute_not_exists({count})"
            if known == 0
            else f"{count} = {rexpr.value(n(known))}",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            **rexpr.params(),
        }
    }


def _runs(ctx: Context, session_id: str, owner: str | None, run_id: str | None) -> Plan[tuple[str, list[Item]]]:
    """The session owner and the run items wanted (one run, or all in order of their first batch)."""
    if run_id is not None:
        wanted = [keys.head_key(session_id), keys.session_key(session_id, keys.run_sk(run_id))]
        items = yield from batch_get(ctx, ctx.sessions_table, wanted)
        head = yield from live_head(ctx, session_id, find_head(items, session_id), owner)
        return head.session.owner, [i for i in items if i[keys.SK]["S"] == keys.run_sk(run_id)]
    head = yield from read_head(ctx, session_id, owner)
    runs = yield from partition_prefix(ctx, session_id, keys.RUN_PREFIX)
    runs.sort(key=lambda r: (get_s(r, "created_at") or "", get_s(r, "run_id") or ""))
    return head.session.owner, runs


def list_trace_runs(ctx: Context, request: ListTraceRuns) -> Plan[list[str]]:
    session_id, owner = request.session_id, request.owner
    _, runs = yield from _runs(ctx, session_id, owner, None)
    return [get_s(r, "run_id") or "" for r in runs]


def load_trace_events(ctx: Context, request: LoadTraceEvents) -> Plan[list[dict[str, Any]]]:
    """Events of one run (or of every run, runs in order of their first batch), batches in order."""
    session_id, owner, run_id = request.session_id, request.owner, request.run_id
    owner_of, runs = yield from _runs(ctx, session_id, owner, run_id)
    prefix = object_keys.session_prefix(owner_of, session_id)
    wanted = [
        object_keys.trace_key(prefix, get_s(run, "run_id") or "", batch)
        for run in runs
        for batch in range(1, get_int(run, "batches") + 1)
    ]
    events: list[dict[str, Any]] = []
    for start in range(0, len(wanted), LOAD_CONCURRENCY):  # every run's batches, LOAD_CONCURRENCY at once
        calls = tuple(s3("get_object", ctx, Key=key) for key in wanted[start : start + LOAD_CONCURRENCY])
        responses = yield Parallel(calls, return_errors=True)
        for resp in responses:
            if isinstance(resp, AwsError):
                if resp.code in ("NoSuchKey", "404"):
                    continue  # a batch whose upload failed after its number was allocated
                raise resp
            events.extend(decode_batch(bytes(resp["Body"])))
    return events
