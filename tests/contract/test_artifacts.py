"""Contract tests for versioned artifacts (memory, and DynamoDB + S3 on moto)."""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterator
from typing import Any

import pytest

from store import ArtifactNotFound, InvalidInput, SessionNotFound, SessionStore
from tests.conftest import Harness

MB = 1024 * 1024


def chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_small_artifact_round_trip(harness: Harness, session_id: str) -> None:
    store = harness.store
    before = store.get_session(session_id).updated_at
    v1 = store.put_artifact(
        session_id, "reports/summary.md", b"# hello", content_type="text/markdown", metadata={"k": "v"}
    )
    assert (v1.version, v1.size, v1.sha256) == (1, 7, hashlib.sha256(b"# hello").hexdigest())
    assert (v1.content_type, v1.metadata, v1.session_id, v1.name) == (
        "text/markdown",
        {"k": "v"},
        session_id,
        "reports/summary.md",
    )
    assert store.get_session(session_id).updated_at > before
    v2 = store.put_artifact(session_id, "reports/summary.md", b"# hello, again")
    assert v2.version == 2 and v2.content_type == "application/octet-stream"
    assert store.get_artifact(session_id, "reports/summary.md") == b"# hello, again"
    assert store.get_artifact(session_id, "reports/summary.md", version=1) == b"# hello"
    assert store.get_artifact(session_id, "reports/summary.md", version=3) is None
    assert store.get_artifact(session_id, "missing.txt") is None
    assert [a.version for a in store.list_artifact_versions(session_id, "reports/summary.md")] == [1, 2]
    assert store.list_artifact_versions(session_id, "missing.txt") == []
    with store.open_artifact(session_id, "reports/summary.md", version=1) as reader:
        assert reader.version == v1
        assert reader.read(3) + reader.read() == b"# hello"
        assert reader.read() == b""
    assert store.open_artifact(session_id, "missing.txt") is None


def test_empty_artifact(store: SessionStore, session_id: str) -> None:
    v = store.put_artifact(session_id, "empty", b"")
    assert v.size == 0 and store.get_artifact(session_id, "empty") == b""


def test_list_artifacts_latest_of_each_name(store: SessionStore, session_id: str) -> None:
    store.put_artifact(session_id, "b.txt", b"1")
    store.put_artifact(session_id, "a.txt", b"1")
    store.put_artifact(session_id, "b.txt", b"22")
    listed = store.list_artifacts(session_id)
    assert [(a.name, a.version, a.size) for a in listed] == [("a.txt", 1, 1), ("b.txt", 2, 2)]


def test_delete_artifact_removes_every_version_and_numbers_continue(harness: Harness, session_id: str) -> None:
    store = harness.store
    for i in range(3):
        store.put_artifact(session_id, "plot.png", bytes([i]) * 10)
    store.put_artifact(session_id, "keep.txt", b"keep")
    store.delete_artifact(session_id, "plot.png")
    store.delete_artifact(session_id, "plot.png")  # idempotent
    store.delete_artifact(session_id, "never-existed")
    assert store.get_artifact(session_id, "plot.png") is None
    assert store.get_artifact(session_id, "plot.png", version=2) is None
    assert store.list_artifact_versions(session_id, "plot.png") == []
    assert [a.name for a in store.list_artifacts(session_id)] == ["keep.txt"]
    again = store.put_artifact(session_id, "plot.png", b"new")
    assert again.version == 4  # numbers are never reused
    assert [a.version for a in store.list_artifact_versions(session_id, "plot.png")] == [4]
    assert len(harness.leftovers("artifact")) == 2  # only the live versions remain stored


@pytest.mark.slow
def test_large_artifact_streams_in_parts(harness: Harness, session_id: str) -> None:
    store = harness.store
    data = os.urandom(50 * MB)
    v = store.put_artifact(session_id, "data/big.bin", io.BytesIO(data), content_type="application/x-binary")
    assert (v.size, v.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    with store.open_artifact(session_id, "data/big.bin") as reader:
        digest = hashlib.sha256()
        for chunk in reader:
            digest.update(chunk)
    assert digest.hexdigest() == v.sha256
    assert store.get_artifact(session_id, "data/big.bin") == data
    # an iterator of chunks of uneven sizes is accepted too
    v2 = store.put_artifact(session_id, "data/big.bin", chunks(data[: 20 * MB], 3 * MB + 7))
    assert (v2.version, v2.sha256) == (2, hashlib.sha256(data[: 20 * MB]).hexdigest())


BAD_NAMES = [
    "",
    "/abs",
    "a//b",
    "a/../b",
    "..",
    ".",
    "a/./b",
    "trailing/",
    "back\\slash",
    "ctl\x00x",
    "new\nline",
    "rtl\u202eoverride",
    "x" * 513,
    "é" * 257,  # 514 bytes of UTF-8
    7,
    None,
]


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_bad_artifact_names_write_nothing(harness: Harness, session_id: str, name: object) -> None:
    store = harness.store
    before = harness.snapshot()
    with pytest.raises(InvalidInput):
        store.put_artifact(session_id, name, b"data")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.get_artifact(session_id, name)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.presign_artifact(session_id, name, method="PUT")  # type: ignore[arg-type]
    assert harness.snapshot() == before


def test_good_unusual_names(store: SessionStore, session_id: str) -> None:
    for name in ("dots.in.name", "a/b/c.txt", "…unicode ✓/名前", "x" * 512, "..hidden", "a/..b"):
        store.put_artifact(session_id, name, name.encode())
        assert store.get_artifact(session_id, name) == name.encode()


def test_bad_artifact_arguments(harness: Harness, session_id: str) -> None:
    store = harness.store
    before = harness.snapshot()
    for call in (
        lambda: store.put_artifact(session_id, "a", "text, not bytes"),
        lambda: store.put_artifact(session_id, "a", 42),
        lambda: store.put_artifact(session_id, "a", b"x", content_type="not a mime type"),
        lambda: store.put_artifact(session_id, "a", b"x", metadata={"k": 1}),  # type: ignore[dict-item]
        lambda: store.put_artifact(session_id, "a", b"x", metadata={"k": "v" * 5000}),
        lambda: store.get_artifact(session_id, "a", version=0),
        lambda: store.presign_artifact(session_id, "a", expires_in=3601),
        lambda: store.presign_artifact(session_id, "a", expires_in=0),
        lambda: store.presign_artifact(session_id, "a", method="DELETE"),
        lambda: store.presign_artifact(session_id, "a", method="PUT", version=2),
        lambda: store.confirm_artifact_upload(session_id, "a", "not-an-upload"),
        lambda: store.put_artifact(session_id, "a", iter(["str chunk"])),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert harness.snapshot() == before


def test_artifacts_need_a_live_session_of_the_owner(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.put_artifact(session_id, "a.txt", b"alice's")
    before = harness.snapshot()
    for call in (
        lambda: store.put_artifact(session_id, "a.txt", b"x", owner="mallory"),
        lambda: store.get_artifact(session_id, "a.txt", owner="mallory"),
        lambda: store.list_artifacts(session_id, owner="mallory"),
        lambda: store.list_artifact_versions(session_id, "a.txt", owner="mallory"),
        lambda: store.delete_artifact(session_id, "a.txt", owner="mallory"),
        lambda: store.presign_artifact(session_id, "a.txt", owner="mallory"),
        lambda: store.put_artifact("no-such-session", "a.txt", b"x"),
        lambda: store.open_artifact("no-such-session", "a.txt"),
    ):
        with pytest.raises(SessionNotFound):
            call()
    assert harness.snapshot() == before
    assert store.get_artifact(session_id, "a.txt", owner="alice") == b"alice's"
    with pytest.raises(ArtifactNotFound):
        store.presign_artifact(session_id, "missing.txt")


def test_presign_get_is_a_signed_url(harness: Harness, session_id: str) -> None:
    store = harness.store
    store.put_artifact(session_id, "a.txt", b"x")
    url = store.presign_artifact(session_id, "a.txt", expires_in=60)
    assert isinstance(url, str) and url.startswith(("https://", "http://", "memory://"))


def test_presigned_upload_becomes_a_version_only_when_confirmed(harness: Harness, session_id: str) -> None:
    """The upload itself goes over HTTP (tests/api/test_presigned_http.py); here it is put in place directly."""
    store = harness.store
    up = store.presign_artifact_upload(session_id, "upload.csv", content_type="text/csv", metadata={"src": "ui"})
    with pytest.raises(InvalidInput):
        store.confirm_artifact_upload(session_id, "upload.csv", up.upload_id)  # nothing uploaded yet
    data = b"a,b\n1,2\n"
    put_through_url(harness, up.url, data)
    assert store.list_artifacts(session_id) == []  # not a version until confirmed
    with pytest.raises(InvalidInput):
        store.confirm_artifact_upload(session_id, "other-name.csv", up.url)
    v = store.confirm_artifact_upload(session_id, "upload.csv", up.url)
    assert (v.version, v.size, v.sha256, v.content_type, v.metadata) == (
        1,
        len(data),
        hashlib.sha256(data).hexdigest(),
        "text/csv",
        {"src": "ui"},
    )
    assert store.confirm_artifact_upload(session_id, "upload.csv", up.upload_id) == v  # confirming twice
    assert store.get_artifact(session_id, "upload.csv") == data


def put_through_url(harness: Harness, url: str, data: bytes, headers: dict[str, str] | None = None) -> Any:
    """What a client's HTTP PUT to a presigned URL does, without HTTP (moto in-process): the headers a
    PresignedUpload lists (If-None-Match, Content-Length, the SHA-256 checksum) are sent as S3 would get
    them. Returns the S3 response (None for the memory backend, whose refusals are InvalidInput)."""
    from urllib.parse import unquote, urlsplit

    if harness.memory is not None:
        harness.memory.receive_upload(url, data)
        return None
    assert harness.tables is not None and harness.tables.bucket is not None
    path = unquote(urlsplit(url).path).lstrip("/")
    bucket, key = path.split("/", 1) if path.startswith(harness.tables.bucket + "/") else (harness.tables.bucket, path)
    sent = {k.lower(): v for k, v in (headers or {}).items()}
    params: dict[str, Any] = {}
    if "if-none-match" in sent:
        params["IfNoneMatch"] = sent["if-none-match"]
    if "x-amz-checksum-sha256" in sent:
        params["ChecksumSHA256"] = sent["x-amz-checksum-sha256"]
    if "content-type" in sent:
        params["ContentType"] = sent["content-type"]
    return harness.s3.put_object(Bucket=bucket, Key=key, Body=data, **params)


@pytest.mark.settings(multipart_threshold=5 * MB, part_size=5 * MB)
@pytest.mark.parametrize("size", [5 * MB, 5 * MB + 1, 10 * MB, 10 * MB + 3])
def test_part_boundaries(harness: Harness, session_id: str, size: int) -> None:
    data = os.urandom(size)
    for source in (data, io.BytesIO(data), chunks(data, MB + 1)):
        v = harness.store.put_artifact(session_id, "edge.bin", source)
        assert (v.size, v.sha256) == (size, hashlib.sha256(data).hexdigest())
        assert harness.store.get_artifact(session_id, "edge.bin") == data
