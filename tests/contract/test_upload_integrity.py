"""Presigned uploads keep their promises on every backend: a committed version is immutable whatever is
later sent to its URL, an upload is bounded in size (refused at confirm from its metadata, not by reading
it), pinned by a declared SHA-256, and belongs to its owner and to the life of the session it was issued
in. The uploads themselves are put in place without HTTP (tests/api/test_presigned_http.py sends real PUTs)."""

from __future__ import annotations

import hashlib

import pytest
from botocore.exceptions import ClientError

from store import InvalidInput, PayloadTooLarge, SessionNotFound
from tests.conftest import Harness
from tests.contract.test_artifacts import put_through_url

MB = 1024 * 1024


def put(harness: Harness, url: str, data: bytes, headers: dict[str, str] | None = None) -> bool:
    """PUT `data` to the URL as a client would; False when the store (S3, or the memory backend's stand-in)
    refused it."""
    try:
        put_through_url(harness, url, data, headers)
    except InvalidInput:
        return False
    except ClientError as err:
        assert err.response["Error"]["Code"] in ("PreconditionFailed", "BadDigest"), err.response
        return False
    return True


def test_a_url_writes_once(harness: Harness, session_id: str) -> None:
    """The signed If-None-Match makes a second PUT with the URL's headers fail while the bytes are there."""
    store = harness.store
    up = store.presign_artifact_upload(session_id, "notes.txt", content_type="text/plain")
    assert up.headers == {"Content-Type": "text/plain", "If-None-Match": "*"}
    assert put(harness, up.url, b"first", up.headers)
    assert not put(harness, up.url, b"second", up.headers)
    v = store.confirm_artifact_upload(session_id, "notes.txt", up.upload_id)
    assert (v.size, v.sha256) == (5, hashlib.sha256(b"first").hexdigest())
    before = harness.leftovers()
    assert not put(harness, up.url, b"after its upload was confirmed", up.headers)  # once, confirmed or not
    assert harness.leftovers() == before


def test_a_committed_version_is_immutable(harness: Harness, session_id: str) -> None:
    """After confirm, nothing sent to the URL changes the version: not a PUT with the URL's headers, not
    one without them (moto, unlike S3, does not check signatures and takes it), not a second confirm."""
    store = harness.store
    up = store.presign_artifact_upload(session_id, "report.html", content_type="text/html")
    original = b"<p>the report</p>"
    assert put(harness, up.url, original, up.headers)
    v = store.confirm_artifact_upload(session_id, "report.html", up.url)
    put(harness, up.url, b"<script>replaced</script>", up.headers)
    put(harness, up.url, b"<script>replaced without the condition</script>")
    assert store.confirm_artifact_upload(session_id, "report.html", up.upload_id) == v
    assert store.get_artifact(session_id, "report.html") == original
    with store.open_artifact(session_id, "report.html") as reader:
        assert reader.read() == original  # the reader's SHA-256 check passes
    assert store.list_artifact_versions(session_id, "report.html") == [v]
    assert len(harness.leftovers("artifact")) == 1  # one version (a late PUT's bytes go with the intent)


@pytest.mark.settings(default_upload_bytes=1000)
def test_an_oversize_upload_is_refused_without_reading_it(harness: Harness, session_id: str) -> None:
    """Declared as a small file, sent large: confirm refuses it from its size alone, discards it, and the
    URL may then upload the right bytes."""
    store = harness.store
    up = store.presign_artifact_upload(session_id, "small.txt", content_type="text/plain")
    assert up.max_size == 1000
    assert put(harness, up.url, b"x" * 300_000, up.headers)
    with pytest.raises(PayloadTooLarge):
        store.confirm_artifact_upload(session_id, "small.txt", up.upload_id)
    assert store.list_artifacts(session_id) == [] and harness.leftovers("artifact") == []
    assert put(harness, up.url, b"fits", up.headers)
    assert store.confirm_artifact_upload(session_id, "small.txt", up.upload_id).size == 4


def test_declared_sizes_and_limits(harness: Harness, session_id: str) -> None:
    store = harness.store
    up = store.presign_artifact_upload(session_id, "exact.bin", size=10)
    assert (up.size, up.max_size, up.headers["Content-Length"]) == (10, 10, "10")
    if put(harness, up.url, b"too short", up.headers):  # moto takes it; S3 refuses the signed length
        with pytest.raises(InvalidInput, match="not the 10 declared"):
            store.confirm_artifact_upload(session_id, "exact.bin", up.upload_id)
    assert put(harness, up.url, b"0123456789", up.headers)
    assert store.confirm_artifact_upload(session_id, "exact.bin", up.upload_id).size == 10
    assert store.presign_artifact_upload(session_id, "big.bin", max_size=5 * MB).max_size == 5 * MB
    cap = store.settings.max_upload_bytes
    for bad in ({"size": cap + 1}, {"max_size": cap + 1}, {"size": -1}, {"size": 5, "max_size": 4}, {"size": True}):
        with pytest.raises(InvalidInput):
            store.presign_artifact_upload(session_id, "x.bin", **bad)
    for digest in ("abc", "g" * 64, 7):
        with pytest.raises(InvalidInput):
            store.presign_artifact_upload(session_id, "x.bin", sha256=digest)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.presign_artifact(session_id, "exact.bin", size=10)  # a GET takes no upload limits


def test_a_declared_sha256_pins_the_bytes(harness: Harness, session_id: str) -> None:
    store = harness.store
    data = b"the bytes the client hashed"
    digest = hashlib.sha256(data).hexdigest()
    up = store.presign_artifact_upload(session_id, "pinned.bin", sha256=digest.upper())
    assert up.sha256 == digest and "x-amz-checksum-sha256" in up.headers
    if put(harness, up.url, b"other bytes entirely", up.headers):  # moto does not verify checksums; S3 does
        with pytest.raises(InvalidInput, match="sha256"):
            store.confirm_artifact_upload(session_id, "pinned.bin", up.upload_id)
    assert put(harness, up.url, data, up.headers)
    assert store.confirm_artifact_upload(session_id, "pinned.bin", up.upload_id).sha256 == digest


def test_an_upload_belongs_to_its_owner_and_its_session_life(harness: Harness) -> None:
    """Owner A presigns, deletes the session, and PUTs late; owner B takes the id and confirms A's upload:
    refused, nothing of A's becomes B's, and A's bytes are discarded. So too when A itself re-creates it."""
    store = harness.store
    sid = store.create_session("alice").id
    up = store.presign_artifact_upload(sid, "private.txt", owner="alice")
    store.delete_session(sid, owner="alice")
    put(harness, up.url, b"alice's private bytes", up.headers)
    store.create_session("bob", session_id=sid)
    with pytest.raises(SessionNotFound):
        store.confirm_artifact_upload(sid, "private.txt", up.upload_id, owner="alice")
    with pytest.raises(InvalidInput, match=r"earlier session|does not belong"):  # ids per owner: bob's own
        store.confirm_artifact_upload(sid, "private.txt", up.upload_id, owner="bob")
    assert store.list_artifacts(sid, owner="bob") == []
    with pytest.raises(InvalidInput):  # discarded: not even a retry finds it
        store.confirm_artifact_upload(sid, "private.txt", up.upload_id, owner="bob")
    assert harness.leftovers("artifact") == []
    # one id space: bob's session is alice's id reused, so her upload is discarded at once; one per owner:
    # bob's is another session, and her bytes wait for her upload's expiry (the intent's TTL) to reclaim them
    assert len(harness.leftovers("upload")) == (1 if harness.ids_per_owner else 0)
    store.delete_session(sid)
    store.create_session("alice", session_id=sid)
    again = store.presign_artifact_upload(sid, "private.txt", owner="alice")
    store.delete_session(sid)
    store.create_session("alice", session_id=sid)
    put(harness, again.url, b"late", again.headers)
    with pytest.raises(InvalidInput, match="earlier session"):
        store.confirm_artifact_upload(sid, "private.txt", again.upload_id, owner="alice")
