"""The stream consumer, with DynamoDB stream events as Lambda delivers them. moto emits no TTL removals,
so those records are synthesized from the items as they were."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from typing import Any

import pytest

from functions import runtime
from infra.local.apigw import LambdaContext
from infra.local.stack import lambda_image
from tests.conftest import Harness

TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}


@pytest.fixture
def cascade(dyn: Harness) -> Iterator[Harness]:
    runtime.use_store(dyn.store)
    yield dyn
    runtime.use_store(None)


def ttl_removal(item: dict[str, Any], sequence: int) -> dict[str, Any]:
    return {
        "eventID": f"event-{sequence}",
        "eventName": "REMOVE",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/sessions/stream/2026-11-30T00:00:00.000",
        "userIdentity": TTL_IDENTITY,
        "dynamodb": {
            "Keys": {"pk": item["pk"], "sk": item["sk"]},
            "OldImage": lambda_image(item),
            "SequenceNumber": str(100 + sequence),
            "SizeBytes": 100,
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }


def remove_like_ttl(dyn: Harness, inspector: Any, pk: str, sk: str) -> dict[str, Any]:
    assert dyn.tables is not None
    key = {"pk": {"S": pk}, "sk": {"S": sk}}
    item = inspector.get_item(TableName=dyn.tables.sessions, Key=key)["Item"]
    inspector.delete_item(TableName=dyn.tables.sessions, Key=key)
    return dict(item)


def handle(records: list[dict[str, Any]]) -> dict[str, Any]:
    from functions.cascade.app import lambda_handler

    result: dict[str, Any] = lambda_handler({"Records": records}, LambdaContext())
    return result


def test_an_expired_session_is_purged(cascade: Harness, inspector_client: Any) -> None:
    store = cascade.store
    sid = store.create_session("alice", retention=60).id
    store.append_messages(sid, [{"role": "user", "content": "hello"}])
    store.put_artifact(sid, "a.txt", b"x")
    store.append_trace_events(sid, "r", [{"e": 1}])
    store.save_state(sid, {"big": base64.b64encode(os.urandom(600_000)).decode()})
    cascade.clock.advance(3600)
    head = remove_like_ttl(cascade, inspector_client, f"S#{sid}", "HEAD")
    assert handle([ttl_removal(head, 1)]) == {"batchItemFailures": []}
    assert cascade.snapshot() == ([], [], [])


def test_an_expired_upload_intent_is_reclaimed(cascade: Harness, inspector_client: Any) -> None:
    store = cascade.store
    sid = store.create_session("alice").id
    upload = store.presign_artifact_upload(sid, "never-confirmed.bin")
    from tests.contract.test_artifacts import put_through_url

    put_through_url(cascade, upload.url, b"uploaded, never confirmed")
    assert len(cascade.objects()) == 1
    intent = remove_like_ttl(cascade, inspector_client, f"U#{upload.upload_id}", "UPLOAD")
    assert handle([ttl_removal(intent, 1)]) == {"batchItemFailures": []}
    assert cascade.objects() == []
    assert store.list_artifacts(sid) == []


def test_failed_records_are_reported_one_by_one(cascade: Harness, inspector_client: Any) -> None:
    store = cascade.store
    good_sid = store.create_session("alice", retention=60).id
    cascade.clock.advance(3600)
    good = remove_like_ttl(cascade, inspector_client, f"S#{good_sid}", "HEAD")
    broken = ttl_removal(good, 2)
    broken["dynamodb"]["OldImage"] = {
        **broken["dynamodb"]["OldImage"],
        "pk": {"S": "U#x"},
        "sk": {"S": "UPLOAD"},
        "objects": {"L": [{"S": "k"}]},
    }
    original = cascade.store

    class Failing:
        """A store whose reclaim fails for one record (as S3 might)."""

        def reclaim(self, records: list[dict[str, Any]], *, jobs: Any = None) -> int:
            if records[0]["eventID"] == "event-2":
                raise RuntimeError("S3 is down")
            return original.reclaim(records, jobs=jobs)

    runtime.use_store(Failing())  # type: ignore[arg-type]
    result = handle([ttl_removal(good, 1), broken, ttl_removal(good, 3)])
    assert result == {"batchItemFailures": [{"itemIdentifier": "102"}]}
