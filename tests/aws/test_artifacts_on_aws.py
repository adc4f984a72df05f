"""The DynamoDB backend's own side of test_artifacts.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

import os

import pytest

from tests.conftest import Harness


def test_reader_detects_corruption(dyn: Harness) -> None:
    from store import StoreError

    store = dyn.store
    sid = store.create_session("alice").id
    store.put_artifact(sid, "x.bin", b"original")
    (key,) = dyn.objects()
    dyn.s3.put_object(Bucket=dyn.tables.bucket, Key=key, Body=b"tampered")
    with store.open_artifact(sid, "x.bin") as reader, pytest.raises(StoreError, match="sha256"):
        reader.read()


def test_artifact_requests(dyn: Harness) -> None:
    """Reads come from DynamoDB's index (no S3 LIST); the latest version is one BatchGetItem + one GET."""
    store = dyn.store
    sid = store.create_session("alice").id
    dyn.requests.clear()
    store.put_artifact(sid, "a.txt", b"1")
    assert dyn.requests.names == ["TransactWriteItems", "PutObject", "TransactWriteItems"]
    dyn.requests.clear()
    store.put_artifact(sid, "a.txt", b"2")  # the first commit guesses a new name and learns the latest
    assert dyn.requests.names == ["TransactWriteItems", "PutObject", "TransactWriteItems", "TransactWriteItems"]
    dyn.requests.clear()
    assert store.get_artifact(sid, "a.txt") == b"2"
    assert dyn.requests.names == ["BatchGetItem", "GetObject"]
    dyn.requests.clear()
    store.list_artifacts(sid)
    store.list_artifact_versions(sid, "a.txt")
    assert dyn.requests.names == ["GetItem", "Query", "BatchGetItem", "Query"]


@pytest.mark.slow
def test_a_large_artifact_is_sent_in_8_mb_parts(dyn: Harness) -> None:
    import io

    sid = dyn.store.create_session("alice").id
    data = os.urandom(50 * 1024 * 1024)
    assert dyn.requests is not None
    dyn.requests.clear()
    dyn.store.put_artifact(sid, "data/big.bin", io.BytesIO(data))
    assert dyn.requests.count("UploadPart") == 7 and dyn.requests.count("CompleteMultipartUpload") == 1
    assert dyn.requests.count("PutObject") == 0
