"""Presigned URLs used over real HTTP, against moto's server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import urllib.error
import urllib.request
from typing import Any

import pytest

from infra.local.aws import create_tables, local_client
from store import SessionStore
from store.session_store import s3_config


@pytest.fixture
def server_store(moto_endpoint: str, request: pytest.FixtureRequest) -> SessionStore:
    dynamodb = local_client(endpoint_url=moto_endpoint)
    s3 = local_client("s3", endpoint_url=moto_endpoint, config=s3_config(path_style=True))
    tables = create_tables(dynamodb, prefix=f"presign-{request.node.name[5:30]}".replace("_", "-"), s3=s3)
    return SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)


def http(method: str, url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def download(url: str) -> tuple[int, bytes, dict[str, str]]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.status, resp.read(), {k.lower(): v for k, v in resp.headers.items()}


def test_presigned_get_downloads_the_version(server_store: SessionStore) -> None:
    sid = server_store.create_session("alice").id
    server_store.put_artifact(sid, "notes.txt", b"version one", content_type="text/plain")
    server_store.put_artifact(sid, "notes.txt", b"version two", content_type="text/plain")
    assert http("GET", server_store.presign_artifact(sid, "notes.txt", expires_in=60)) == (200, b"version two")
    url = server_store.presign_artifact(sid, "notes.txt", version=1, expires_in=60)
    assert url.startswith("http://127.0.0.1:") and "X-Amz-Signature=" in url
    assert http("GET", url) == (200, b"version one")


def test_presigned_put_then_confirm(server_store: SessionStore) -> None:
    sid = server_store.create_session("alice").id
    url = server_store.presign_artifact(sid, "upload.bin", method="PUT", content_type="application/pdf", expires_in=300)
    data = b"%PDF-1.7 uploaded by a browser"
    status, _ = http("PUT", url, data, {"Content-Type": "application/pdf", "If-None-Match": "*"})
    assert status == 200
    assert server_store.list_artifacts(sid) == []  # not a version until confirmed
    v = server_store.confirm_artifact_upload(sid, "upload.bin", url)
    assert (v.version, v.size, v.sha256, v.content_type) == (
        1,
        len(data),
        hashlib.sha256(data).hexdigest(),
        "application/pdf",
    )
    assert server_store.get_artifact(sid, "upload.bin") == data


def test_a_presigned_url_cannot_change_a_version(server_store: SessionStore) -> None:
    """Over real HTTP: a second PUT with the URL's headers is refused (412), before confirm and after it (the
    URL writes once); a PUT without them (S3 refuses its signature, moto does not) lands at the upload's own
    key, and the version (downloaded through its presigned GET) is what was confirmed, as an attachment."""
    sid = server_store.create_session("alice").id
    up = server_store.presign_artifact_upload(sid, "page.html", content_type="text/html", expires_in=300)
    assert http("PUT", up.url, b"<p>mine</p>", up.headers)[0] == 200
    assert http("PUT", up.url, b"<script>theirs</script>", up.headers)[0] == 412
    server_store.confirm_artifact_upload(sid, "page.html", up.url)
    assert http("PUT", up.url, b"<script>after confirm</script>", up.headers)[0] == 412
    assert http("PUT", up.url, b"<script>no condition</script>", {"Content-Type": "text/html"})[0] == 200
    status, body, headers = download(server_store.presign_artifact(sid, "page.html", expires_in=60))
    assert (status, body) == (200, b"<p>mine</p>")
    assert headers["content-disposition"].startswith('attachment; filename="page.html"')
