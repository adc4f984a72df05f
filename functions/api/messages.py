"""Routes for the transcript."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Header, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import caller
from functions.api.schemas import AppendMessages, Items, UpdateUsage
from store import MessageNotFound
from store.conversation import ViewedMessage, viewed
from store.models import Page

router = APIGatewayHttpRouter()


@router.post(
    "/sessions/<session_id>/messages", tags=["messages"], status_code=201, summary="Append messages atomically"
)
def append_messages(
    session_id: str,
    body: AppendMessages,
    idempotency_key: Annotated[
        str | None, Header(alias="idempotency-key", description="a retry with the same key writes nothing twice")
    ] = None,
) -> Response[Items]:
    me = caller(router.current_event)
    records = me.store.append_messages(
        session_id,
        body.messages,
        expected_seq=body.expected_seq,
        idempotency_key=idempotency_key,
    )
    return Response(201, body=Items(items=[viewed(r) for r in records]), content_type="application/json")


@router.get("/sessions/<session_id>/messages", tags=["messages"], summary="A page of the transcript")
def list_messages(
    session_id: str,
    after_seq: Annotated[int | None, Query(ge=0)] = None,
    before_seq: Annotated[int | None, Query(ge=0)] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = 100,
    newest_first: Annotated[bool, Query()] = False,
    since_compaction: Annotated[bool, Query()] = False,
    roles: Annotated[list[str] | None, Query()] = None,
    cursor: Annotated[str | None, Query()] = None,
    branch: Annotated[str | None, Query(description="Read a branch a rewind kept, not the transcript")] = None,
) -> Page[ViewedMessage]:
    me = caller(router.current_event)
    page = me.store.list_messages(
        session_id,
        after_seq=after_seq,
        before_seq=before_seq,
        limit=limit,
        newest_first=newest_first,
        since_compaction=since_compaction,
        roles=roles,
        cursor=cursor,
        branch=branch,
    )
    return Page[ViewedMessage](items=[viewed(r) for r in page.items], next_cursor=page.next_cursor)


@router.get("/sessions/<session_id>/last-messages", tags=["messages"], summary="The latest n messages, oldest first")
def last_messages(session_id: str, n: Annotated[int, Query(ge=1, le=1000)] = 20) -> Items:
    me = caller(router.current_event)
    return Items(items=[viewed(r) for r in me.store.last_messages(session_id, n)])


@router.get("/sessions/<session_id>/messages/<message_id>", tags=["messages"], summary="One message by id")
def get_message(session_id: str, message_id: str) -> ViewedMessage:
    me = caller(router.current_event)
    found = me.store.get_message(session_id, message_id)
    if found is None:
        raise MessageNotFound(session_id, message_id)
    return viewed(found)


@router.put("/sessions/<session_id>/messages/<message_id>/usage", tags=["messages"], summary="Set a message's usage")
def update_usage(session_id: str, message_id: str, body: UpdateUsage) -> ViewedMessage:
    me = caller(router.current_event)
    return viewed(me.store.update_usage(session_id, message_id, body.usage))


@router.post(
    "/sessions/<session_id>/messages/<message_id>/compaction",
    tags=["messages"],
    summary="Mark an appended summary as the start of the live context",
)
def mark_compaction(session_id: str, message_id: str) -> ViewedMessage:
    me = caller(router.current_event)
    return viewed(me.store.mark_compaction(session_id, message_id))


@router.get("/sessions/<session_id>/compaction", tags=["messages"], summary="The latest compaction message")
def get_latest_compaction(session_id: str) -> ViewedMessage:
    me = caller(router.current_event)
    found = me.store.get_latest_compaction(session_id)
    if found is None:
        raise MessageNotFound(session_id, "latest compaction")
    return viewed(found)
