"""The HTTP API's handler with API Gateway v2 events, over DynamoDB + S3 on moto."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from functions.api import context
from tests.api_client import Reply, artifact_path, call
from tests.conftest import Harness

ERROR_KEYS = {"code", "message"}


@pytest.fixture
def api(dyn: Harness) -> Iterator[Harness]:
    context.use_store(dyn.store)
    yield dyn
    context.use_store(None)


def ok(reply: Reply, status: int = 200) -> Any:
    assert reply.status == status, (reply.status, reply.body[:300])
    return reply.json() if reply.body else None


def err(reply: Reply, status: int, code: str | None = None) -> dict[str, Any]:
    assert reply.status == status, (reply.status, reply.body[:300])
    body = reply.json()
    assert set(body) == ERROR_KEYS and body["message"], body
    assert "Traceback" not in body["message"]
    if code is not None:
        assert body["code"] == code, body
    return dict(body)


def test_sessions_and_messages(api: Harness) -> None:
    created = ok(call("POST", "/sessions", json_body={"title": "Trip", "metadata": {"k": "v"}}), 201)
    sid = created["id"]
    assert created["owner"] == "alice" and created["title"] == "Trip"
    assert ok(call("GET", f"/sessions/{sid}"))["id"] == sid
    assert ok(call("PATCH", f"/sessions/{sid}", json_body={"title": "Lisbon"}))["title"] == "Lisbon"
    assert ok(call("GET", f"/sessions/{sid}"))["metadata"] == {"k": "v"}  # untouched by the patch
    err(call("POST", "/sessions", json_body={"session_id": sid}), 409, "session_exists")
    body = {"messages": [{"role": "user", "content": f"m{i}"} for i in range(5)]}
    first = ok(call("POST", f"/sessions/{sid}/messages", json_body=body, headers={"Idempotency-Key": "turn-1"}), 201)
    again = ok(call("POST", f"/sessions/{sid}/messages", json_body=body, headers={"Idempotency-Key": "turn-1"}), 201)
    assert [m["seq"] for m in first["items"]] == [1, 2, 3, 4, 5] and again == first
    err(call("POST", f"/sessions/{sid}/messages", json_body={**body, "expected_seq": 0}), 409, "conflict")
    page = ok(call("GET", f"/sessions/{sid}/messages", query={"limit": 2}))
    assert [m["content"] for m in page["items"]] == ["m0", "m1"] and page["next_cursor"]
    rest = ok(call("GET", f"/sessions/{sid}/messages", query={"limit": 10, "cursor": page["next_cursor"]}))
    assert [m["seq"] for m in rest["items"]] == [3, 4, 5] and rest["next_cursor"] is None
    newest = ok(call("GET", f"/sessions/{sid}/messages", query={"newest_first": "true", "limit": 1}))
    assert newest["items"][0]["seq"] == 5
    roles = ok(call("GET", f"/sessions/{sid}/messages", query=[("roles", "user"), ("roles", "tool")]))
    assert len(roles["items"]) == 5
    assert [m["seq"] for m in ok(call("GET", f"/sessions/{sid}/last-messages", query={"n": 2}))["items"]] == [4, 5]
    mid = first["items"][0]["id"]
    assert ok(call("GET", f"/sessions/{sid}/messages/{mid}"))["content"] == "m0"
    err(call("GET", f"/sessions/{sid}/messages/nope"), 404, "message_not_found")
    usage = ok(call("PUT", f"/sessions/{sid}/messages/{mid}/usage", json_body={"usage": {"input_tokens": 7}}))
    assert usage["usage"]["input_tokens"] == 7
    assert ok(call("GET", f"/sessions/{sid}"))["usage"]["input_tokens"] == 7
    err(call("GET", f"/sessions/{sid}/compaction"), 404)
    ok(call("POST", f"/sessions/{sid}/messages/{first['items'][3]['id']}/compaction"))
    assert ok(call("GET", f"/sessions/{sid}/compaction"))["seq"] == 4
    since = ok(call("GET", f"/sessions/{sid}/messages", query={"since_compaction": "true"}))
    assert [m["seq"] for m in since["items"]] == [4, 5]
    listed = ok(call("GET", "/sessions", query={"limit": 10}))
    assert [s["id"] for s in listed["items"]] == [sid]
    found = ok(call("GET", "/search", query={"q": "m3"}))
    assert found["items"][0]["seq"] == 4 and found["next_cursor"] is None and found["sessions_searched"] >= 1
    err(call("GET", "/search", query={"q": "m3", "cursor": "bogus"}), 400)
    assert call("DELETE", f"/sessions/{sid}").status == 204
    err(call("GET", f"/sessions/{sid}"), 404, "session_not_found")
    assert call("DELETE", f"/sessions/{sid}").status == 204  # idempotent


def test_state_interrupts_records_checkpoints(api: Harness) -> None:
    sid = ok(call("POST", "/sessions", json_body={}), 201)["id"]
    err(call("GET", f"/sessions/{sid}/state"), 404, "not_found")
    assert ok(call("PUT", f"/sessions/{sid}/state", json_body={"state": {"phase": 1}})) == {"version": 1}
    err(call("PUT", f"/sessions/{sid}/state", json_body={"state": {}, "expected_version": 0}), 409, "conflict")
    assert ok(call("GET", f"/sessions/{sid}/state"))["state"] == {"phase": 1}
    full = {"messages": [{"role": "user", "content": "hi"}], "state": {"phase": 2}, "expected_seq": 0}
    assert ok(call("POST", f"/sessions/{sid}/full", json_body=full))["seq"] == 1
    loaded = ok(call("GET", f"/sessions/{sid}/full"))
    assert loaded["state"]["state"] == {"phase": 2} and len(loaded["messages"]) == 1
    exchange = [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "ok"}]}}]},
        {"role": "assistant", "content": "done"},
    ]
    other = ok(call("POST", "/sessions", json_body={}), 201)["id"]
    ok(call("POST", f"/sessions/{other}/full", json_body={**full, "messages": [full["messages"][0], *exchange]}))
    window = ok(call("GET", f"/sessions/{other}/full", query={"last": 2}))  # widened back to the tool call
    assert [m["seq"] for m in window["messages"]] == [2, 3, 4] and window["state"]["state"] == {"phase": 2}
    err(call("GET", f"/sessions/{other}/full", query={"last": 0}), 422)
    err(call("GET", f"/sessions/{sid}/interrupt"), 404)
    assert call("PUT", f"/sessions/{sid}/interrupt", json_body={"interrupt": {"tool": "pay"}}).status == 204
    assert ok(call("GET", f"/sessions/{sid}/interrupt")) == {"interrupt": {"tool": "pay"}}
    assert call("DELETE", f"/sessions/{sid}/interrupt").status == 204
    assert call("PUT", f"/sessions/{sid}/records/runs", json_body={"records": [1, {"a": 2}]}).status == 204
    assert ok(call("GET", f"/sessions/{sid}/records/runs")) == {"records": [1, {"a": 2}]}
    cp = ok(call("PUT", f"/checkpoints/session/{sid}", json_body={"data": {"step": 3}, "ttl_seconds": 60}))
    assert cp["seq"] == 1 and ok(call("GET", f"/checkpoints/session/{sid}"))["data"] == {"step": 3}
    ok(call("PUT", "/checkpoints/run/r-1", json_body={"data": [1]}))
    assert ok(call("GET", "/checkpoints/run/r-1"))["data"] == [1]
    err(call("GET", "/checkpoints/run/r-1", owner="mallory"), 404)
    assert ok(call("PUT", "/checkpoints/run/r-1", owner="mallory", json_body={"data": 2}))["data"] == 2  # hers
    assert ok(call("GET", "/checkpoints/run/r-1"))["data"] == [1]
    assert call("DELETE", "/checkpoints/run/r-1").status == 204
    err(call("GET", "/checkpoints/run/r-1"), 404)
    err(call("GET", "/checkpoints/galaxy/r-1"), 422, "invalid_request")


def test_artifacts_and_traces(api: Harness) -> None:
    sid = ok(call("POST", "/sessions", json_body={}), 201)["id"]
    data = b"\x89PNG\r\n\x1a\n binary \xff\x00"
    path = artifact_path(sid, "plots/chart.png")
    v1 = ok(call("PUT", path, body=data, headers={"content-type": "image/png"}), 201)
    assert (v1["version"], v1["sha256"], v1["content_type"]) == (1, hashlib.sha256(data).hexdigest(), "image/png")
    redirect = call("GET", path)
    assert redirect.status == 302 and "X-Amz-Signature=" in redirect.headers["location"]
    inline = call("GET", path, query={"inline": "true"})
    assert inline.status == 200 and inline.body == data and inline.headers["content-type"] == "image/png"
    err(call("GET", path, query={"version": 9}), 404)
    err(call("GET", artifact_path(sid, "missing.txt"), query={"inline": "true"}), 404)
    up = ok(call("POST", f"/sessions/{sid}/artifact-uploads", json_body={"name": "plots/chart.png"}), 201)
    assert up["upload_id"] and up["url"]
    err(
        call(
            "POST", f"/sessions/{sid}/artifact-uploads/{up['upload_id']}/confirm", json_body={"name": "plots/chart.png"}
        ),
        400,
    )
    from tests.contract.test_artifacts import put_through_url

    put_through_url(api, up["url"], b"second version")
    v2 = ok(
        call(
            "POST", f"/sessions/{sid}/artifact-uploads/{up['upload_id']}/confirm", json_body={"name": "plots/chart.png"}
        ),
        201,
    )
    assert v2["version"] == 2 and v2["size"] == len(b"second version")
    assert [a["version"] for a in ok(call("GET", f"{path}/versions"))["items"]] == [1, 2]
    assert [a["name"] for a in ok(call("GET", f"/sessions/{sid}/artifacts"))["items"]] == ["plots/chart.png"]
    assert call("DELETE", path).status == 204
    assert ok(call("GET", f"/sessions/{sid}/artifacts"))["items"] == []
    assert ok(call("POST", f"/sessions/{sid}/traces/run-1", json_body={"events": [{"e": 1}]}), 201) == {"batch": 1}
    ok(call("POST", f"/sessions/{sid}/traces/run-2", json_body={"events": [{"e": 2}, {"e": 3}]}), 201)
    assert ok(call("GET", f"/sessions/{sid}/traces"))["items"] == [{"e": 1}, {"e": 2}, {"e": 3}]
    assert ok(call("GET", f"/sessions/{sid}/traces", query={"run_id": "run-2"}))["items"] == [{"e": 2}, {"e": 3}]
    assert ok(call("GET", f"/sessions/{sid}/trace-runs"))["items"] == ["run-1", "run-2"]


def test_public_routes_and_errors(api: Harness) -> None:
    assert ok(call("GET", "/health", owner=None)) == {"status": "ok"}
    doc = ok(call("GET", "/openapi.json", owner=None))
    assert doc["info"]["title"] == "agent-session-store" and "/sessions" in doc["paths"]
    err(call("GET", "/sessions", owner=None), 401, "unauthorized")
    err(call("GET", "/nowhere"), 404, "route_not_found")
    err(call("POST", "/sessions", json_body={"unknown": 1}), 422, "invalid_request")
    err(call("POST", "/sessions", body=b"{not json", headers={"content-type": "application/json"}), 422)
    err(call("POST", "/sessions", json_body={"session_id": "../etc"}), 400, "invalid_input")
    err(call("GET", "/sessions", query={"limit": 0}), 422, "invalid_request")
    big = {"messages": [{"role": "user", "content": "x" * (5 * 1024 * 1024)}]}
    err(call("POST", "/sessions/s1/messages", json_body=big), 413, "payload_too_large")


def test_openapi_document_is_committed() -> None:
    from functions.api.app import openapi_document

    committed = Path("docs/openapi.json").read_text(encoding="utf-8")
    assert committed == openapi_document(), "docs/openapi.json is stale: run make openapi"


def test_retention_defaults_to_the_deployment_setting(api: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_RETENTION_DAYS", "30")
    default = ok(call("POST", "/sessions", json_body={}), 201)
    assert default["retention"] == 30 * 86400 and default["expires_at"]
    forever = ok(call("POST", "/sessions", json_body={"retention_seconds": 0}), 201)
    assert forever["retention"] is None and forever["expires_at"] is None
    hour = ok(call("POST", "/sessions", json_body={"retention_seconds": 3600}), 201)
    assert hour["retention"] == 3600
