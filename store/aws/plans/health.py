"""The plan for the health check."""

from __future__ import annotations

from store.aws import keys
from store.aws.calls import AwsError, Call, Plan
from store.aws.plans.base import Context
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
    if problems:
        raise StoreUnavailable("unreachable: " + "; ".join(problems))
