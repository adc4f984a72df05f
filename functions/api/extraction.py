"""Routes for memory extraction on a session of the caller's: its runs, and a run asked for now.

`POST /sessions/{id}/memory-runs` runs the strategies (facts and preferences unless named) over what the
session's messages hold that they have not read: inline when this function has a model (the local stack with
EXTRACTION_MODEL: 200 and the runs), else handed to the stack's extraction function, which has the model and
the time a model takes (202; the runs appear in `GET`), else 400 (`ExtractionModelId` is not set)."""

from __future__ import annotations

import json
import os
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import Absent, caller
from functions.api.schemas import Strict
from store import InvalidInput, SessionNotFound, SessionStore
from store.extraction import ExtractionRuns
from store.extraction.strategies import BuiltInName

router = APIGatewayHttpRouter()
FUNCTION_ENV = "EXTRACTION_FUNCTION"  # the stack's extraction function, when ExtractionModelId is set
_lambda: Any = None

BuiltIn = BuiltInName


class ExtractRequest(Strict):
    strategies: list[BuiltIn] | None = None


def _lambda_client() -> Any:
    global _lambda
    if _lambda is None:
        import boto3

        _lambda = boto3.client("lambda")
    return _lambda


@router.get("/sessions/<session_id>/memory-runs", tags=["memories"], summary="A session's memory extraction runs")
def list_runs(session_id: str) -> ExtractionRuns:
    me = caller(router.current_event)
    return ExtractionRuns(items=me.store.list_extraction_runs(session_id, owner=me.owner))


def request_extraction(
    store: SessionStore, owner: str, session_id: str, names: list[str] | None
) -> tuple[list[Any], bool]:
    """A session's extraction asked for now: run inline when this function has a model (the runs, False), else
    handed to the stack's extraction function ([], True: accepted). SessionNotFound for a session that is not
    the owner's; InvalidInput when the stack has no model."""
    if store.get_session(session_id, owner=owner) is None:
        raise SessionNotFound(session_id)
    if store.settings.extraction_model is not None:
        return store.extract_memories(session_id, strategies=names, owner=owner), False
    function = os.environ.get(FUNCTION_ENV)
    if not function:
        raise InvalidInput("memory extraction is not configured on this stack (its ExtractionModelId is not set)")
    payload = {"extract": {"owner": owner, "session_id": session_id, "strategies": names}}
    _lambda_client().invoke(FunctionName=function, InvocationType="Event", Payload=json.dumps(payload).encode())
    return [], True


@router.post("/sessions/<session_id>/memory-runs", tags=["memories"], summary="Extract memories from a session now")
def extract(session_id: str, body: ExtractRequest) -> Response[ExtractionRuns]:
    me = caller(router.current_event)
    names = [str(name) for name in body.strategies] if body.strategies else None
    try:
        runs, accepted = request_extraction(me.store, me.owner, session_id, names)
    except SessionNotFound:
        raise Absent(f"session {session_id!r} not found") from None  # 404 not_found, as this route always said
    return Response(
        202 if accepted else 200, content_type="application/json", body=ExtractionRuns(items=runs, accepted=accepted)
    )
