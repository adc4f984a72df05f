"""Every route, called as another owner and with no identity, and with bad input: 404/401/4xx, the error
shape, and nothing written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest

from functions.api import context
from store.core.scoped_ids import scoped_id
from tests.api_client import call
from tests.conftest import Harness

MSG = {"messages": [{"role": "user", "content": "x"}]}

# (method, path template, JSON body, status for another owner). {s} is alice's session, {m} a message id,
# {u} a pending upload id, {b} a branch of the session.
ROUTES: list[tuple[str, str, Any, int]] = [
    ("GET", "/sessions/{s}", None, 404),
    ("PATCH", "/sessions/{s}", {"title": "mine now"}, 404),
    ("DELETE", "/sessions/{s}", None, 204),  # idempotent: absent for this owner, so nothing to delete
    ("POST", "/sessions/{s}/fork", {"session_id": "mine-now"}, 404),
    ("POST", "/sessions/{s}/rewind", {"to_seq": 0}, 404),
    ("GET", "/sessions/{s}/branches", None, 404),
    ("GET", "/sessions/{s}/messages?branch={b}", None, 404),
    ("POST", "/sessions/{s}/branches/{b}/restore", {}, 404),
    ("DELETE", "/sessions/{s}/branches/{b}", None, 404),
    ("POST", "/sessions/{s}/messages", MSG, 404),
    ("GET", "/sessions/{s}/messages", None, 404),
    ("GET", "/sessions/{s}/last-messages", None, 404),
    ("GET", "/sessions/{s}/messages/{m}", None, 404),
    ("PUT", "/sessions/{s}/messages/{m}/usage", {"usage": {"input_tokens": 1}}, 404),
    ("POST", "/sessions/{s}/messages/{m}/compaction", None, 404),
    ("GET", "/sessions/{s}/compaction", None, 404),
    ("GET", "/sessions/{s}/state", None, 404),
    ("GET", "/sessions/{s}/overview", None, 404),
    ("PUT", "/sessions/{s}/state", {"state": 1}, 404),
    ("GET", "/sessions/{s}/full", None, 404),
    ("POST", "/sessions/{s}/full", {**MSG, "state": 1}, 404),
    ("GET", "/sessions/{s}/interrupt", None, 404),
    ("PUT", "/sessions/{s}/interrupt", {"interrupt": {"a": 1}}, 404),
    ("DELETE", "/sessions/{s}/interrupt", None, 404),
    ("GET", "/sessions/{s}/records/{k}", None, 404),
    ("PUT", "/sessions/{s}/records/{k}", {"records": [1]}, 404),
    ("GET", "/checkpoints/session/{s}", None, 404),
    ("PUT", "/checkpoints/session/{s}", {"data": 1}, 404),
    ("DELETE", "/checkpoints/session/{s}", None, 404),
    ("GET", "/sessions/{s}/artifacts", None, 404),
    ("POST", "/sessions/{s}/artifact-uploads", {"name": "a.txt"}, 404),
    ("POST", "/sessions/{s}/artifact-uploads/{u}/confirm", {"name": "a.txt"}, 404),
    ("PUT", "/sessions/{s}/artifacts/a.txt", None, 404),
    ("GET", "/sessions/{s}/artifacts/a.txt", None, 404),
    ("GET", "/sessions/{s}/artifacts/a.txt/versions", None, 404),
    ("DELETE", "/sessions/{s}/artifacts/a.txt", None, 404),
    ("POST", "/sessions/{s}/traces/{r}", {"events": [{"e": 1}]}, 404),
    ("GET", "/sessions/{s}/traces", None, 404),
    ("GET", "/sessions/{s}/trace-runs", None, 404),
    ("GET", "/sessions/{s}/memory-runs", None, 404),
    ("POST", "/sessions/{s}/memory-runs", {}, 404),
    ("GET", "/sessions/{s}/context", None, 404),
    ("GET", "/messages/search?q=x&session_id={s}", None, 404),
]
OWNER_ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/sessions", {}),
    ("GET", "/sessions", None),
    ("GET", "/search?q=x", None),
    ("POST", "/v1/traces", {"resourceSpans": []}),
    ("POST", "/memories", {"namespace": ["n"], "key": "k", "value": {"text": "x"}}),
    ("GET", "/memories/search?q=x", None),
    ("GET", "/messages/search?q=x", None),
    ("GET", "/memories/namespaces", None),
    ("GET", "/memories/item?key=k", None),
    ("DELETE", "/memories/item?key=k", None),
    ("PATCH", "/memories/item?key=k", {"text": "x"}),
    ("DELETE", "/memories", None),
    ("GET", "/memories/extraction", None),
    ("PUT", "/memories/extraction", {"enabled": True}),
    ("GET", "/owner/records/{k}", None),
    ("PUT", "/owner/records/{k}", {"records": [{"a": 1}]}),
]


@pytest.fixture
def api(dyn: Harness) -> Iterator[Harness]:
    context.use_store(dyn.store)
    yield dyn
    context.use_store(None)


def alices_session(dyn: Harness) -> dict[str, str]:
    """A session of alice's with one of everything, made through the library under the id the API gives
    her "plans" session; the ids returned are the ones her requests use."""
    store = dyn.store
    sid = scoped_id("alice", "plans")
    store.create_session("alice", session_id=sid, title="secret plans")
    mid = store.append_messages(sid, [{"role": "user", "content": "secret"}])[0].id
    store.append_messages(sid, [{"role": "assistant", "content": "a secret answer"}])
    store.rewind_session(sid, 1, branch="b1")
    store.save_state(sid, {"s": 1})
    store.save_interrupt(sid, {"i": 1})
    store.save_records(sid, "runs", [1])
    store.save_checkpoint("session", sid, {"c": 1})
    store.put_artifact(sid, "a.txt", b"alice's")
    store.append_trace_events(sid, "run-1", [{"e": 1}])
    upload = store.presign_artifact_upload(sid, "a.txt", owner="alice")
    return {"s": "plans", "m": mid, "u": upload.upload_id, "k": "runs", "r": "run-1", "b": "b1"}


def fill(template: str, ids: dict[str, str]) -> str:
    return template.format(**ids)


def test_the_table_covers_every_route() -> None:
    doc = json.loads(Path("docs/openapi.json").read_text(encoding="utf-8"))
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    names = {
        "{s}": "{session_id}",
        "{m}": "{message_id}",
        "{u}": "{upload_id}",
        "{k}": "{kind}",
        "{r}": "{run_id}",
        "{b}": "{branch}",
    }

    def as_template(path: str) -> str:
        for short, long in names.items():
            path = path.replace(short, long)
        return path.replace("/session/{session_id}", "/{scope}/{key}").replace("a.txt", "{name}").split("?")[0]

    covered = {(m, as_template(p)) for m, p, _, _ in ROUTES} | {(m, as_template(p)) for m, p, _ in OWNER_ROUTES}
    assert documented - covered == {("GET", "/health")}, documented - covered


def test_another_owner_finds_nothing_and_writes_nothing(api: Harness) -> None:
    ids = alices_session(api)
    before = api.snapshot()
    for method, template, body, status in ROUTES:
        reply = call(method, fill(template, ids), owner="mallory", json_body=body)
        assert reply.status == status, (method, template, reply.status, reply.body[:200])
        if status >= 400:
            assert reply.json()["code"] in ("session_not_found", "not_found"), (method, template, reply.body)
        assert b"secret" not in reply.body and b"alice" not in reply.body
    assert call("GET", "/sessions", owner="mallory").json()["items"] == []
    assert call("GET", "/search", owner="mallory", query={"q": "secret"}).json()["items"] == []
    # spans naming alice's session, sent with mallory's token, are rejected (and named so in OTLP's answer)
    attrs = [{"key": "session.id", "value": {"stringValue": ids["s"]}}]
    spans = {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "f" * 32, "name": "x", "attributes": attrs}]}]}]}
    otlp = call("POST", "/v1/traces", owner="mallory", json_body=spans)
    assert otlp.status == 200 and otlp.json()["partialSuccess"]["rejectedSpans"] == 1
    assert api.snapshot() == before, "another owner's calls must write nothing"


def test_another_owner_never_reaches_alices_memories(api: Harness) -> None:
    """Every memory route with mallory's token, aimed at what alice keeps: absent, unranked, unlisted, and
    her deletes (of one memory, of everything hers) leave alice's as they were."""
    secret = {"namespace": ["plans"], "key": "k", "value": {"text": "secret window seat"}}
    assert call("POST", "/memories", owner="alice", json_body=secret).status == 200
    before = api.memories()
    item = {"namespace": '["plans"]', "key": "k"}
    assert call("GET", "/memories/item", owner="mallory", query=item).status == 404
    for query in ({"q": "secret window seat"}, {"q": "secret", "mode": "keyword"}, {}, {"prefix": '["plans"]'}):
        found = call("GET", "/memories/search", owner="mallory", query=query)
        assert found.status == 200 and found.json()["items"] == [] and b"secret" not in found.body
    assert call("GET", "/memories/namespaces", owner="mallory").json()["items"] == []
    assert call("DELETE", "/memories/item", owner="mallory", query=item).status == 204
    corrected = call("PATCH", "/memories/item", owner="mallory", query=item, json_body={"text": "mine now"})
    assert corrected.status == 404 and b"secret" not in corrected.body
    assert call("DELETE", "/memories", owner="mallory").json() == {"done": True}
    assert api.memories() == before
    assert call("GET", "/memories/item", owner="alice", query=item).json()["value"] == secret["value"]


def test_no_identity_is_401_everywhere(api: Harness) -> None:
    ids = alices_session(api)
    before = api.snapshot()
    for method, template, body, _ in ROUTES + [(m, p, b, 0) for m, p, b in OWNER_ROUTES]:
        path, _, query = fill(template, ids).partition("?")
        reply = call(method, path, owner=None, json_body=body, query=dict(parse_qsl(query)) if query else None)
        assert reply.status == 401 and reply.json()["code"] == "unauthorized", (method, template)
    assert api.snapshot() == before


BAD: list[tuple[str, str, Any]] = [
    ("POST", "/sessions", {"retention_seconds": -1}),
    ("POST", "/sessions", {"metadata": "not an object"}),
    ("GET", "/sessions/bad%20id", None),
    ("PATCH", "/sessions/{s}", {"title": 5}),
    ("POST", "/sessions/{s}/messages", {"messages": []}),
    ("POST", "/sessions/{s}/messages", {"messages": [{"content": "no role"}]}),
    ("POST", "/sessions/{s}/messages", {"messages": [{"role": "user", "id": "../x"}]}),
    ("GET", "/sessions/{s}/messages?limit=0", None),
    ("GET", "/sessions/{s}/messages?cursor=garbage", None),
    ("GET", "/sessions/{s}/messages?after_seq=-1", None),
    ("GET", "/sessions/{s}/last-messages?n=100000", None),
    ("PUT", "/sessions/{s}/messages/{m}/usage", {"usage": {"input_tokens": "many"}}),
    ("PUT", "/sessions/{s}/state", {}),
    ("PUT", "/sessions/{s}/state", {"state": 1, "expected_version": -1}),
    ("POST", "/sessions/{s}/full", {"messages": [], "state": 1}),
    ("PUT", "/sessions/{s}/interrupt", {"interrupt": [1, 2]}),
    ("PUT", "/sessions/{s}/records/bad%2Fkind", {"records": [1]}),
    ("PUT", "/sessions/{s}/records/{k}", {"records": "not a list"}),
    ("PUT", "/checkpoints/galaxy/k", {"data": 1}),
    ("PUT", "/checkpoints/run/k", {"data": 1, "ttl_seconds": 0}),
    ("POST", "/sessions/{s}/artifact-uploads", {"name": "../etc/passwd"}),
    ("POST", "/sessions/{s}/artifact-uploads", {"name": "a.txt", "expires_in": 7200}),
    ("POST", "/sessions/{s}/artifact-uploads/not-an-upload/confirm", {"name": "a.txt"}),
    ("PUT", "/sessions/{s}/artifacts/a%2F..%2Fb", None),
    ("GET", "/sessions/{s}/artifacts/a.txt?version=0", None),
    ("POST", "/sessions/{s}/traces/{r}", {"events": []}),
    ("POST", "/sessions/{s}/traces/bad%20run", {"events": [{"e": 1}]}),
    ("GET", "/search?q=", None),
]


@pytest.mark.parametrize(("method", "template", "body"), BAD, ids=[f"{m} {p}" for m, p, _ in BAD])
def test_bad_input_is_a_4xx_with_the_error_shape(api: Harness, method: str, template: str, body: Any) -> None:
    ids = alices_session(api)
    before = api.snapshot()
    path, _, query = fill(template, ids).partition("?")
    reply = call(method, path, json_body=body, query=dict([query.split("=", 1)]) if query else None)
    assert 400 <= reply.status < 500, (reply.status, reply.body[:200])
    payload = reply.json()
    assert set(payload) == {"code", "message"} and payload["code"] in ("invalid_input", "invalid_request")
    assert api.snapshot() == before


@pytest.mark.parametrize(
    ("method", "template", "body"), [(m, p, b) for m, p, b, _ in ROUTES], ids=[f"{m} {p}" for m, p, _, _ in ROUTES]
)
def test_every_route_refuses_a_bad_id(api: Harness, method: str, template: str, body: Any) -> None:
    """Each route with its id replaced by one that breaks the id rules: a 4xx, the error shape, no write."""
    ids = alices_session(api)
    before = api.snapshot()
    bad = {**ids, "s": "bad%20id!", "m": "bad%20id!", "k": "bad%20id!", "r": "bad%20id!"}
    if "{" not in template.replace("{s}", ""):  # routes with the session id only
        path = fill(template, bad)
    else:
        path = fill(
            template, {**ids, "m": "bad%20id!", "k": "bad%20id!", "r": "bad%20id!", "u": "bad%20id!", "b": "bad%20id!"}
        )
    if "/checkpoints/" in template:
        path = fill(template, bad)
    reply = call(method, path, json_body=body)
    assert 400 <= reply.status < 500, (path, reply.status, reply.body[:200])
    assert set(reply.json()) == {"code", "message"}
    assert api.snapshot() == before
