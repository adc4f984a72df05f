"""Routes for trace events, and the OTLP/HTTP receiver."""

from __future__ import annotations

import json
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api import otlp_proto
from functions.api.context import body_bytes, caller, store
from functions.api.schemas import Batch, Events, Runs, TraceBatch
from store import InvalidInput, SessionNotFound
from store.otlp import BATCH, otlp_events

OTLP_ROUTE = "/v1/traces"
PROTOBUF = "application/x-protobuf"

router = APIGatewayHttpRouter()


@router.post(
    "/sessions/<session_id>/traces/<run_id>",
    tags=["traces"],
    status_code=201,
    summary="Append a batch of events to a run",
)
def append_trace_events(session_id: str, run_id: str, body: TraceBatch) -> Response[Batch]:
    me = caller(router.current_event)
    batch = store().append_trace_events(me.sid(session_id), run_id, body.events, owner=me.owner)
    return Response(201, body=Batch(batch=batch), content_type="application/json")


@router.get("/sessions/<session_id>/traces", tags=["traces"], summary="Events of one run, or of every run, in order")
def load_trace_events(session_id: str, run_id: Annotated[str | None, Query()] = None) -> Events:
    me = caller(router.current_event)
    return Events(items=store().load_trace_events(me.sid(session_id), run_id, owner=me.owner))


@router.get("/sessions/<session_id>/trace-runs", tags=["traces"], summary="Run ids in the order they started")
def list_trace_runs(session_id: str) -> Runs:
    me = caller(router.current_event)
    return Runs(items=store().list_trace_runs(me.sid(session_id), owner=me.owner))


@router.post(
    OTLP_ROUTE,
    tags=["traces"],
    summary="OTLP/HTTP trace export (JSON or protobuf): each span is stored in the session its trace names",
)
def otlp_traces():  # type: ignore[no-untyped-def]  # unannotated: the body is OTLP, JSON or protobuf
    """Any OpenTelemetry SDK or collector can send here (the exporter's endpoint: this API's URL + /v1/traces,
    with the bearer token). A trace's session is the `gen_ai.conversation.id` or `session.id` attribute of
    any of its spans (or of the resource), in the token owner's namespace; run = the trace id. Spans of a
    trace that names no session, or a session the owner does not have, are rejected and counted in the
    answer's partialSuccess, as OTLP specifies."""
    me, event = caller(router.current_event), router.current_event
    protobuf = (event.headers.get("content-type") or "").split(";")[0].strip().lower() == PROTOBUF
    data = body_bytes(event)
    try:
        document = otlp_proto.export_request(data) if protobuf else json.loads(data or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput("the body is not an OTLP ExportTraceServiceRequest") from None
    if not isinstance(document, dict):
        raise InvalidInput("the body is not an OTLP ExportTraceServiceRequest")
    try:
        runs, rejected = otlp_events(document)
    except (TypeError, ValueError, AttributeError):
        raise InvalidInput("the body is not an OTLP ExportTraceServiceRequest") from None
    problems = ["spans whose trace names no session (gen_ai.conversation.id or session.id)"] if rejected else []
    for (session, run), events in runs.items():
        try:
            sid = me.sid(session)
            for start in range(0, len(events), BATCH):
                store().append_trace_events(sid, run, events[start : start + BATCH], owner=me.owner)
        except (SessionNotFound, InvalidInput) as exc:
            rejected += len(events)
            problems.append(f"session {session!r}: {type(exc).__name__}")
    message = "; ".join(problems)[:1000]
    if protobuf:
        return Response(200, content_type=PROTOBUF, body=otlp_proto.export_response(rejected, message))
    partial = {"partialSuccess": {"rejectedSpans": rejected, "errorMessage": message}} if rejected else {}
    return Response(200, content_type="application/json", body=json.dumps(partial))
