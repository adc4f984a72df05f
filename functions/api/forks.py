"""Routes that branch a conversation: fork a session, rewind it, and the branches a rewind keeps."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import caller
from functions.api.schemas import Branches, ForkSession, RestoreBranch, RewindSession, metadata_given
from store.core.rules import MAX_BRANCHES
from store.models import Session
from store.requests import UNSET

router = APIGatewayHttpRouter()


@router.post(
    "/sessions/<session_id>/fork",
    tags=["forks"],
    status_code=201,
    summary="Fork a session: a new session holding its messages 1..at_seq, its state, records and artifacts",
)
def fork_session(session_id: str, body: ForkSession) -> Response[Session]:
    """The fork's metadata records `forked_from` (the session and the seq). A long transcript is copied
    after the answer (`copying` is true meanwhile): the fork can be read and written at once."""
    given, me = body.model_fields_set, caller(router.current_event)
    fork = me.store.fork_session(
        session_id,
        at_seq=body.at_seq,
        new_session_id=body.session_id,
        title=body.title,
        metadata=metadata_given(body),
        state=body.state if "state" in given else UNSET,
    )
    return Response(201, body=fork, content_type="application/json")


@router.post(
    "/sessions/<session_id>/rewind",
    tags=["forks"],
    summary="Continue a session from message to_seq, keeping the transcript as it was as a branch",
)
def rewind_session(session_id: str, body: RewindSession) -> Session:
    me = caller(router.current_event)
    return me.store.rewind_session(session_id, body.to_seq, branch=body.branch, metadata=metadata_given(body))


@router.get("/sessions/<session_id>/branches", tags=["forks"], summary="The branches a session keeps, oldest first")
def list_branches(
    session_id: str,
    limit: Annotated[int, Query(ge=1, le=MAX_BRANCHES)] = MAX_BRANCHES,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> Branches:
    """A page of at most `limit` branches; pass `next_cursor` back as `cursor` for the next. A session keeps at
    most 100 branches (a rewind past that is refused until one is deleted)."""
    me = caller(router.current_event)
    found = me.store.list_branches(session_id, limit=limit, cursor=cursor)
    return Branches(items=list(found), next_cursor=found.next_cursor)


@router.post(
    "/sessions/<session_id>/branches/<branch>/restore",
    tags=["forks"],
    summary="Make a branch the session's transcript again, keeping the one it replaces as a branch",
)
def restore_branch(session_id: str, branch: str, body: RestoreBranch) -> Session:
    me = caller(router.current_event)
    return me.store.restore_branch(session_id, branch, keep_as=body.keep_as, metadata=metadata_given(body))


@router.delete("/sessions/<session_id>/branches/<branch>", tags=["forks"], status_code=204, summary="Delete a branch")
def delete_branch(session_id: str, branch: str) -> Response[None]:
    me = caller(router.current_event)
    me.store.delete_branch(session_id, branch)
    return Response(204)
