"""Mapping AWS errors to the store's errors (used by every driver, so no botocore error leaks)."""

from __future__ import annotations

from typing import Any

from store.aws.calls import AwsError, Call
from store.errors import Conflict, InvalidInput, PayloadTooLarge, StoreError, StoreUnavailable

THROTTLED = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "LimitExceededException",
        "SlowDown",
        "TooManyRequestsException",
    }
)


def from_client_error(response: dict[str, Any], call: Call) -> AwsError:
    """An AwsError from a botocore ClientError's parsed response."""
    error = response.get("Error", {}) if isinstance(response, dict) else {}
    code = str(error.get("Code") or "Unknown")
    return AwsError(
        code=code, message=str(error.get("Message") or ""), op=call.op, service=call.service, response=dict(response)
    )


def from_transport_error(exc: BaseException, call: Call) -> AwsError:
    """An AwsError for a request that got no response (connection reset, timeout, endpoint down)."""
    return AwsError(code="ConnectionError", message=f"{type(exc).__name__}: {exc}", op=call.op, service=call.service)


def to_store_error(err: AwsError) -> StoreError:
    """The StoreError a caller sees for an AWS error no plan handled."""
    where = f"{err.service}.{err.op}"
    if err.code in THROTTLED:
        return StoreUnavailable(f"{where} throttled after retries: {err.message}")
    if err.code == "ValidationException" and "size" in err.message.lower():
        return PayloadTooLarge(f"{where}: {err.message}")
    if err.code in ("TransactionCanceledException", "ConditionalCheckFailedException", "TransactionConflictException"):
        return Conflict(f"{where}: {err.code}: {err.message}")
    if err.code == "ValidationException":  # a value DynamoDB cannot hold that validation let through
        return InvalidInput(f"{where} refused a value: {err.message}")
    return StoreUnavailable(f"{where} failed: {err.code}: {err.message}")
