"""The API's own limits: required scopes, a time budget per request, a health answer that names nothing,
and answers that are never sniffed or cached."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.config import Config

from functions.api import context
from infra.local.aws import local_client
from store import SessionStore
from store.session_store import retry_config
from tests.api_client import call
from tests.aws.test_retry_budget import cancel_every
from tests.conftest import FakeClock, Harness, make_harness


@pytest.fixture
def api(dyn: Harness) -> Iterator[Harness]:
    context.use_store(dyn.store)
    yield dyn
    context.use_store(None)


def test_required_scopes(api: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """With JwtScopes set, a verified token without one of them (an ID token carries none) is a 403."""
    from functions.access import token_scopes

    monkeypatch.setenv("JWT_SCOPES", "agent-store/sessions,agent-store/admin")
    reply = call("GET", "/sessions")
    assert reply.status == 403 and reply.json()["code"] == "insufficient_scope"

    def with_scope(scope: Any) -> int:
        from functions.api.app import lambda_handler
        from infra.local.apigw import LambdaContext, http_event

        claims = {"sub": "alice", "scope": scope}
        return int(lambda_handler(http_event("GET", "/sessions", claims=claims), LambdaContext())["statusCode"])

    assert with_scope("openid agent-store/sessions") == 200
    assert with_scope("[agent-store/admin profile]") == 200  # a list claim, as API Gateway renders it
    assert with_scope("openid profile") == 403
    assert call("GET", "/health", owner=None).status == 200  # public routes need no scope
    assert token_scopes({"scp": ["a", "b"], "scope": "c"}) == {"a", "b", "c"}
    monkeypatch.setenv("JWT_SCOPES", "")
    assert call("GET", "/sessions").status == 200


def test_every_answer_is_nosniff_and_not_cached(api: Harness) -> None:
    for reply in (
        call("POST", "/sessions", json_body={}),
        call("GET", "/sessions/nope"),
        call("GET", "/health", owner=None),
        call("GET", "/sessions", owner=None),
        call("POST", "/sessions", json_body={"retention_seconds": -1}),
    ):
        assert reply.headers["x-content-type-options"] == "nosniff", reply
        assert reply.headers["cache-control"] == "no-store", reply


def test_inline_downloads_are_attachments(api: Harness) -> None:
    sid = call("POST", "/sessions", json_body={}).json()["id"]
    put = call(
        "PUT",
        f"/sessions/{sid}/artifacts/pages%2Findex.html",
        body=b"<script>x</script>",
        headers={"content-type": "text/html"},
    )
    assert put.status == 201
    reply = call("GET", f"/sessions/{sid}/artifacts/pages%2Findex.html", query={"inline": "true"})
    assert reply.status == 200 and reply.body == b"<script>x</script>"
    assert reply.headers["content-disposition"].startswith('attachment; filename="index.html"')
    assert reply.headers["x-content-type-options"] == "nosniff"
    redirect = call("GET", f"/sessions/{sid}/artifacts/pages%2Findex.html")
    assert redirect.status == 302 and "response-content-disposition=attachment" in redirect.headers["location"]


def test_health_names_no_resource(monkeypatch: pytest.MonkeyPatch, aws: None) -> None:
    """Unauthenticated callers learn that storage is down, not what it is called."""
    broken = SessionStore(
        "secret-sessions-table", "secret-messages-table", bucket="secret-bucket", client=local_client()
    )
    context.use_store(broken)
    try:
        reply = call("GET", "/health", owner=None)
    finally:
        context.use_store(None)
    assert reply.status == 503 and reply.json() == {"code": "unavailable", "message": "storage is unavailable"}
    assert b"secret" not in reply.body


@pytest.fixture
def contended(aws: None, inspector_client: Any, clock: FakeClock) -> Iterator[tuple[Harness, Any]]:
    client = local_client(config=retry_config(Config(retries={"mode": "standard", "max_attempts": 1})))
    h = make_harness("dynamodb", clock, client, inspector_client)
    context.use_store(h.store)
    yield h, client
    context.use_store(None)


def test_a_request_stops_retrying_within_its_budget(
    contended: tuple[Harness, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Contention on every attempt: the request answers 409 once its budget (REQUEST_BUDGET_SECONDS, here
    0.5 s; the store's own retry budget is 5 s) is spent, instead of using the function's whole time."""
    _, client = contended
    sid = call("POST", "/sessions", json_body={}).json()["id"]
    monkeypatch.setenv("REQUEST_BUDGET_SECONDS", "0.5")
    attempts = cancel_every(client, "TransactWriteItems", ["TransactionConflict"])
    started = time.monotonic()
    reply = call("POST", f"/sessions/{sid}/messages", json_body={"messages": [{"role": "user", "content": "x"}]})
    took = time.monotonic() - started
    assert reply.status == 409 and reply.json()["code"] == "conflict", reply.body
    assert "gave up after" in reply.json()["message"]
    assert took < 4, f"the request budget did not bound the request: {took:.1f} s"
    assert len(attempts) >= 2
