"""Routes for sessions, search and health."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import owner_of, store
from functions.api.schemas import CreateSession, Health, Hits, UpdateSession
from store import SessionNotFound
from store.backend import UNSET
from store.models import Page, Session

router = APIGatewayHttpRouter()


def retention(requested: int | None) -> int | None:
    """Seconds of inactivity before a new session expires: as requested (0 = never), else the deployment's
    DEFAULT_RETENTION_DAYS (0 or unset = never)."""
    if requested is not None:
        return requested or None
    days = int(os.environ.get("DEFAULT_RETENTION_DAYS") or 0)
    return days * 86400 or None


@router.post("/sessions", tags=["sessions"], status_code=201, summary="Create a session")
def create_session(body: CreateSession) -> Response[Session]:
    session = store().create_session(
        owner_of(router.current_event),
        session_id=body.session_id,
        title=body.title,
        model=body.model,
        metadata=body.metadata,
        retention=retention(body.retention_seconds),
    )
    return Response(201, body=session, content_type="application/json")


@router.get("/sessions", tags=["sessions"], summary="List my sessions, most recently updated first")
def list_sessions(
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    cursor: Annotated[str | None, Query()] = None,
    created_after: Annotated[datetime | None, Query()] = None,
    created_before: Annotated[datetime | None, Query()] = None,
) -> Page[Session]:
    return store().list_sessions(
        owner_of(router.current_event),
        limit=limit,
        cursor=cursor,
        created_after=created_after,
        created_before=created_before,
    )


@router.get("/sessions/<session_id>", tags=["sessions"], summary="Get a session")
def get_session(session_id: str) -> Session:
    found = store().get_session(session_id, owner=owner_of(router.current_event))
    if found is None:
        raise SessionNotFound(session_id)
    return found


@router.patch("/sessions/<session_id>", tags=["sessions"], summary="Change title, model or metadata")
def update_session(session_id: str, body: UpdateSession) -> Session:
    given = body.model_fields_set
    return store().update_session(
        session_id,
        title=body.title if "title" in given else UNSET,
        model=body.model if "model" in given else UNSET,
        metadata=body.metadata if "metadata" in given else UNSET,
        owner=owner_of(router.current_event),
    )


@router.delete(
    "/sessions/<session_id>", tags=["sessions"], status_code=204, summary="Delete a session and everything it owns"
)
def delete_session(session_id: str) -> Response[None]:
    store().delete_session(session_id, owner=owner_of(router.current_event))
    return Response(204)


@router.get("/search", tags=["sessions"], summary="Search my sessions' titles and messages")
def search(
    q: Annotated[str, Query(min_length=1, max_length=256)],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> Hits:
    return Hits(items=store().search(owner_of(router.current_event), q, limit=limit))


@router.get("/health", tags=["operations"], summary="Health of the tables and bucket (no token needed)")
def health() -> Health:
    store().health_check()
    return Health(status="ok")
