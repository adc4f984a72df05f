"""Failures on the S3 half: every failure is a StoreError, and a write that fails leaves nothing behind."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config

from infra.local.aws import local_client
from store import StoreUnavailable
from store.session_store import retry_config, s3_config
from tests.conftest import FakeClock, Harness, make_harness

MB = 1024 * 1024


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


def inject(
    client: Any, event: str, status: int, body: bytes, content_type: str, *, when: Callable[[Any], bool], times: int
) -> list[int]:
    """Answer the next `times` matching requests with (status, body) without reaching moto; count them."""
    hits: list[int] = []

    def before_send(request: Any, **_: Any) -> AWSResponse | None:
        if len(hits) >= times or not when(request):
            return None
        hits.append(1)
        request.url = "https://injected-failure.invalid/"
        headers: Any = {"Content-Type": content_type}
        return AWSResponse(request.url, status, headers, _Raw(body))

    client.meta.events.register(event, before_send)
    return hits


def s3_error(client: Any, op: str, *, times: int = 100, when: Callable[[Any], bool] = lambda r: True) -> list[int]:
    body = b"<Error><Code>InternalError</Code><Message>injected</Message></Error>"
    return inject(client, f"before-send.s3.{op}", 500, body, "application/xml", when=when, times=times)


@pytest.fixture
def clients(aws: None) -> tuple[Any, Any]:
    """Clients of their own (hooks registered on them die with the test), 2 attempts per call."""
    cfg = Config(retries={"mode": "standard", "max_attempts": 2})
    return local_client(config=retry_config(cfg)), local_client("s3", config=s3_config(cfg))


@pytest.fixture
def s3h(clients: tuple[Any, Any], inspector_client: Any, inspector_s3: Any, clock: FakeClock) -> Iterator[Harness]:
    yield make_harness(
        "dynamodb",
        clock,
        clients[0],
        inspector_client,
        clients[1],
        inspector_s3,
        multipart_threshold=6 * MB,
        part_size=5 * MB,
    )


def test_failed_upload_leaves_nothing(s3h: Harness, clients: tuple[Any, Any]) -> None:
    store = s3h.store
    sid = store.create_session("alice").id
    before = s3h.snapshot()
    s3_error(clients[1], "PutObject")
    with pytest.raises(StoreUnavailable):
        store.put_artifact(sid, "a.txt", b"data")
    with pytest.raises(StoreUnavailable):
        store.append_messages(sid, [{"role": "tool", "content": os.urandom(MB).hex()}])
    with pytest.raises(StoreUnavailable):
        store.save_state(sid, {"big": os.urandom(MB).hex()})
    with pytest.raises(StoreUnavailable):
        store.put_memory("alice", ("reports",), "big", {"body": os.urandom(MB // 2).hex()})
    assert s3h.snapshot() == before, "no intent, no object, no item"
    assert store.get_memory("alice", ("reports",), "big") is None


def test_failed_multipart_upload_is_aborted(s3h: Harness, clients: tuple[Any, Any]) -> None:
    store = s3h.store
    sid = store.create_session("alice").id
    before = s3h.snapshot()
    parts = s3_error(clients[1], "UploadPart", when=lambda r: "partNumber=2" in r.url)
    with pytest.raises(StoreUnavailable):
        store.put_artifact(sid, "big.bin", os.urandom(12 * MB))
    assert parts, "the second part failed"
    assert s3h.snapshot() == before
    assert s3h.s3.list_multipart_uploads(Bucket=s3h.tables.bucket).get("Uploads", []) == []


def test_failed_reads_are_store_errors(s3h: Harness, clients: tuple[Any, Any]) -> None:
    store = s3h.store
    sid = store.create_session("alice").id
    store.put_artifact(sid, "a.txt", b"data")
    rec = store.append_messages(sid, [{"role": "tool", "content": os.urandom(MB).hex()}])[0]
    store.append_trace_events(sid, "r", [{"e": 1}])
    store.put_memory("alice", ("reports",), "big", {"text": "report", "body": os.urandom(MB // 2).hex()})
    s3_error(clients[1], "GetObject")
    for call in (
        lambda: store.get_memory("alice", ("reports",), "big"),
        lambda: store.search_memories("alice", ("reports",)),
        lambda: store.get_artifact(sid, "a.txt"),
        lambda: store.open_artifact(sid, "a.txt"),
        lambda: store.get_message(sid, rec.id),
        lambda: store.list_messages(sid),
        lambda: store.load_trace_events(sid),
    ):
        with pytest.raises(StoreUnavailable):
            call()


def test_lost_commit_response_makes_one_version(s3h: Harness, clients: tuple[Any, Any]) -> None:
    """The commit reaches DynamoDB but its response is lost; the resent commit must not make a second
    version or fail: the store recognises its own write."""
    store = s3h.store
    sid = store.create_session("alice").id
    store.put_artifact(sid, "a.txt", b"v1")
    hits: list[int] = []

    def lose(request: Any, **_: Any) -> AWSResponse | None:
        if hits or b"ARTV#" not in (request.body or b""):
            return None
        hits.append(1)  # moto applies the request; only the response is replaced
        body = json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError", "message": "x"})
        headers: Any = {"Content-Type": "application/x-amz-json-1.0"}
        return AWSResponse(request.url, 500, headers, _Raw(body.encode()))

    clients[0].meta.events.register("before-send.dynamodb.TransactWriteItems", lose)
    v2 = store.put_artifact(sid, "a.txt", b"v2")
    assert hits and v2.version == 2
    assert [v.version for v in store.list_artifact_versions(sid, "a.txt")] == [1, 2]
    assert store.get_artifact(sid, "a.txt") == b"v2"
    sessions, _, objects = s3h.snapshot()
    assert not any(i["pk"]["S"].startswith("U#") for i in sessions) and len(objects) == 2


def test_health_check_names_a_missing_bucket(s3h: Harness, clients: tuple[Any, Any]) -> None:
    s3h.store.health_check()
    assert s3h.tables is not None
    from store import SessionStore

    broken = SessionStore(
        s3h.tables.sessions, s3h.tables.messages, bucket="no-such-bucket", client=clients[0], s3_client=clients[1]
    )
    with pytest.raises(StoreUnavailable, match="bucket 'no-such-bucket'") as info:
        broken.health_check()
    assert "table" not in str(info.value)
    with pytest.raises(StoreUnavailable):
        broken.put_artifact(broken.create_session("alice").id, "a.txt", b"x")


def test_store_without_bucket_refuses_artifacts(clients: tuple[Any, Any], inspector_client: Any) -> None:
    from infra.local.aws import create_tables
    from store import SessionStore, StoreError

    tables = create_tables(clients[0], prefix="no-bucket-artifacts")
    store = SessionStore(tables.sessions, tables.messages, client=clients[0])
    sid = store.create_session("alice").id
    with pytest.raises(StoreError, match="no bucket"):
        store.put_artifact(sid, "a.txt", b"x")
    with pytest.raises(StoreError, match="no bucket"):
        store.append_trace_events(sid, "r", [{"e": 1}])
    with pytest.raises(StoreError, match="no bucket"):
        store.presign_artifact(sid, "a.txt", method="PUT")
    items = inspector_client.scan(TableName=tables.sessions)["Items"]
    assert sorted(i["sk"]["S"] for i in items) == ["HEAD", f"S#{sid}"], "nothing was written"


def test_from_env_reads_the_bucket(monkeypatch: pytest.MonkeyPatch, s3h: Harness) -> None:
    from store import SessionStore

    assert s3h.tables is not None
    monkeypatch.setenv("SESSIONS_TABLE", s3h.tables.sessions)
    monkeypatch.setenv("MESSAGES_TABLE", s3h.tables.messages)
    monkeypatch.setenv("ARTIFACTS_BUCKET", str(s3h.tables.bucket))
    store = SessionStore.from_env()
    assert store.bucket == s3h.tables.bucket
    sid = store.create_session("alice").id
    assert store.put_artifact(sid, "a.txt", b"x").version == 1
