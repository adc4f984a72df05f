"""Routes for trace events, and the OTLP/HTTP receiver."""

from __future__ import annotations

import json
import struct
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api import otlp_proto
from functions.api.context import body_bytes, caller
from functions.api.schemas import Batch, Events, Runs, TraceBatch
from store import InvalidInput, PayloadTooLarge, SessionNotFound
from store.core import codec
from store.core.validation import MAX_TRACE_EVENTS, MAX_TRACE_RUNS
from store.tools.otlp import otlp_events

OTLP_ROUTE = "/v1/traces"
PROTOBUF = "application/x-protobuf"
MAX_SPANS = MAX_TRACE_EVENTS  # spans one request may carry: 413 beyond (OTLP: do not retry; split the batch)
MAX_TRACES = MAX_TRACE_RUNS  # traces one request may store: one transaction a session
JSON_OBJECTS_PER_SPAN = 40  # JSON objects a span may bring (itself, status, attributes, events), while decoding
JSON_DEPTH = codec.MAX_DEPTH + 16  # OTLP's envelope around an attribute value

router = APIGatewayHttpRouter()


@router.post(
    "/sessions/<session_id>/traces/<run_id>",
    tags=["traces"],
    status_code=201,
    summary="Append a batch of events to a run",
)
def append_trace_events(session_id: str, run_id: str, body: TraceBatch) -> Response[Batch]:
    me = caller(router.current_event)
    batch = me.store.append_trace_events(session_id, run_id, body.events)
    return Response(201, body=Batch(batch=batch), content_type="application/json")


@router.get("/sessions/<session_id>/traces", tags=["traces"], summary="Events of one run, or of every run, in order")
def load_trace_events(session_id: str, run_id: Annotated[str | None, Query()] = None) -> Events:
    me = caller(router.current_event)
    return Events(items=me.store.load_trace_events(session_id, run_id))


@router.get("/sessions/<session_id>/trace-runs", tags=["traces"], summary="Run ids in the order they started")
def list_trace_runs(session_id: str) -> Runs:
    me = caller(router.current_event)
    return Runs(items=me.store.list_trace_runs(session_id))


@router.post(
    OTLP_ROUTE,
    tags=["traces"],
    summary="OTLP/HTTP trace export (JSON or protobuf): each span is stored in the session its trace names",
    description=(
        f"A request carries at most {MAX_SPANS:,} spans (413 beyond: split the batch) and stores at most "
        f"{MAX_TRACES} traces (the spans of further traces are rejected in partialSuccess); every trace of one "
        "session is written in one transaction. Under the costly-route throttle."
    ),
)
def otlp_traces():  # type: ignore[no-untyped-def]  # unannotated: the body is OTLP, JSON or protobuf
    """Any OpenTelemetry SDK or collector can send here (the exporter's endpoint: this API's URL + /v1/traces,
    with the bearer token). A trace's session is the `gen_ai.conversation.id` or `session.id` attribute of
    any of its spans (or of the resource), in the token owner's namespace; run = the trace id. Spans of a
    trace that names no session, or a session the owner does not have, are rejected and counted in the
    answer's partialSuccess, as OTLP specifies.

    What one request may cost is bounded before the work: at most MAX_SPANS spans (413 beyond, counted off
    the wire for protobuf and while decoding for JSON, so an oversized body is refused before it is built),
    at most MAX_TRACES traces stored (the spans of further traces are rejected in partialSuccess), and one
    write per session (`append_trace_runs`: every trace of a session in one transaction)."""
    me, event = caller(router.current_event), router.current_event
    protobuf = (event.headers.get("content-type") or "").split(";")[0].strip().lower() == PROTOBUF
    document = _decoded(body_bytes(event), protobuf)
    try:
        runs, rejected = otlp_events(document)
    except (TypeError, ValueError, AttributeError, OverflowError):
        raise InvalidInput("the body is not an OTLP ExportTraceServiceRequest") from None
    problems = ["spans whose trace names no session (gen_ai.conversation.id or session.id)"] if rejected else []
    kept = list(runs.items())
    if len(kept) > MAX_TRACES:
        beyond = sum(len(events) for _, events in kept[MAX_TRACES:])
        rejected += beyond
        problems.append(f"{beyond} spans of traces beyond the first {MAX_TRACES} of this request (send them again)")
        kept = kept[:MAX_TRACES]
    by_session: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for (session, run), events in kept:
        by_session.setdefault(session, {})[run] = events
    for session, session_runs in by_session.items():
        try:
            me.store.append_trace_runs(session, session_runs)
        except (SessionNotFound, InvalidInput) as exc:
            rejected += sum(len(events) for events in session_runs.values())
            problems.append(f"session {session!r}: {type(exc).__name__}")
    message = "; ".join(problems)[:1000]
    if protobuf:
        return Response(200, content_type=PROTOBUF, body=otlp_proto.export_response(rejected, message))
    partial = {"partialSuccess": {"rejectedSpans": rejected, "errorMessage": message}} if rejected else {}
    return Response(200, content_type="application/json", body=json.dumps(partial))


def _decoded(data: bytes, protobuf: bool) -> dict[str, Any]:
    """The request as OTLP/JSON's object: InvalidInput when it is not one, PayloadTooLarge when it holds more
    than MAX_SPANS spans (found before the spans are built)."""
    malformed = "the body is not an OTLP ExportTraceServiceRequest"
    try:
        if protobuf:
            if otlp_proto.count_spans(data, MAX_SPANS) > MAX_SPANS:
                raise PayloadTooLarge(f"at most {MAX_SPANS} spans a request: split the batch")
            document = otlp_proto.export_request(data)
        else:
            limit = MAX_SPANS * JSON_OBJECTS_PER_SPAN
            document = codec.loads(data or b"{}", "the OTLP body", max_depth=JSON_DEPTH, max_objects=limit)
    except (ValueError, TypeError, struct.error):
        raise InvalidInput(malformed) from None
    if not isinstance(document, dict):
        raise InvalidInput(malformed)
    if not protobuf and _span_count(document) > MAX_SPANS:
        raise PayloadTooLarge(f"at most {MAX_SPANS} spans a request: split the batch")
    return document


def _span_count(document: dict[str, Any]) -> int:
    try:
        return sum(
            len(scope.get("spans") or [])
            for resource in document.get("resourceSpans") or []
            for scope in resource.get("scopeSpans") or []
        )
    except (AttributeError, TypeError):
        raise InvalidInput("the body is not an OTLP ExportTraceServiceRequest") from None
