"""`HttpBackend`'s own regressions (the contract suite runs it whole: tests/contract, backend "http"): what a
presigned PUT is, that an artifact is streamed and never held whole, what 401/403 mean, what a broken
connection does, and what the local stack's server lets wait."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from functions.runtime import use_store
from infra.local import devtoken
from infra.local.aws import create_tables
from infra.local.gateway import InProcessApi
from infra.local.stack import ApiServer
from store import AccessDenied, InvalidInput, SessionStore, StoreUnavailable
from store.backends.http import HttpBackend
from store.backends.http_transport import Answer, BufferedAnswer, Outgoing
from store.backends.scoped import ScopedBackend

SECRET = b"http-backend-tests"
MB = 1024 * 1024


class Recording:
    """A transport in front of another: what was sent (method, URL, body type, headers), and a number of
    connection resets to raise before the first request of each kind gets through."""

    def __init__(self, inner: Any, resets: int = 0) -> None:
        self.inner, self.resets = inner, resets
        self.sent: list[tuple[str, str, type, dict[str, str]]] = []

    def __call__(self, request: Outgoing, timeout: float) -> Answer:
        self.sent.append((request.method, request.url, type(request.body), dict(request.headers)))
        if self.resets:
            self.resets -= 1
            raise ConnectionResetError("connection reset by peer")
        answer: Answer = self.inner(request, timeout)
        return answer


@pytest.fixture
def server(dynamodb_client: Any, s3_client: Any) -> Iterator[SessionStore]:
    tables = create_tables(dynamodb_client, prefix=f"hb{os.urandom(3).hex()}", s3=s3_client)
    store = SessionStore(
        tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb_client, s3_client=s3_client
    )
    yield store
    use_store(None)


def client(server: SessionStore, owner: str = "alice", resets: int = 0) -> tuple[SessionStore, Recording]:
    transport = Recording(InProcessApi(SECRET, before=lambda: use_store(server)), resets)
    backend = HttpBackend("http://api.local", devtoken.issue(SECRET, owner), transport=transport)
    return SessionStore(backend=backend), transport


def test_a_presigned_put_is_an_upload_url_for_a_new_name(server: SessionStore) -> None:
    store, _ = client(server)
    sid = store.create_session("alice").id
    url = store.presign_artifact(sid, "new.txt", method="PUT", expires_in=120, content_type="text/plain")
    query = parse_qs(urlsplit(url).query)
    assert query["X-Amz-Expires"] == ["120"] and "response-content-disposition" not in query
    assert "/uploads/" in urlsplit(url).path
    store.put_artifact(sid, "old.txt", b"x")
    got = parse_qs(urlsplit(store.presign_artifact(sid, "old.txt", expires_in=60)).query)
    assert got["X-Amz-Expires"] == ["60"] and "response-content-disposition" in got


def test_put_artifact_streams_what_it_cannot_send_inline(server: SessionStore) -> None:
    store, sent = client(server)
    sid = store.create_session("alice").id
    data = os.urandom(6 * MB)
    version = store.put_artifact(sid, "big.bin", io.BytesIO(data))
    (upload,) = [s for s in sent.sent if s[0] == "PUT" and "/uploads/" in s[1]]
    assert upload[2] is not bytes and upload[3]["Content-Length"] == str(len(data))  # a file, read as sent
    assert version.size == len(data) and store.get_artifact(sid, "big.bin") == data
    with store.open_artifact(sid, "big.bin") as reader:
        assert reader.read(MB) == data[:MB]


def test_401_and_403_are_access_denied(server: SessionStore) -> None:
    forged = HttpBackend("http://api.local", devtoken.issue(b"not the secret", "alice"), transport=InProcessApi(SECRET))
    with pytest.raises(AccessDenied):
        SessionStore(backend=forged).list_sessions("alice")

    def forbidden(request: Outgoing, timeout: float) -> Answer:
        return BufferedAnswer(403, {"Content-Type": "application/json"}, b'{"code": "insufficient_scope"}')

    with pytest.raises(AccessDenied):
        SessionStore(backend=HttpBackend("http://api.local", "t", transport=forbidden)).list_sessions("alice")


def test_a_reset_connection_is_tried_again_when_repeating_changes_nothing(server: SessionStore) -> None:
    store, sent = client(server, resets=2)
    assert store.list_sessions("alice").items == []  # GET: reset twice, answered the third time
    assert len(sent.sent) == 3
    store, sent = client(server, resets=1)
    with pytest.raises(StoreUnavailable, match="did not answer"):
        store.create_session("alice", session_id="once")  # POST without an idempotency key: not repeated
    assert len(sent.sent) == 1
    store, _ = client(server)
    assert store.get_session("once") is None  # nothing was written


def nested(depth: int) -> dict[str, Any]:
    deep: Any = "bottom"
    for _ in range(depth):
        deep = {"d": deep}
    return {"content": "deep", "nested": deep}


@pytest.mark.parametrize(
    "bad",
    [{"content": "\ud800 lone surrogate"}, {"content": "x", "\udfff": "a lone surrogate as a key"}, nested(10_000)],
    ids=["surrogate-value", "surrogate-key", "10000-deep"],
)
def test_what_json_cannot_carry_is_invalid_input_before_it_is_sent(server: SessionStore, bad: dict[str, Any]) -> None:
    store, sent = client(server)
    sid = store.create_session("alice").id
    sent.sent.clear()
    with pytest.raises(InvalidInput):
        store.append_messages(sid, [{"role": "user", **bad}])
    with pytest.raises(InvalidInput):
        store.save_full(sid, [{"role": "user", **bad}], {})
    assert sent.sent == [] and store.list_messages(sid).items == []


def test_scoped_ids_are_at_most_100_characters_as_over_the_api(server: SessionStore) -> None:
    scoped = SessionStore(backend=ScopedBackend(server.backend, "alice"))
    with pytest.raises(InvalidInput, match="at most 100 characters"):
        scoped.create_session("alice", session_id="x" * 110)
    assert scoped.list_sessions("alice").items == []
    assert scoped.create_session("alice", session_id="x" * 100).id == "x" * 100
    over_http, _ = client(server)
    with pytest.raises(InvalidInput, match="at most 100 characters"):
        over_http.create_session("alice", session_id="y" * 110)


def test_the_local_server_lets_a_burst_of_clients_wait() -> None:
    assert ApiServer.request_queue_size >= 128
