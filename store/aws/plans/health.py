"""The plan for the health check: every table and the bucket answer, and the memories index fits the
store's embedder."""

from __future__ import annotations

from store.aws import keys
from store.aws.calls import AwsError, Call, Plan
from store.aws.plans.base import Context
from store.aws.plans.memories import index_dimensions
from store.core.lexical import LEXICAL_DIMENSIONS
from store.errors import StoreUnavailable
from store.requests import HealthCheck


def health_check(ctx: Context, request: HealthCheck) -> Plan[None]:
    """Read a key that never exists from each table and check the bucket; StoreUnavailable names each
    that fails."""
    problems = []
    for label, table, key in (
        ("sessions table", ctx.sessions_table, keys.head_key("health-check")),
        ("messages table", ctx.messages_table, keys.message_key("health-check", 0)),
    ):
        try:
            yield Call("get_item", {"TableName": table, "Key": key})
        except AwsError as err:
            problems.append(f"{label} {table!r}: {err.code}")
    if ctx.bucket is not None:
        try:
            yield Call("head_bucket", {"Bucket": ctx.bucket}, service="s3")
        except AwsError as err:
            problems.append(f"bucket {ctx.bucket!r}: {err.code}")
    if ctx.memories_table is not None:
        problems += yield from _memories_problems(ctx, ctx.memories_table)
    if problems:
        raise StoreUnavailable("unreachable: " + "; ".join(problems))


def _memories_problems(ctx: Context, table: str) -> Plan[list[str]]:
    """What keeps the memories table from serving: unreachable, or its vector index of other dimensions than
    the store's embedder makes (every put would be refused)."""
    try:
        dims = yield from index_dimensions(ctx, table)
    except AwsError as err:
        return [f"memories table {table!r}: {err.code}"]
    embedder = ctx.settings.embedder
    if embedder is not None and dims is not None and dims != embedder.dimensions + LEXICAL_DIMENSIONS:
        return [
            f"memories table {table!r}: its vector index has {dims} dimensions, the embedder {embedder.model_id!r} "
            f"makes {embedder.dimensions} and words take {LEXICAL_DIMENSIONS} (MEMORY_EMBEDDER and the template's "
            "MemoryEmbeddingDimensions must agree)"
        ]
    return []
