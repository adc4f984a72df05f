"""No message content, state, interrupt, record or artifact byte reaches a trace, a log line or a metric: a
marker is sent through every route (and through the cascade's records), successes and refusals alike, while
every trace call, every log record at every level and every metric is captured."""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from functions.api import context
from infra.local.apigw import LambdaContext
from infra.local.stack import lambda_image
from tests.api_client import call
from tests.conftest import Harness
from tests.contract.test_artifacts import put_through_url

MARKER = "SSN-078-05-1120-PRIVATE"


class Recorder:
    """A tracing provider that keeps everything a Tracer hands it."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.subsegments: list[str] = []

    @contextlib.contextmanager
    def in_subsegment(self, name: str | None = None, **_: Any) -> Iterator[Recorder]:
        self.subsegments.append(str(name))
        yield self

    def put_annotation(self, key: str, value: Any) -> None:
        self.seen.append(("annotation", key, value))

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        self.seen.append(("metadata", key, value, namespace))

    def add_exception(self, exception: BaseException, stack: Any, remote: bool = False) -> None:
        self.seen.append(("exception", repr(exception), stack))

    def text(self) -> str:
        return json.dumps(self.seen, default=repr)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(json.dumps({**record.__dict__, "message": record.getMessage()}, default=repr))


@pytest.fixture
def captured(dyn: Harness, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Recorder, Lines, list[Any]]]:
    from functions.api import app as api_app
    from functions.cascade import app as cascade_app

    recorder, lines, metrics = Recorder(), Lines(), []
    for module in (api_app, cascade_app):
        monkeypatch.setattr(module.tracer, "provider", recorder)
        for method in ("add_metric", "add_metadata", "add_dimension"):
            original = getattr(module.metrics, method)

            def record(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                metrics.append((args, kwargs))
                return _original(*args, **kwargs)

            monkeypatch.setattr(module.metrics, method, record)
    # every level of the functions' own loggers and the root's (an operator may set DEBUG); the SDK's loggers
    # are left as the functions set them
    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in ("agent-session-store", "store"))]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(lines)
        lg.setLevel(logging.DEBUG)
    context.use_store(dyn.store)
    try:
        yield recorder, lines, metrics
    finally:
        context.use_store(None)
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(lines)
            lg.setLevel(level)


def nested(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


def every_route(dyn: Harness) -> tuple[list[int], set[tuple[str, str]]]:
    """Every route once (most more than once), carrying the marker wherever a caller's data goes; returns
    the statuses and the routes called."""
    m = MARKER
    statuses: list[int] = []
    called: set[tuple[str, str]] = set()

    def go(method: str, path: str, **kwargs: Any) -> Any:
        reply = call(method, path, **kwargs)
        statuses.append(reply.status)
        called.add((method, path))
        return reply

    s = "/sessions/s1"
    go("POST", "/sessions", json_body={"session_id": "s1", "title": m, "metadata": {"m": m}})
    go("PATCH", s, json_body={"title": m, "metadata": {"m": m}})
    go("GET", s)
    go("GET", "/sessions")
    msg = {"role": "user", "content": [{"type": "text", "text": m}], "metadata": {"m": m}, "extra": m}
    mid = go("POST", f"{s}/messages", json_body={"messages": [msg]}, headers={"idempotency-key": "k1"}).json()
    mid = mid["items"][0]["id"]
    go("POST", f"{s}/messages", json_body={"messages": [msg], "expected_seq": 0})  # 409, with the marker sent
    go("GET", f"{s}/messages")
    go("GET", f"{s}/last-messages")
    go("GET", f"{s}/messages/{mid}")
    go("PUT", f"{s}/messages/{mid}/usage", json_body={"usage": {"input_tokens": 3}})
    go("POST", f"{s}/messages/{mid}/compaction")
    go("GET", f"{s}/compaction")
    go("PUT", f"{s}/state", json_body={"state": {"m": m}})
    go("GET", f"{s}/state")
    go("POST", f"{s}/full", json_body={"messages": [msg], "state": {"m": m}})
    go("GET", f"{s}/full")
    go("PUT", f"{s}/interrupt", json_body={"interrupt": {"m": m}})
    go("GET", f"{s}/interrupt")
    go("GET", f"{s}/overview")
    go("DELETE", f"{s}/interrupt")
    go("PUT", f"{s}/records/runs", json_body={"records": [m]})
    go("GET", f"{s}/records/runs")
    for key in ("session/s1", "run/r1"):
        go("PUT", f"/checkpoints/{key}", json_body={"data": {"m": m}})
        go("GET", f"/checkpoints/{key}")
        go("DELETE", f"/checkpoints/{key}")
    go("PUT", f"{s}/artifacts/a.txt", body=m.encode(), headers={"content-type": "text/plain"})
    go("GET", f"{s}/artifacts/a.txt", query={"inline": "true"})
    go("GET", f"{s}/artifacts/a.txt")
    go("GET", f"{s}/artifacts/a.txt/versions")
    go("GET", f"{s}/artifacts")
    up = go("POST", f"{s}/artifact-uploads", json_body={"name": "b.txt", "metadata": {"k": m}}).json()
    put_through_url(dyn, up["url"], m.encode(), up["headers"])
    go("POST", f"{s}/artifact-uploads/{up['upload_id']}/confirm", json_body={"name": "b.txt"})
    go("DELETE", f"{s}/artifacts/a.txt")
    go("POST", f"{s}/fork", json_body={"session_id": "f1", "title": m, "metadata": {"m": m}, "state": {"m": m}})
    go("POST", f"{s}/fork", json_body={"at_seq": 99, "title": m})  # 400, with the marker sent
    go("POST", f"{s}/rewind", json_body={"to_seq": 1, "branch": "b1"})
    go("GET", f"{s}/branches")
    go("GET", f"{s}/messages?branch=b1")
    go("POST", f"{s}/branches/b1/restore", json_body={"keep_as": "b2"})
    go("DELETE", f"{s}/branches/b2")
    go("POST", f"{s}/traces/run-1", json_body={"events": [{"m": m}]})
    go("GET", f"{s}/traces")
    go("GET", f"{s}/trace-runs")
    go("GET", f"{s}/memory-runs")
    go("GET", f"{s}/context", query={"q": m, "budget": "500"})
    go("GET", "/messages/search", query={"q": m, "session_id": "s1"})
    go("GET", "/messages/search", query={"q": m})
    go("POST", f"{s}/memory-runs", json_body={"strategies": ["facts"]})  # 400: no model on this stack
    attributes = [{"key": "session.id", "value": {"stringValue": "s1"}}, {"key": "m", "value": {"stringValue": m}}]
    span = {"traceId": "a" * 32, "spanId": "b" * 16, "name": m, "startTimeUnixNano": "1", "attributes": attributes}
    go("POST", "/v1/traces", json_body={"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    go("GET", "/search", query={"q": m})
    go("POST", "/memories", json_body={"namespace": ["notes", m], "key": m, "value": {"text": m}, "ttl_seconds": 60})
    ns = json.dumps(["notes", m])
    go("GET", "/memories/item", query={"namespace": ns, "key": m, "refresh_ttl": "true"})
    go("GET", "/memories/search", query={"q": m, "prefix": ns, "filter": json.dumps({"text": m})})
    go("GET", "/memories/namespaces", query={"prefix": '["notes"]'})
    go("GET", "/memories/search", query={"q": m, "mode": "semantic"})  # 400: no embedder, with the marker sent
    go("PATCH", "/memories/item", query={"namespace": ns, "key": m}, json_body={"text": f"{m} corrected"})
    go("DELETE", "/memories/item", query={"namespace": ns, "key": m})
    go("DELETE", "/memories")
    go("PUT", "/memories/extraction", json_body={"enabled": False, "strategies": ["facts"]})
    go("GET", "/memories/extraction")
    go("PUT", "/owner/records/settings", json_body={"records": [m]})
    go("GET", "/owner/records/settings")
    # refusals that carry the marker: bad JSON values, a bad id, a body too deep, unknown fields
    raw = ('{"state": {"m": "' + m + '", "bad": "\\ud800"}}').encode()
    go("PUT", f"{s}/state", body=raw, headers={"content-type": "application/json"})
    go("PUT", f"{s}/state", json_body={"state": {"m": m, "deep": nested(m, 100)}})
    go("POST", f"{s}/messages", json_body={"messages": [{"role": m * 10, "content": m}]})
    go("PUT", f"{s}/records/{m}", json_body={"records": [m]})
    go("PATCH", s, json_body={"title": m, "unknown": m})
    go("GET", "/health", owner=None)
    go("DELETE", s)
    return statuses, called


def documented_routes() -> list[tuple[str, re.Pattern[str]]]:
    doc = json.loads(Path("docs/openapi.json").read_text(encoding="utf-8"))
    return [
        (method.upper(), re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"))
        for path, operations in doc["paths"].items()
        for method in operations
    ]


def test_no_user_content_in_traces_logs_or_metrics(
    dyn: Harness, captured: tuple[Recorder, Lines, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder, lines, metrics = captured
    statuses, called = every_route(dyn)
    assert {200, 201, 204, 302} <= set(statuses) and {400, 409, 422} <= set(statuses)
    missed = [(m, p.pattern) for m, p in documented_routes() if not any(c[0] == m and p.match(c[1]) for c in called)]
    assert missed == [], f"routes the marker was not sent through: {missed}"

    # an unexpected error whose message quotes a request's data: logged by type and place only
    from functions.api import sessions as routes

    def explode(*_: Any, **__: Any) -> Any:
        raise RuntimeError(f"bug while handling {MARKER}")

    from functions.api.context import Caller

    broken: Any = type("Broken", (), {"get_session": explode})()
    monkeypatch.setattr(routes, "caller", lambda event: Caller("alice", broken))
    assert call("GET", "/sessions/s2").status == 500

    # the cascade, fed records that carry the marker (a session's items as the stream shows them)
    from functions.cascade.app import lambda_handler as cascade

    sid = dyn.store.create_session("alice", title=MARKER).id
    dyn.store.save_state(sid, {"m": MARKER})
    items = [i for i in dyn.snapshot()[0] if i["pk"]["S"] == f"S#{sid}"]
    records = [
        {"eventName": "REMOVE", "dynamodb": {"SequenceNumber": str(n), "OldImage": lambda_image(item)}}
        for n, item in enumerate(items)
    ]
    records.append({"eventName": "REMOVE", "dynamodb": {"SequenceNumber": "bad", "OldImage": {"title": MARKER}}})
    assert cascade({"Records": records}, LambdaContext())["batchItemFailures"] == [{"itemIdentifier": "bad"}]

    assert any("lambda_handler" in name for name in recorder.subsegments), "the recorder saw no handler"
    assert any("handle_record" in name for name in recorder.subsegments), "the recorder saw no record"
    assert lines.records, "nothing was logged: the capture is not wired"
    assert MARKER not in recorder.text(), [s for s in recorder.seen if MARKER in json.dumps(s, default=repr)][:3]
    leaks = [r for r in lines.records if MARKER in r]
    assert leaks == [], leaks[:3]
    assert MARKER not in json.dumps(metrics, default=repr)
