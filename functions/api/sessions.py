"""Routes for sessions, search and health."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Annotated, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import caller, store
from functions.api.schemas import CreateSession, Health, Hits, UpdateSession
from store import InvalidInput, SessionNotFound, StoreUnavailable
from store.core import codec
from store.core.validation import new_id
from store.models import Page, Session
from store.requests import UNSET

router = APIGatewayHttpRouter()
logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "agent-session-store"), child=True)


def parse_metadata_filter(text: str | None) -> dict[str, Any] | None:
    """The `metadata` query parameter: a JSON object, or InvalidInput."""
    if text is None or not text.strip():
        return None
    wanted = codec.parse(text, "metadata", max_depth=codec.MAX_DEPTH + 1)
    if not isinstance(wanted, dict):
        raise InvalidInput("metadata must be a JSON object")
    return wanted


def retention(requested: int | None) -> int | None:
    """Seconds of inactivity before a new session expires: as requested (0 = never), else the deployment's
    DEFAULT_RETENTION_DAYS (0 or unset = never)."""
    if requested is not None:
        return requested or None
    days = int(os.environ.get("DEFAULT_RETENTION_DAYS") or 0)
    return days * 86400 or None


@router.post("/sessions", tags=["sessions"], status_code=201, summary="Create a session")
def create_session(body: CreateSession) -> Response[Session]:
    me = caller(router.current_event)
    session = me.store.create_session(
        me.owner,
        session_id=body.session_id if body.session_id is not None else new_id(),
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
    metadata: Annotated[
        str | None,
        Query(
            max_length=2048,
            description='a JSON object: only sessions whose metadata has these values, e.g. {"team": "a"}',
        ),
    ] = None,
    conversations_only: Annotated[
        bool,
        Query(
            description="leave out the sessions framework adapters keep for themselves (checkpoint logs, shared state)"
        ),
    ] = False,
) -> Page[Session]:
    me = caller(router.current_event)
    wanted = parse_metadata_filter(metadata)
    page = me.store.list_sessions(
        me.owner,
        limit=limit,
        cursor=cursor,
        created_after=created_after,
        created_before=created_before,
        metadata=wanted,
        conversations_only=conversations_only,
    )
    return page  # without the sessions the library made for this owner outside the namespace (ScopedBackend)


@router.get("/sessions/<session_id>", tags=["sessions"], summary="Get a session")
def get_session(session_id: str) -> Session:
    me = caller(router.current_event)
    found = me.store.get_session(session_id)
    if found is None:
        raise SessionNotFound(session_id)
    return found


@router.patch("/sessions/<session_id>", tags=["sessions"], summary="Change title, model or metadata")
def update_session(session_id: str, body: UpdateSession) -> Session:
    given, me = body.model_fields_set, caller(router.current_event)
    updated = me.store.update_session(
        session_id,
        title=body.title if "title" in given else UNSET,
        model=body.model if "model" in given else UNSET,
        metadata=body.metadata if "metadata" in given else UNSET,
    )
    return updated


@router.delete(
    "/sessions/<session_id>", tags=["sessions"], status_code=204, summary="Delete a session and everything it owns"
)
def delete_session(session_id: str) -> Response[None]:
    me = caller(router.current_event)
    me.store.delete_session(session_id)
    return Response(204)


@router.get("/search", tags=["sessions"], summary="Search my sessions' titles and messages")
def search(
    q: Annotated[str, Query(min_length=1, max_length=256)],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> Hits:
    """Bounded per call (newest sessions first); pass `next_cursor` back as `cursor` to go on."""
    me = caller(router.current_event)
    found = me.store.search(me.owner, q, limit=limit, cursor=cursor)
    return Hits.of(found)  # hits in sessions outside the caller's namespace are left out (ScopedBackend)


@router.get("/health", tags=["operations"], summary="Health of the tables and bucket (no token needed)")
def health_check() -> Health:
    """Unauthenticated: the answer says only whether storage answers; what failed goes to the log."""
    try:
        store().health_check()
    except StoreUnavailable as exc:
        logger.warning("health check failed", extra={"error": str(exc)})
        raise StoreUnavailable("storage is unavailable") from None
    return Health(status="ok")
