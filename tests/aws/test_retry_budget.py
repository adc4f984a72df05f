"""Only genuine contention is retried, and only within a time budget (DynamoDB backend: the memory backend
takes a lock and never retries). A transaction refused for what its input is comes back at once."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from botocore.config import Config

from infra.local.aws import local_client
from store import Conflict, InvalidInput, PayloadTooLarge
from store.session_store import retry_config
from tests.aws.test_dynamo_failures import failing_sends
from tests.conftest import FakeClock, Harness, make_harness


def cancel_every(client: Any, op: str, reasons: list[str]) -> list[int]:
    """Answer every `op` (the next thousand) with a TransactionCanceledException whose reasons are
    `reasons` (codes, one per action; the request never reaches moto). Returns the attempts' counter."""
    extra = {"CancellationReasons": [{"Code": code, "Message": f"injected {code}"} for code in reasons]}
    return failing_sends(client, op, [(400, "TransactionCanceledException")] * 1000, extra=extra)


@pytest.fixture
def fresh_client(aws: None) -> Any:
    return local_client(config=retry_config(Config(retries={"mode": "standard", "max_attempts": 1})))


@pytest.fixture
def dyn(
    fresh_client: Any, inspector_client: Any, s3_client: Any, inspector_s3: Any, clock: FakeClock
) -> Iterator[Harness]:
    budget = timedelta(seconds=0.5)
    h = make_harness("dynamodb", clock, fresh_client, inspector_client, s3_client, inspector_s3, retry_budget=budget)
    yield h
    assert h.requests is not None
    h.requests.detach()


def test_a_refused_value_is_not_retried(dyn: Harness, fresh_client: Any) -> None:
    """What the input caused (DynamoDB's ValidationError) is InvalidInput after one request."""
    sid = dyn.store.create_session("alice").id
    [rec] = dyn.store.append_messages(sid, [{"role": "user", "content": "x"}])
    attempts = cancel_every(fresh_client, "TransactWriteItems", ["None", "ValidationError"])
    with pytest.raises(InvalidInput, match="refused"):
        dyn.store.update_usage(sid, rec.id, {"input_tokens": 1})
    assert len(attempts) == 1
    with pytest.raises(InvalidInput):
        dyn.store.append_messages(sid, [{"role": "user", "content": "y"}])
    with pytest.raises(InvalidInput):
        dyn.store.pop_message(sid)
    with pytest.raises(InvalidInput):
        dyn.store.mark_compaction(sid, rec.id)
    assert len(attempts) == 4


def test_a_full_item_collection_is_payload_too_large(dyn: Harness, fresh_client: Any) -> None:
    sid = dyn.store.create_session("alice").id
    attempts = cancel_every(fresh_client, "TransactWriteItems", ["None", "ItemCollectionSizeLimitExceeded"])
    with pytest.raises(PayloadTooLarge):
        dyn.store.append_messages(sid, [{"role": "user", "content": "y"}])
    assert len(attempts) == 1


def test_a_cancellation_that_is_not_contention_is_not_retried(dyn: Harness, fresh_client: Any) -> None:
    """update_usage retries only when its message's usage moved under it, mark_compaction and pop_message
    only when the head or the message did, delete_artifact only when a version was added: a transaction
    cancelled for any other reason is a Conflict after one attempt."""
    sid = dyn.store.create_session("alice").id
    [rec] = dyn.store.append_messages(sid, [{"role": "user", "content": "x"}])
    dyn.store.put_artifact(sid, "a.txt", b"x")
    attempts = cancel_every(fresh_client, "TransactWriteItems", ["None", "None", "None"])
    calls: list[Callable[[], Any]] = [
        lambda: dyn.store.update_usage(sid, rec.id, {"input_tokens": 1}),
        lambda: dyn.store.mark_compaction(sid, rec.id),
        lambda: dyn.store.pop_message(sid),
        lambda: dyn.store.delete_artifact(sid, "a.txt"),
    ]
    for call in calls:
        attempts.clear()
        with pytest.raises(Conflict):
            call()
        assert len(attempts) == 1


def test_contention_is_retried_within_the_time_budget(dyn: Harness, fresh_client: Any) -> None:
    """Contention on every attempt: the call gives up with Conflict once its budget (0.5 s here) is spent,
    long before its attempt count (500) would end it."""
    sid = dyn.store.create_session("alice").id
    [rec] = dyn.store.append_messages(sid, [{"role": "user", "content": "x"}])
    attempts = cancel_every(fresh_client, "TransactWriteItems", ["TransactionConflict", "None"])
    started = time.monotonic()
    with pytest.raises(Conflict, match=r"gave up after 0\.5 s"):
        dyn.store.update_usage(sid, rec.id, {"input_tokens": 1})
    took = time.monotonic() - started
    assert took < 5, f"the budget did not bound the call: {took:.1f} s"
    assert 2 <= len(attempts) < 500
    assert dyn.store.get_message(sid, rec.id).usage is None
