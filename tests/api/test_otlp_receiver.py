"""POST /v1/traces: the OpenTelemetry SDK's own OTLP/HTTP exporter (protobuf), and OTLP/JSON, against the
local stack; spans land in the session their trace names, in the token owner's namespace."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from functions.api import otlp_proto
from infra.local.stack import LocalStack, local_stack
from store import SessionStore
from store.http_backend import HttpBackend
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
