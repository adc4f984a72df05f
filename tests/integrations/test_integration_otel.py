"""OpenTelemetry into a session's traces: a Strands agent's own spans through the exporter, a real OTLP/HTTP
exporter (protobuf and JSON) against the API's POST /v1/traces, and the OpenAI Agents SDK's processor."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from bench.strands_models import ScriptModel
from store import SessionStore
from store.core.scoped_ids import scoped_id
from store.integrations.otel import SessionSpanExporter
from store.integrations.strands import session_manager
from store.tools.cli import main
from store.tools.otlp import otlp_document, otlp_events
from store.tools.trace_view import spans
from tests.conftest import Harness


class Switch(SpanExporter):
    """The process's one TracerProvider exports to whichever exporter a test installs."""

    target: SpanExporter | None = None

    def export(self, batch: Any) -> SpanExportResult:
        return self.target.export(batch) if self.target is not None else SpanExportResult.SUCCESS


SWITCH = Switch()


@pytest.fixture
def exporting() -> Iterator[Switch]:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # OpenTelemetry lets a process set its provider once
        provider = TracerProvider(resource=Resource.create({"service.name": "agent-tests"}))
        trace.set_tracer_provider(provider)
        provider.add_span_processor(SimpleSpanProcessor(SWITCH))
    yield SWITCH
    SWITCH.target = None


class ToolThenAnswer(ScriptModel):
    """First asks for the `weather` tool, then answers."""

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        self.calls += 1
        yield {"messageStart": {"role": "assistant"}}
        if self.calls == 1:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": "weather"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"city": "Lyon"}'}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        yield {"contentBlockDelta": {"delta": {"text": "Sunny in Lyon."}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def test_a_strands_agents_own_spans_land_in_its_session(harness: Harness, exporting: Switch) -> None:
    from strands import Agent, tool

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    exporter = SessionSpanExporter(harness.store, owner="ada")
    exporting.target = exporter
    agent = Agent(
        model=ToolThenAnswer(),
        tools=[weather],
        session_manager=session_manager("otel-trip", harness.store, owner="ada"),
        trace_attributes={"session.id": "otel-trip"},
        callback_handler=None,
    )
    agent("What is the weather in Lyon?")
    sid = scoped_id("ada", "otel-trip")
    runs = harness.store.list_trace_runs(sid, owner="ada")
    assert len(runs) == 1 and len(runs[0]) == 32  # one run: the agent invocation's trace id
    events = harness.store.load_trace_events(sid, runs[0], owner="ada")
    names = [e["name"] for e in events]
    assert any(n.startswith("invoke_agent") for n in names)
    assert any(n.startswith("execute_tool weather") for n in names)
    assert sum(n.startswith("chat") for n in names) == 2 and sum(n == "execute_event_loop_cycle" for n in names) >= 2
    assert exporter.failures == 0 and exporter.dropped == 0
    # as the timeline reads them: nested under the agent span, every span with a duration
    view = {s.name: s for s in spans(events)}
    root = next(s for n, s in view.items() if n.startswith("invoke_agent"))
    tool_span = next(s for n, s in view.items() if n.startswith("execute_tool"))
    assert root.depth == 0 and tool_span.depth > root.depth and root.duration >= tool_span.duration > 0


def test_an_export_that_fails_is_counted_and_never_raises(exporting: Switch) -> None:
    store = SessionStore.memory()
    exporter = SessionSpanExporter(store, owner="ada")  # the session does not exist: the append fails
    exporting.target = exporter
    with trace.get_tracer("t").start_as_current_span("step", attributes={"session.id": "absent"}):
        pass
    assert exporter.failures == 1
    creating = SessionSpanExporter(store, owner="ada", create_sessions=True)
    exporting.target = creating
    with trace.get_tracer("t").start_as_current_span("step", attributes={"gen_ai.conversation.id": "made"}):
        pass
    assert creating.failures == 0 and len(store.list_trace_runs(scoped_id("ada", "made"))) == 1


def test_spans_of_a_trace_are_held_until_one_names_the_session(exporting: Switch) -> None:
    store = SessionStore.memory()
    store.create_session("ada", session_id=scoped_id("ada", "late"))
    exporter = SessionSpanExporter(store, owner="ada")
    exporting.target = exporter
    tracer = trace.get_tracer("t")
    # the child ends (and is exported) first, naming nothing
    with tracer.start_as_current_span("root", attributes={"session.id": "late"}), tracer.start_as_current_span("c"):
        pass
    (run,) = store.list_trace_runs(scoped_id("ada", "late"))
    assert sorted(e["name"] for e in store.load_trace_events(scoped_id("ada", "late"), run)) == ["c", "root"]


def test_otlp_json_round_trips_through_the_event_shape() -> None:
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "session.id", "value": {"stringValue": "s1"}}]},
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "name": "chat",
                                "kind": 3,
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000500000000",
                                "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}}],
                                "status": {"code": 2, "message": "boom"},
                            }
                        ]
                    }
                ],
            }
        ]
    }
    runs, unnamed = otlp_events(document)
    assert unnamed == 0 and list(runs) == [("s1", "0af7651916cd43dd8448eb211c80319c")]
    (event,) = runs[("s1", "0af7651916cd43dd8448eb211c80319c")]
    assert event["attributes"] == {"gen_ai.usage.input_tokens": 12} and event["status"]["code"] == "ERROR"
    (span,) = spans([event])
    assert span.duration == pytest.approx(0.5) and span.error and span.tokens == {"in": 12}
    back = otlp_document("s1", [("0af7651916cd43dd8448eb211c80319c", [event])])
    again, _ = otlp_events(back)
    assert again == runs


def test_the_openai_agents_sdks_traces_land_in_the_session(harness: Harness) -> None:
    from agents.tracing import trace as agents_trace
    from agents.tracing.create import custom_span

    from store.integrations.openai_agents_tracing import SessionTracingProcessor

    harness.store.create_session("ada", session_id=scoped_id("ada", "oa-1"))
    processor = SessionTracingProcessor(harness.store, owner="ada")
    from agents import set_tracing_disabled
    from agents.tracing import set_trace_processors

    set_trace_processors([processor])  # in place of the SDK's exporter to OpenAI (no network here)
    set_tracing_disabled(False)  # the adapter's own tests turn the SDK's tracing off for the process
    try:
        with agents_trace("support", group_id="oa-1"), custom_span("lookup", data={"k": "v"}):
            pass
        processor.force_flush()
    finally:
        set_tracing_disabled(True)
        set_trace_processors([])
        processor.shutdown()
    runs = harness.store.list_trace_runs(scoped_id("ada", "oa-1"), owner="ada")
    assert len(runs) == 1
    (event,) = harness.store.load_trace_events(scoped_id("ada", "oa-1"), runs[0], owner="ada")
    assert event["name"] == "custom lookup" and event["start"] and event["end"]
    assert processor.failures == 0


def test_agent_store_traces_export_writes_otlp_json() -> None:
    store = SessionStore.memory()
    store.create_session("ada", session_id=scoped_id("ada", "ex"))
    plain = [{"name": "step", "start": 10.0, "end": 10.25}]
    store.append_trace_events(scoped_id("ada", "ex"), "run-a", plain)
    out = io.StringIO()
    assert main(["traces", "export", "ex", "--owner", "ada"], store=store, out=out) == 0
    document = json.loads(out.getvalue())
    (span,) = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert span["name"] == "step" and int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"]) == 250_000_000
    assert len(span["traceId"]) == 32 and len(span["spanId"]) == 16
