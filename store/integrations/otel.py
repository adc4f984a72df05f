"""OpenTelemetry into a session's traces (`pip install 'agent-session-store[otel]'`).

`SessionSpanExporter(store, owner=...)` is an OpenTelemetry `SpanExporter`. Install it behind the SDK's
`BatchSpanProcessor` (which batches and exports on its own thread, so the agent never waits): every finished
span is stored as a trace event (`store.tools.otlp`'s shape) of the session its trace names (the
`gen_ai.conversation.id` or `session.id` attribute of any span of the trace, or of the resource), run = the
trace id. With an owner, the session id is the owner's own name for it (`scoped_id`, as the API and the
framework adapters name sessions), so a Strands agent's spans land in the session its session manager
writes. A failed export is logged (ids and counts, never span content) and counted in `failures`; it never
raises into the agent. (The OpenAI Agents SDK's own tracing: `store.integrations.openai_agents_tracing`.)"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from store.session_store import SessionStore
from store.tools.otlp import TraceWriter, plain_all, session_of

logger = logging.getLogger("agent_session_store.otel")

HELD_TRACES = 1000  # traces whose session is not known yet, held until a span of theirs names it
HELD_SECONDS = 300.0


def span_event(span: ReadableSpan) -> dict[str, Any]:
    """An SDK `ReadableSpan` as a trace event (OTLP's field names, ids in hex)."""
    context = span.get_span_context()
    if context is None:
        raise ValueError("a span without a context")
    parent = span.parent
    status = span.status
    event: dict[str, Any] = {
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_span_id": f"{parent.span_id:016x}" if parent is not None else None,
        "name": span.name,
        "kind": getattr(span.kind, "name", str(span.kind)),
        "start_time_unix_nano": span.start_time,
        "end_time_unix_nano": span.end_time,
        "attributes": plain_all(span.attributes),
        "status": {"code": getattr(status.status_code, "name", "UNSET"), "message": status.description or ""},
    }
    if span.events:
        event["events"] = [
            {
                "name": e.name,
                "time_unix_nano": e.timestamp,
                "attributes": plain_all(e.attributes),
            }
            for e in span.events
        ]
    return event


class SessionSpanExporter(SpanExporter):
    """An OpenTelemetry SpanExporter into the store (see the module). `create_sessions`: with an owner, a
    session the spans name that does not exist yet is created (else those spans fail to export and are
    counted)."""

    def __init__(self, store: SessionStore, *, owner: str | None = None, create_sessions: bool = False) -> None:
        self._writer = TraceWriter(store, owner, create_sessions)
        self._sessions: OrderedDict[str, str] = OrderedDict()  # trace id -> session, recent traces
        self._held: OrderedDict[str, tuple[float, list[dict[str, Any]]]] = OrderedDict()
        self._lock = threading.Lock()
        self.dropped = 0

    @property
    def failures(self) -> int:
        return self._writer.failures

    @property
    def exported(self) -> int:
        return self._writer.exported

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            ready = self._route([(span_event(s), getattr(s, "resource", None)) for s in spans])
        except Exception as exc:  # a span the SDK could not describe: never into the agent
            self._writer.failures += 1
            logger.warning("trace export failed before writing: %s", type(exc).__name__)
            return SpanExportResult.FAILURE
        ok = all([self._writer.write(session, run, events) for (session, run), events in ready.items()])
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def _route(self, items: list[tuple[dict[str, Any], Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """Events by (session, run): a trace's session from any of its spans (this batch's or an earlier
        one's); spans of a trace whose session is not known yet are held until one names it."""
        ready: dict[tuple[str, str], list[dict[str, Any]]] = {}
        now = time.monotonic()
        with self._lock:
            for event, resource in items:
                named = session_of(event["attributes"]) or session_of(dict(getattr(resource, "attributes", {}) or {}))
                if named is not None:
                    self._sessions[event["trace_id"]] = named
                    self._sessions.move_to_end(event["trace_id"])
                    while len(self._sessions) > HELD_TRACES:
                        self._sessions.popitem(last=False)
            for event, _ in items:
                trace = event["trace_id"]
                session = self._sessions.get(trace)
                if session is None:
                    self._held.setdefault(trace, (now, []))[1].append(event)
                    continue
                ready.setdefault((session, trace), []).append(event)
            for trace in [t for t in self._held if t in self._sessions]:
                _, events = self._held.pop(trace)
                ready.setdefault((self._sessions[trace], trace), [])[:0] = events
            while self._held and (
                len(self._held) > HELD_TRACES or now - next(iter(self._held.values()))[0] > HELD_SECONDS
            ):
                _, (_, events) = self._held.popitem(last=False)
                self.dropped += len(events)
                logger.warning("dropped %d spans of a trace that named no session", len(events))
        return ready

    def _oldest_held(self) -> float:
        return next(iter(self._held.values()))[0]

    def shutdown(self) -> None:
        """Nothing is buffered but held spans of traces that never named a session; they are dropped."""
        with self._lock:
            self.dropped += sum(len(e) for _, e in self._held.values())
            self._held.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
