"""OTLP's trace shape, read and written without OpenTelemetry installed (the API's `POST /v1/traces` runs
in the Lambda bundle): OTLP/JSON to trace events by (session, run) and back, and the session a span names.

Events keep OTLP's names: `trace_id`, `span_id`, `parent_span_id`, `name`, `kind`, `start_time_unix_nano`,
`end_time_unix_nano`, `attributes` (a flat object), `status` ({code: UNSET|OK|ERROR, message}), `events`."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from typing import Any

from store.core.scoped_ids import scoped_id
from store.errors import SessionNotFound, StoreError
from store.session_store import SessionStore

logger = logging.getLogger("agent_session_store.otel")

SESSION_ATTRIBUTES = ("gen_ai.conversation.id", "session.id")
BATCH = 500  # events per append (the store's MAX_TRACE_EVENTS is larger)
TRACE_ID = re.compile(r"[0-9a-f]{32}")


def plain(value: Any) -> Any:
    """An attribute value as JSON: str, bool, int, float, or a list of them."""
    if isinstance(value, str | bool | int | float) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)


def plain_all(attributes: Any) -> dict[str, Any]:
    """Attributes (a mapping, or None) as a JSON object."""
    return {str(k): plain(v) for k, v in (attributes or {}).items()}


def session_of(attributes: dict[str, Any]) -> str | None:
    """The session a span's (or resource's) attributes name, if any."""
    for key in SESSION_ATTRIBUTES:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def otlp_value(value: Any) -> Any:
    """An OTLP/JSON AnyValue as a plain value."""
    if not isinstance(value, dict) or not value:
        return value
    kind, inner = next(iter(value.items()))
    if kind == "arrayValue":
        return [otlp_value(v) for v in (inner or {}).get("values", [])]
    if kind == "kvlistValue":
        return {kv.get("key"): otlp_value(kv.get("value")) for kv in (inner or {}).get("values", [])}
    if kind == "intValue":
        return int(inner)
    return inner


def _attrs(raw: Any) -> dict[str, Any]:
    return {str(kv.get("key")): otlp_value(kv.get("value")) for kv in raw or [] if isinstance(kv, dict)}


STATUS_NAMES = {0: "UNSET", 1: "OK", 2: "ERROR", "STATUS_CODE_UNSET": "UNSET", "STATUS_CODE_OK": "OK"}
KIND_NAMES = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def _status(code: Any) -> str:
    return STATUS_NAMES.get(code, str(code).removeprefix("STATUS_CODE_"))


def _otlp_event(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": raw.get("name"),
        "time_unix_nano": int(raw.get("timeUnixNano") or 0),
        "attributes": _attrs(raw.get("attributes")),
    }


def otlp_events(document: dict[str, Any]) -> tuple[dict[tuple[str, str], list[dict[str, Any]]], int]:
    """An OTLP/JSON ExportTraceServiceRequest as events by (session, run), and the count of spans that name
    no session (in the span's, any span of its trace's, or the resource's attributes)."""
    spans: list[tuple[dict[str, Any], str | None]] = []
    for resource_spans in document.get("resourceSpans") or []:
        resource = _attrs((resource_spans.get("resource") or {}).get("attributes"))
        for scope in resource_spans.get("scopeSpans") or []:
            for raw in scope.get("spans") or []:
                event = _span_event(raw)
                spans.append((event, session_of(resource)))
    by_trace: dict[str, str] = {}
    for event, from_resource in spans:
        named = session_of(event["attributes"]) or from_resource
        if named is not None:
            by_trace.setdefault(event["trace_id"], named)
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    unnamed = 0
    for event, _ in spans:
        session = by_trace.get(event["trace_id"])
        if session is None:
            unnamed += 1
            continue
        out.setdefault((session, event["trace_id"]), []).append(event)
    return out, unnamed


def _span_event(raw: dict[str, Any]) -> dict[str, Any]:
    """One OTLP/JSON span as the event the store keeps (ids lower-cased, kind and status by name, times as
    integers, attributes and span events as plain values)."""
    status = raw.get("status") or {}
    code = status.get("code", 0)
    kind = raw.get("kind", 0)
    event: dict[str, Any] = {
        "trace_id": str(raw.get("traceId", "")).lower(),
        "span_id": str(raw.get("spanId", "")).lower(),
        "parent_span_id": str(raw.get("parentSpanId") or "").lower() or None,
        "name": str(raw.get("name", "")),
        "kind": KIND_NAMES.get(kind, str(kind).removeprefix("SPAN_KIND_")),
        "start_time_unix_nano": int(raw.get("startTimeUnixNano") or 0),
        "end_time_unix_nano": int(raw.get("endTimeUnixNano") or 0),
        "attributes": _attrs(raw.get("attributes")),
        "status": {
            "code": STATUS_NAMES.get(code, str(code).removeprefix("STATUS_CODE_")),
            "message": status.get("message", ""),
        },
    }
    if raw.get("events"):
        event["events"] = [
            {
                "name": e.get("name"),
                "time_unix_nano": int(e.get("timeUnixNano") or 0),
                "attributes": _attrs(e.get("attributes")),
            }
            for e in raw["events"]
        ]
    return event


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": "" if value is None else str(value)}


def otlp_document(session_id: str, runs: Iterable[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Trace events as an OTLP/JSON ExportTraceServiceRequest (what Langfuse, Phoenix or a collector import).
    Events stored in OTLP's shape come back as they were; others get ids and times read as
    `store.tools.trace_view` reads them."""
    from store.tools.trace_view import spans as read_spans

    out_spans = []
    for run, events in runs:
        trace_id = run if TRACE_ID.fullmatch(run) else hashlib.sha256(run.encode()).hexdigest()[:32]
        origin = _origin(events)  # once per run; the views are in the events' own order, one each
        for n, (event, view) in enumerate(zip(events, read_spans(events, in_start_order=False), strict=True)):
            start = event.get("start_time_unix_nano")
            end = event.get("end_time_unix_nano")
            if not isinstance(start, int):
                start, end = int((origin + view.start) * 1e9), int((origin + view.end) * 1e9)
            raw_status = event.get("status")
            status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
            code = {"OK": 1, "ERROR": 2, "UNSET": 0}.get(str(status.get("code")), 2 if view.error else 0)
            kind = {name: number for number, name in KIND_NAMES.items()}.get(str(event.get("kind")), 1)
            span = {
                "traceId": str(event.get("trace_id") or trace_id),
                "spanId": str(event.get("span_id") or f"{n + 1:016x}"),
                "name": view.name,
                "kind": kind,
                "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(end if isinstance(end, int) else start),
                "attributes": [{"key": k, "value": _any_value(v)} for k, v in view.attributes.items()],
                "status": {"code": code, "message": str(status.get("message") or "")},
            }
            parent = event.get("parent_span_id") or view.parent_id
            if parent:
                span["parentSpanId"] = str(parent)
            out_spans.append(span)
    resource = {"attributes": [{"key": "session.id", "value": {"stringValue": session_id}}]}
    scope = {"scope": {"name": "agent-session-store"}, "spans": out_spans}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [scope]}]}


def _origin(events: list[dict[str, Any]]) -> float:
    """The earliest time among events in the plain shapes, in epoch seconds (0 when none has one)."""
    from store.tools.trace_view import times_of

    starts = [s for s, _ in (times_of(e) for e in events) if s is not None]
    return min(starts) if starts else 0.0


class TraceWriter:
    """Appends a run's events to a session (in the owner's namespace when there is one), a batch at a time;
    counts failures and logs them without content, never raising: what the exporter and the OpenAI Agents
    SDK's processor share."""

    def __init__(self, store: SessionStore, owner: str | None, create_sessions: bool) -> None:
        self.store = store
        self.owner = owner
        self.create_sessions = create_sessions and owner is not None
        self.failures = 0
        self.exported = 0

    def store_id(self, session: str) -> str:
        return scoped_id(self.owner, session) if self.owner is not None else session

    def write(self, session: str, run: str, events: list[dict[str, Any]]) -> bool:
        sid = self.store_id(session)
        try:
            for start in range(0, len(events), BATCH):
                chunk = events[start : start + BATCH]
                try:
                    self.store.append_trace_events(sid, run, chunk, owner=self.owner)
                except SessionNotFound:
                    if not self.create_sessions or self.owner is None:
                        raise
                    self.store.create_session(self.owner, session_id=sid)
                    self.store.append_trace_events(sid, run, chunk, owner=self.owner)
            self.exported += len(events)
            return True
        except (StoreError, OSError) as exc:
            self.failures += 1
            logger.warning("trace export failed (run=%s, events=%d): %s", run, len(events), type(exc).__name__)
            return False
