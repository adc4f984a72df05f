"""Every route that takes a JSON body, sent JSON that no store could keep (found by the hardening probe:
10,000-deep arrays and 5,000-digit integers were 500s): a 400 `invalid_input` in the error shape, at once,
and nothing written."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from functions.api import context
from store.core.scoped_ids import scoped_id
from tests.api_client import call
from tests.conftest import Harness

# raw JSON texts: Python's json module reads each of them, and none may reach a store
HOSTILE = {
    "deep": "[" * 10_000 + "]" * 10_000,
    "digits": "7" * 5_000,
    "nan": "NaN",
    "infinity": "Infinity",
    "minus-infinity": "-Infinity",
    "overflow": "1e400",
    "surrogate": '"a\\ud800b"',
    "surrogate-key": '{"\\udfff": 1}',
}
# every route with a JSON body, and where in it the hostile value goes (@)
BODIES = [
    ("POST", "/sessions", '{"title": "t", "metadata": {"m": @}}'),
    ("PATCH", "/sessions/{s}", '{"metadata": {"m": @}}'),
    ("POST", "/sessions/{s}/messages", '{"messages": [{"role": "user", "content": @}]}'),
    ("PUT", "/sessions/{s}/messages/{m}/usage", '{"usage": {"cost": @}}'),
    ("PUT", "/sessions/{s}/state", '{"state": @}'),
    ("POST", "/sessions/{s}/full", '{"messages": [{"role": "user", "content": "x"}], "state": @}'),
    ("PUT", "/sessions/{s}/interrupt", '{"interrupt": {"i": @}}'),
    ("PUT", "/sessions/{s}/records/runs", '{"records": [@]}'),
    ("PUT", "/checkpoints/run/k1", '{"data": @}'),
    ("PUT", "/checkpoints/session/{s}", '{"data": @}'),
    ("POST", "/sessions/{s}/artifact-uploads", '{"name": "a.txt", "metadata": {"k": @}}'),
    ("POST", "/sessions/{s}/artifact-uploads/{u}/confirm", '{"name": @}'),
    ("POST", "/sessions/{s}/traces/run-1", '{"events": [{"e": @}]}'),
]
# numbers that parse, but that no DynamoDB number holds (or whose sums would not)
USAGE = ['{"cost": 1e300}', '{"cost": 1e-300}', '{"input_tokens": -1}', '{"output_tokens": 100000000000000000000}']


@pytest.fixture
def api(dyn: Harness) -> Iterator[tuple[Harness, dict[str, str]]]:
    context.use_store(dyn.store)
    sid = scoped_id("alice", "s1")
    dyn.store.create_session("alice", session_id=sid)
    mid = dyn.store.append_messages(sid, [{"role": "user", "content": "x"}])[0].id
    upload = dyn.store.presign_artifact_upload(sid, "a.txt")
    yield dyn, {"s": "s1", "m": mid, "u": upload.upload_id}
    context.use_store(None)


def refused(harness: Harness, method: str, path: str, body: str) -> None:
    before = harness.snapshot()
    reply = call(method, path, body=body.encode("utf-8", "surrogatepass"), headers={"content-type": "application/json"})
    assert reply.status == 400, (method, path, body[:60], reply.status, reply.body[:200])
    assert reply.json()["code"] == "invalid_input" and set(reply.json()) == {"code", "message"}
    assert harness.snapshot() == before, (method, path, body[:60])


@pytest.mark.parametrize(("method", "template", "envelope"), BODIES, ids=[f"{m} {p}" for m, p, _ in BODIES])
def test_json_no_store_can_keep_is_a_400(
    api: tuple[Harness, dict[str, str]], method: str, template: str, envelope: str
) -> None:
    harness, ids = api
    path = template.format(**ids)
    for value in HOSTILE.values():
        refused(harness, method, path, envelope.replace("@", value))


def test_numbers_dynamodb_cannot_store_are_a_400(api: tuple[Harness, dict[str, str]]) -> None:
    harness, ids = api
    for usage in USAGE:
        refused(harness, "PUT", "/sessions/s1/messages/{m}/usage".format(**ids), '{"usage": ' + usage + "}")
        message = '{"role": "user", "content": "x", "usage": ' + usage + "}"
        refused(harness, "POST", "/sessions/s1/messages", '{"messages": [' + message + "]}")
        refused(harness, "POST", "/sessions/s1/full", '{"messages": [' + message + '], "state": 1}')
    refused(harness, "PUT", "/sessions/s1/state", '{"state": 1, "expected_version": ' + "9" * 40 + "}")


# query parameters whose JSON the API reads: nested past any limit within their length, or not JSON
CURSOR_ROUTES = [("/sessions", {}), ("/search", {"q": "x"}), ("/sessions/s1/messages", {})]


def test_json_in_query_parameters_is_a_400_never_a_500(api: tuple[Harness, dict[str, str]]) -> None:
    """`GET /sessions?metadata=` nested 1,000 deep, and a cursor that is base64 of 1,500 `[`, on every route
    that pages: 400s (they were RecursionErrors: 500s), and nothing written."""
    import base64

    from store.core import cursor

    harness, _ = api
    before = harness.snapshot()
    deep_cursor = base64.urlsafe_b64encode(b"[" * 1500).decode().rstrip("=")
    forged = cursor.encode("sessions", "alice", {"p": [[[["x"]]]]})  # valid JSON, nested past a cursor's depth
    for route, query in CURSOR_ROUTES:
        for value in (deep_cursor, forged, "not base64!"):
            reply = call("GET", route, query={**query, "cursor": value})
            assert reply.status == 400 and reply.json()["code"] == "invalid_input", (route, reply.body[:200])
    for metadata in ("[" * 1000 + "]" * 1000, '{"a":' * 300 + "1" + "}" * 300, "NaN", '{"a": 1e999}'):
        reply = call("GET", "/sessions", query={"metadata": metadata})
        assert reply.status == 400 and reply.json()["code"] == "invalid_input", (metadata[:20], reply.body[:200])
    assert harness.snapshot() == before


# every number and flag of a JSON body, and a body that sets it (@): JSON's true, a string and a fraction are
# not integers (they were taken as 1: a fork at message 1)
STRICT_FIELDS = [
    ("POST", "/sessions", '{"retention_seconds": @}'),
    ("POST", "/sessions/{s}/fork", '{"at_seq": @}'),
    ("POST", "/sessions/{s}/rewind", '{"to_seq": @}'),
    ("POST", "/sessions/{s}/messages", '{"messages": [{"role": "user", "content": "x"}], "expected_seq": @}'),
    ("PUT", "/sessions/{s}/state", '{"state": 1, "expected_version": @}'),
    ("POST", "/sessions/{s}/full", '{"messages": [], "state": 1, "expected_seq": @}'),
    ("PUT", "/checkpoints/run/k1", '{"data": 1, "ttl_seconds": @}'),
    ("POST", "/sessions/{s}/artifact-uploads", '{"name": "a.txt", "expires_in": @}'),
    ("POST", "/sessions/{s}/artifact-uploads", '{"name": "a.txt", "size": @}'),
    ("POST", "/sessions/{s}/artifact-uploads", '{"name": "a.txt", "max_size": @}'),
]


@pytest.mark.parametrize(("method", "template", "body"), STRICT_FIELDS, ids=[b for _, _, b in STRICT_FIELDS])
def test_integers_in_bodies_are_strict(
    api: tuple[Harness, dict[str, str]], method: str, template: str, body: str
) -> None:
    harness, ids = api
    path = template.format(**ids)
    for value in ("true", '"1"', "1.5", "false"):
        before = harness.snapshot()
        reply = call(method, path, body=body.replace("@", value).encode(), headers={"content-type": "application/json"})
        assert reply.status == 422 and reply.json()["code"] == "invalid_request", (path, value, reply.body[:200])
        assert harness.snapshot() == before


def test_keep_state_is_a_boolean(api: tuple[Harness, dict[str, str]]) -> None:
    harness, _ = api
    before = harness.snapshot()
    for value in ('"yes"', "1", '"true"'):
        body = '{"messages": [], "state": 1, "keep_state": ' + value + "}"
        reply = call("POST", "/sessions/s1/full", body=body.encode(), headers={"content-type": "application/json"})
        assert reply.status == 422, (value, reply.body[:200])
    assert harness.snapshot() == before
