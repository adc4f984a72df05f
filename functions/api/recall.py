"""Routes for recall: the caller's messages searched by meaning and words (the message index the stack's cascade
keeps), and the context for a model's next turn in a session of theirs."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import caller
from store.models import MessageHits, TurnContext

router = APIGatewayHttpRouter()


@router.get("/messages/search", tags=["messages"], summary="Search my messages by meaning or words")
def search_messages(
    q: Annotated[str, Query(min_length=1, max_length=2048)],
    session_id: Annotated[str | None, Query(max_length=1024, description="Only this session's messages")] = None,
    mode: Annotated[str, Query(pattern="^(auto|semantic|keyword|hybrid)$")] = "auto",
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> MessageHits:
    """Across all my live sessions, or within one: each hit names its session and sequence number. Bounded per
    call: one or two vector searches of at most 100 candidates. Messages are indexed by the stack's cascade
    within seconds of their write."""
    me = caller(router.current_event)
    return me.store.search_messages(me.owner, q, session_id=session_id, mode=mode, limit=limit, cursor=cursor)


@router.get("/sessions/<session_id>/context", tags=["messages"], summary="What the model should see next")
def context(
    session_id: str,
    q: Annotated[str | None, Query(min_length=1, max_length=2048, description="Default: the last user message")] = None,
    budget: Annotated[int, Query(ge=64, le=200_000, description="Tokens, as the answer's token_counting says")] = 2000,
    memories: Annotated[bool, Query(description="Include my long-term memories")] = True,
) -> TurnContext:
    """The session's running summary, the recent messages that fit, and the older messages and my memories that
    matter to the question, each once, with its provenance and token count, never over the budget. Six to
    eight reads whatever the session's length."""
    me = caller(router.current_event)
    return me.store.context(session_id, q, budget, owner=me.owner, memories=memories)
