"""The sans-IO protocol between operation plans and drivers.

A plan is a generator. It yields a `Call` (an AWS client method and its parameters) and receives the
response dict, or has an `AwsError` thrown into it; it yields `Sleep` to back off; it returns the
operation's result. Drivers (sync boto3, async aioboto3) only execute what plans yield, so key
layout, conditions, retries on conflict and error mapping live in the plans, once.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One AWS request: `service` client's `op` method (snake_case) with `params`."""

    op: str
    params: dict[str, Any]
    service: str = "dynamodb"


@dataclass(frozen=True)
class Sleep:
    """Back off for `seconds` before the next call (the driver sleeps its own way)."""

    seconds: float


Step = Call | Sleep
Plan = Generator[Step, Any, T]


@dataclass
class AwsError(Exception):
    """An AWS error, independent of the SDK that raised it. `code` is AWS's error code, or
    "ConnectionError" when no response arrived; `response` is the parsed error body."""

    code: str
    message: str
    op: str = ""
    service: str = "dynamodb"
    response: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.service}.{self.op}: {self.code}: {self.message}"

    @property
    def retried(self) -> bool:
        """True when the SDK sent this request more than once: an earlier attempt may have been applied
        although its response was lost."""
        meta = self.response.get("ResponseMetadata") or {}
        return bool(meta.get("RetryAttempts"))

    def cancellation_reasons(self) -> list[dict[str, Any]]:
        """For a cancelled transaction: one reason dict per item, in request order."""
        reasons = self.response.get("CancellationReasons")
        return list(reasons) if isinstance(reasons, list) else []
