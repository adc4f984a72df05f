"""The DynamoDB backend's own side of test_upload_integrity.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from store import PayloadTooLarge
from store.aws import object_keys
from tests.api.test_cascade import handle, remove_like_ttl, ttl_removal
from tests.conftest import Harness
from tests.contract.test_upload_integrity import MB, put


def test_the_signed_headers_are_what_the_client_must_send(dyn: Harness) -> None:
    """S3 refuses a presigned request that lacks a signed header: these are the promises S3 enforces."""
    sid = dyn.store.create_session("alice").id
    up = dyn.store.presign_artifact_upload(sid, "a.bin", size=3, sha256=hashlib.sha256(b"abc").hexdigest())
    signed = parse_qs(urlsplit(up.url).query)["X-Amz-SignedHeaders"][0].split(";")
    assert {"content-type", "if-none-match", "content-length", "x-amz-checksum-sha256", "host"} <= set(signed)
    assert {h.lower() for h in up.headers} <= set(signed)


def test_with_s3s_checksum_confirm_reads_nothing(dyn: Harness, s3_client: Any) -> None:
    """Where S3 keeps the declared checksum (moto does not), confirm takes the SHA-256 from HeadObject."""
    sid = dyn.store.create_session("alice").id
    data = b"checked by S3 on arrival"
    up = dyn.store.presign_artifact_upload(sid, "a.bin", sha256=hashlib.sha256(data).hexdigest())
    put(dyn, up.url, data, up.headers)

    def with_checksum(parsed: dict[str, Any], **_: Any) -> None:
        parsed.setdefault("ChecksumSHA256", up.headers["x-amz-checksum-sha256"])

    s3_client.meta.events.register("after-call.s3.HeadObject", with_checksum)
    try:
        dyn.requests.clear()
        v = dyn.store.confirm_artifact_upload(sid, "a.bin", up.upload_id)
    finally:
        s3_client.meta.events.unregister("after-call.s3.HeadObject", with_checksum)
    assert v.sha256 == hashlib.sha256(data).hexdigest()
    assert dyn.requests.count("GetObject") == 0 and dyn.requests.count("CopyObject") == 1


@pytest.mark.settings(copy_part_bytes=5 * MB)
def test_a_large_upload_is_copied_in_parts(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    data = bytes(range(256)) * (11 * MB // 256) + b"tail"
    up = dyn.store.presign_artifact_upload(sid, "big.bin", max_size=20 * MB)
    put(dyn, up.url, data, up.headers)
    dyn.requests.clear()
    v = dyn.store.confirm_artifact_upload(sid, "big.bin", up.upload_id)
    assert dyn.requests.count("UploadPartCopy") == 3 and dyn.requests.count("CopyObject") == 0
    assert (v.size, v.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert dyn.store.get_artifact(sid, "big.bin") == data


def test_a_late_put_after_confirm_is_reclaimed_with_the_intent(dyn: Harness, inspector_client: Any) -> None:
    """The URL wrote once: a PUT with its signed headers after confirm is refused (412: the upload's key holds
    an empty object). One without them (S3 would refuse its signature; moto takes it) lands there, and when
    the intent expires whatever is at the upload's key goes; the version stays."""
    from functions import runtime

    store = dyn.store
    sid = store.create_session("alice").id
    up = store.presign_artifact_upload(sid, "a.txt")
    put(dyn, up.url, b"kept", up.headers)
    store.confirm_artifact_upload(sid, "a.txt", up.upload_id)
    prefix = object_keys.session_prefix("alice", sid)
    assert not put(dyn, up.url, b"late", up.headers)  # the URL has written once
    assert put(dyn, up.url, b"late, unsigned")
    assert object_keys.incoming_key(prefix, up.upload_id) in dyn.objects()
    intent = remove_like_ttl(dyn, inspector_client, f"U#{up.upload_id}", "UPLOAD")
    runtime.use_store(store)
    try:
        assert handle([ttl_removal(intent, 1)]) == {"batchItemFailures": []}
    finally:
        runtime.use_store(None)
    assert dyn.objects(prefix) == [object_keys.artifact_key(prefix, "a.txt", up.upload_id)]
    assert store.get_artifact(sid, "a.txt") == b"kept"


@pytest.mark.settings(default_upload_bytes=1000)
def test_an_oversize_upload_is_refused_from_its_size_alone(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    up = dyn.store.presign_artifact_upload(sid, "small.txt", content_type="text/plain")
    assert put(dyn, up.url, b"x" * 300_000, up.headers)
    assert dyn.requests is not None
    dyn.requests.clear()
    with pytest.raises(PayloadTooLarge):
        dyn.store.confirm_artifact_upload(sid, "small.txt", up.upload_id)
    assert dyn.requests.count("GetObject") == 0 and dyn.requests.count("HeadObject") == 1
    assert dyn.objects() == []
