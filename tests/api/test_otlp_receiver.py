"""POST /v1/traces: the OpenTelemetry SDK's own OTLP/HTTP exporter (protobuf), and OTLP/JSON, against the
local stack; spans land in the session their trace names, in the token owner's namespace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from functions.api import otlp_proto
from functions.api.traces import MAX_SPANS, MAX_TRACES
from infra.local.stack import LocalStack, local_stack
from store import SessionStore
from store.backends.http import HttpBackend
from tests.api.test_local_stack import http


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(port=0, cascade=False, prefix="otlp") as running:
        yield running


def test_the_sdks_otlp_exporter_sends_protobuf_that_lands_in_the_session(stack: LocalStack) -> None:
    token = stack.token("olga")
    olga = SessionStore(backend=HttpBackend(stack.api_url, token))
    olga.create_session("olga", session_id="agent-7")
    exporter = OTLPSpanExporter(endpoint=f"{stack.api_url}/v1/traces", headers={"Authorization": f"Bearer {token}"})
    provider = TracerProvider(resource=Resource.create({"service.name": "my-agent", "session.id": "agent-7"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("my-agent")
    with tracer.start_as_current_span("invoke_agent helper") as root:
        root.set_attribute("gen_ai.usage.input_tokens", 42)
        with tracer.start_as_current_span("execute_tool search") as child:
            child.set_attribute("tool.args", ["a", "b"])
            child.set_status(Status(StatusCode.ERROR, "tool failed"))
    provider.shutdown()
    (run,) = olga.list_trace_runs("agent-7")
    assert run == f"{root.get_span_context().trace_id:032x}"
    events = {e["name"]: e for e in olga.load_trace_events("agent-7", run)}
    assert set(events) == {"invoke_agent helper", "execute_tool search"}
    tool = events["execute_tool search"]
    assert tool["parent_span_id"] == events["invoke_agent helper"]["span_id"]
    assert tool["status"] == {"code": "ERROR", "message": "tool failed"} and tool["attributes"]["tool.args"] == [
        "a",
        "b",
    ]
    assert events["invoke_agent helper"]["attributes"]["gen_ai.usage.input_tokens"] == 42
    assert tool["end_time_unix_nano"] > tool["start_time_unix_nano"] > 0


def test_otlp_json_and_what_is_rejected(stack: LocalStack) -> None:
    token = stack.token("pia")
    SessionStore(backend=HttpBackend(stack.api_url, token)).create_session("pia", session_id="mine")

    def span(trace: str, session: str | None) -> dict[str, object]:
        attrs = [{"key": "session.id", "value": {"stringValue": session}}] if session else []
        return {
            "traceId": trace,
            "spanId": "00f067aa0ba902b7",
            "name": "step",
            "attributes": attrs,
            "startTimeUnixNano": "1",
            "endTimeUnixNano": "2",
        }

    body = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [span("a" * 32, "mine"), span("b" * 32, "not-mine"), span("c" * 32, None)]}]}
        ]
    }
    status, _, answer = http("POST", f"{stack.api_url}/v1/traces", token=token, body=body)
    assert status == 200
    partial = json.loads(answer)["partialSuccess"]
    assert partial["rejectedSpans"] == 2 and "not-mine" in partial["errorMessage"]
    # another owner's session of the same name is not reachable
    other = stack.token("quinn")
    status, _, answer = http(
        "POST",
        f"{stack.api_url}/v1/traces",
        token=other,
        body={"resourceSpans": [{"scopeSpans": [{"spans": [span("d" * 32, "mine")]}]}]},
    )
    assert status == 200 and json.loads(answer)["partialSuccess"]["rejectedSpans"] == 1
    assert http("POST", f"{stack.api_url}/v1/traces", body=body)[0] == 401  # a token is needed


@pytest.mark.parametrize(
    "body",
    [b"\x0a\xff\xff\xff\xff\x0f", b"\x0a\x05abc", b"\x0f", b"\x0a\x02\x12\x00" * 3 + b"\x0a\x80"],
)
def test_malformed_protobuf_is_a_clear_400(stack: LocalStack, body: bytes) -> None:
    headers = {"Content-Type": "application/x-protobuf"}
    status, _, answer = http("POST", f"{stack.api_url}/v1/traces", token=stack.token("r"), raw=body, headers=headers)
    assert status == 400 and json.loads(answer)["code"] == "invalid_input"


def test_protobuf_nesting_is_bounded() -> None:
    value = b"\x0a\x01x"  # AnyValue{string_value: "x"}
    for _ in range(otlp_proto.MAX_DEPTH + 5):
        array = b"\x0a" + bytes([len(value)]) + value if len(value) < 128 else None
        if array is None:
            break
        value = b"\x2a" + bytes([len(array)]) + array  # AnyValue{array_value: {values: [value]}}
    with pytest.raises(ValueError):
        otlp_proto.any_value(value * 1, depth=otlp_proto.MAX_DEPTH)
    assert otlp_proto.export_response(0, "") == b""
    assert otlp_proto.export_response(3, "x") == b"\x0a\x05\x08\x03\x12\x01x"


# ---------------------------------------------------------------- what one request may cost


def _post(stack: LocalStack, token: str, data: bytes, kind: str) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/x-protobuf" if kind == "protobuf" else "application/json"}
    status, _, answer = http("POST", f"{stack.api_url}/v1/traces", token=token, raw=data, headers=headers)
    return status, answer


def test_a_body_of_more_spans_than_a_request_may_hold_is_refused_before_it_is_built(stack: LocalStack) -> None:
    """4 MB of empty spans (`\\x12\\x00` repeated), in protobuf and as JSON, is a 413 at once: the spans are
    counted off the wire, or while decoding, and refused past MAX_SPANS (it took 26 s and 1.3 GB before)."""
    token = stack.token("flood")
    inner = b"\x12\x00" * 2_000_000  # ScopeSpans{spans: [Span{}] * 2,000,000}
    body = _ld(1, _ld(2, inner))
    status, answer = _post(stack, token, body, "protobuf")
    assert status == 413 and json.loads(answer)["code"] == "payload_too_large"
    empty = b'{"resourceSpans":[{"scopeSpans":[{"spans":[' + b",".join([b"{}"] * 1_000_000) + b"]}]}]}"
    status, answer = _post(stack, token, empty, "json")
    assert status == 413 and "JSON objects" in json.loads(answer)["message"]
    just_over: dict[str, Any] = {"resourceSpans": [{"scopeSpans": [{"spans": [{}] * (MAX_SPANS + 1)}]}]}
    status, answer = _post(stack, token, json.dumps(just_over).encode(), "json")
    assert status == 413 and f"at most {MAX_SPANS} spans" in json.loads(answer)["message"]


def test_the_traces_of_a_session_are_one_write_and_traces_past_the_limit_are_rejected(stack: LocalStack) -> None:
    token = stack.token("tessa")
    tessa = SessionStore(backend=HttpBackend(stack.api_url, token))
    tessa.create_session("tessa", session_id="busy")
    spans = [
        {
            "traceId": f"{t:032x}",
            "spanId": f"{t + 1:016x}",
            "name": f"turn {t}",
            "attributes": [{"key": "session.id", "value": {"stringValue": "busy"}}],
            "startTimeUnixNano": "1",
            "endTimeUnixNano": "2",
        }
        for t in range(MAX_TRACES + 4)
    ]
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
    writes: list[str] = []
    client = stack.dynamodb

    def count(model: object, **_: object) -> None:
        writes.append(getattr(model, "name", ""))

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", count)
    try:
        status, answer = _post(stack, token, body, "json")
    finally:
        client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", count)
    assert status == 200
    partial = json.loads(answer)["partialSuccess"]
    assert partial["rejectedSpans"] == 4 and f"beyond the first {MAX_TRACES}" in partial["errorMessage"]
    assert len(tessa.list_trace_runs("busy")) == MAX_TRACES
    assert writes == ["TransactWriteItems"]  # every trace of the session numbered in one transaction


@pytest.mark.parametrize(
    "body",
    [
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"'
        + b"a" * 32
        + b'","startTimeUnixNano":Infinity}]}]}]}',
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + b"a" * 32 + b'","startTimeUnixNano":1e999}]}]}]}',
        b'{"resourceSpans":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":' + b"[" * 3_000 + b"]" * 3_000 + b"}]}]}]}",
        b'{"resourceSpans": [1, 2]}',
        b"\xff\xfe",
    ],
)
def test_hostile_otlp_json_is_a_400(stack: LocalStack, body: bytes) -> None:
    status, answer = _post(stack, stack.token("r"), body, "json")
    assert status == 400 and json.loads(answer)["code"] in ("invalid_input", "invalid_request"), answer[:200]


def _ld(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return otlp_proto.length_delimited(number, payload)


def _request(span: bytes) -> bytes:
    """ExportTraceServiceRequest{resource_spans: [{scope_spans: [{spans: [span]}]}]}."""
    return _ld(1, _ld(2, _ld(2, span)))


@pytest.mark.parametrize(
    "body",
    [
        _ld(1, _ld(2, b"\x10\x01")),  # ScopeSpans.spans (a message) sent as a varint
        _request(b"\x09" + b"\x00" * 8),  # Span.trace_id (bytes) sent as a fixed64
        _request(b"\x38\x05"),  # Span.start_time_unix_nano (fixed64) sent as a varint
        _request(_ld(9, _ld(1, b"k") + _ld(2, _ld(4, b"ab")))),  # AnyValue.double_value sent length-delimited
        _request(_ld(9, _ld(1, b"k") + _ld(2, b"\x28\x01"))),  # AnyValue.array_value sent as a varint
        _request(_ld(15, b"\x1a\x01x")),  # Status.code (an enum) sent length-delimited
    ],
)
def test_protobuf_fields_of_the_wrong_wire_type_are_a_400(stack: LocalStack, body: bytes) -> None:
    status, answer = _post(stack, stack.token("r"), body, "protobuf")
    assert status == 400 and json.loads(answer)["code"] == "invalid_input", answer[:200]


def test_unknown_protobuf_fields_are_skipped(stack: LocalStack) -> None:
    body = _request(_ld(1, b"\xab" * 16) + b"\x60\x07") + b"\x28\x01"  # Span.dropped_events_count, field 5
    status, answer = _post(stack, stack.token("r"), body, "protobuf")
    assert status == 200  # read; the span names no session: rejected in partial success, as OTLP allows
    assert answer.startswith(b"\x0a") and b"\x08\x01" in answer  # partial_success{rejected_spans: 1, ...}
