"""Routes for trace events."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import caller, store
from functions.api.schemas import Batch, Events, Runs, TraceBatch

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
