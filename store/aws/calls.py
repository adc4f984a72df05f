"""The sans-IO protocol between operation plans and drivers.

A plan is a generator. It yields a `Call` (an AWS client method and its parameters) and receives the
response dict, or has an `AwsError` thrown into it; it yields `Parallel` to have several calls run at
once, `Read` to take bytes from a caller's stream, and `Sleep` to back off; it returns the
operation's result. It yields `Learn` to say what it learned for the store's caches (the backend,
not the plan, keeps them). Drivers (sync boto3, async aiobotocore) only execute what plans yield, so key
layout, conditions, retries on conflict and error mapping live in the plans, once.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from store.core import steps
from store.core.steps import Sleep as Sleep  # one Sleep for every flow

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One AWS request: `service` client's `op` method (snake_case) with `params`.

    A streaming response body (S3 GetObject's `Body`) reaches the plan as `bytes`, read whole by the
    driver, unless `stream` is True: then the plan receives the driver's stream object, which it may
    only hand to `Read` steps or return to the caller."""

    op: str
    params: dict[str, Any]
    service: str = "dynamodb"
    stream: bool = False


@dataclass(frozen=True)
class Parallel:
    """Calls that do not depend on each other. The driver may run them concurrently; the plan receives
    their responses as a list in the same order. If any failed, the first failure (in call order) is
    thrown into the plan once all have finished; with `return_errors` the list holds the `AwsError`
    in that call's place instead."""

    calls: tuple[Call, ...]
    return_errors: bool = False


@dataclass(frozen=True)
class Read:
    """Take the next bytes from `source`, a caller's stream or a streaming response body: at most `size`
    bytes, at least one unless the source is exhausted (then b"")."""

    source: Any
    size: int


@dataclass(frozen=True)
class Learn:
    """What a plan learned for its store's caches: in `cache` (a `Context` cache: "positions",
    "trace_batches" or "turn_times"), `key` is now `value` (None: forget it). The backend keeps its caches
    (`store.aws.backend.keeper`): a plan only says what it learned, so its output is its steps and a replay
    checks this too. Drivers never see one."""

    cache: str
    key: str
    value: Any = None


Step = Call | Parallel | Read | Sleep  # what a driver performs
Plan = Generator[Step | Learn, Any, T]  # what a plan yields
Driven = Generator[Step, Any, T]  # a plan as its driver runs it: what it learned taken out by the backend


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


class Stepper(steps.Stepper[Step, T]):
    """Advances a plan on behalf of a driver (`store.core.steps.Stepper`): the outcome of a step is a
    response, a list of them, bytes, None after a Sleep, or an exception, which is thrown into the plan.
    A `Parallel` step's first AWS error is thrown in unless the step asks for its errors back. An AWS
    error the plan did not handle propagates from `advance`."""

    def advance(self, outcome: Any) -> None:
        step = self.step
        if isinstance(step, Parallel) and not isinstance(outcome, BaseException):
            failure = next((r for r in outcome if isinstance(r, AwsError)), None)
            if failure is not None and not step.return_errors:
                outcome = failure
        super().advance(outcome)
