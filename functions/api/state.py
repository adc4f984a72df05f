"""Routes for state, save_full/load_full, interrupts, records and checkpoints."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import Absent, caller
from functions.api.schemas import (
    Interrupt,
    Overview,
    SaveCheckpoint,
    Saved,
    SaveFull,
    SaveRecords,
    SaveState,
    ViewedFull,
)
from store.conversation import viewed
from store.models import Checkpoint, StateSnapshot

router = APIGatewayHttpRouter()


@router.get(
    "/sessions/<session_id>/overview",
    tags=["state"],
    summary="What the session resumes from: its state, pending interrupt and session checkpoint (null when none)",
)
def session_overview(session_id: str) -> Overview:
    """One read for a session page: unlike the routes of each part, absence is null here, not a 404."""
    me = caller(router.current_event)
    return Overview(
        state=me.store.load_state(session_id),
        interrupt=me.store.load_interrupt(session_id),
        checkpoint=me.store.load_checkpoint("session", session_id),
    )


@router.get("/sessions/<session_id>/state", tags=["state"], summary="The current state")
def load_state(session_id: str) -> StateSnapshot:
    me = caller(router.current_event)
    found = me.store.load_state(session_id)
    if found is None:
        raise Absent("no state has been saved")
    return found


@router.put("/sessions/<session_id>/state", tags=["state"], summary="Save a new version of the state")
def save_state(session_id: str, body: SaveState) -> Saved:
    me = caller(router.current_event)
    version = me.store.save_state(session_id, body.state, expected_version=body.expected_version)
    return Saved(version=version)


@router.get("/sessions/<session_id>/full", tags=["state"], summary="Session, messages and state as of one instant")
def load_full(
    session_id: str,
    since_compaction: Annotated[bool, Query()] = False,
    last: Annotated[int | None, Query(ge=1, le=10_000)] = None,
    after_seq_at: Annotated[str | None, Query(max_length=600)] = None,
    with_states: Annotated[list[str] | None, Query()] = None,
) -> ViewedFull:
    """`last`: only the last N messages (with `since_compaction`, no earlier than the compaction), widened
    so that every tool result has its call; `after_seq_at`: a dotted path into the state holding the sequence
    number after which messages are read (a framework's own window); `with_states`: up to 4 other sessions of
    the caller whose states are read in the same instant (`states`, and the sessions themselves in `sessions`,
    by id: null when absent)."""
    me = caller(router.current_event)
    full = me.store.load_full(
        session_id, since_compaction=since_compaction, last=last, after_seq_at=after_seq_at, with_states=with_states
    )
    return ViewedFull(
        session=full.session,
        messages=[viewed(m) for m in full.messages],
        state=full.state,
        states=full.states,
        sessions=full.sessions,
    )


@router.post("/sessions/<session_id>/full", tags=["state"], summary="Append messages and save state in one transaction")
def save_full(session_id: str, body: SaveFull) -> StateSnapshot:
    me = caller(router.current_event)
    return me.store.save_full(
        session_id, body.messages, body.state, expected_seq=body.expected_seq, keep_state=body.keep_state
    )


@router.get("/sessions/<session_id>/interrupt", tags=["state"], summary="The pending interrupt")
def load_interrupt(session_id: str) -> Interrupt:
    me = caller(router.current_event)
    found = me.store.load_interrupt(session_id)
    if found is None:
        raise Absent("no interrupt is pending")
    return Interrupt(interrupt=found)


@router.put("/sessions/<session_id>/interrupt", tags=["state"], status_code=204, summary="Record a pending interrupt")
def save_interrupt(session_id: str, body: Interrupt) -> Response[None]:
    me = caller(router.current_event)
    me.store.save_interrupt(session_id, body.interrupt)
    return Response(204)


@router.delete(
    "/sessions/<session_id>/interrupt", tags=["state"], status_code=204, summary="Clear the pending interrupt"
)
def clear_interrupt(session_id: str) -> Response[None]:
    me = caller(router.current_event)
    me.store.clear_interrupt(session_id)
    return Response(204)


@router.get("/sessions/<session_id>/records/<kind>", tags=["state"], summary="The session's records of a kind")
def load_records(session_id: str, kind: str) -> SaveRecords:
    me = caller(router.current_event)
    return SaveRecords(records=me.store.load_records(session_id, kind))


@router.put(
    "/sessions/<session_id>/records/<kind>",
    tags=["state"],
    status_code=204,
    summary="Replace the session's records of a kind",
)
def save_records(session_id: str, kind: str, body: SaveRecords) -> Response[None]:
    me = caller(router.current_event)
    me.store.save_records(session_id, kind, body.records)
    return Response(204)


Scope = Literal["session", "run", "workflow"]


@router.get("/checkpoints/<scope>/<key>", tags=["checkpoints"], summary="A checkpoint (absent once expired)")
def load_checkpoint(scope: Scope, key: str) -> Checkpoint:
    me = caller(router.current_event)
    found = me.store.load_checkpoint(scope, key)
    if found is None:
        raise Absent("no such checkpoint")
    return found


@router.put("/checkpoints/<scope>/<key>", tags=["checkpoints"], summary="Save or renew a checkpoint")
def save_checkpoint(scope: Scope, key: str, body: SaveCheckpoint) -> Checkpoint:
    data: Any = body.data
    me = caller(router.current_event)
    saved = me.store.save_checkpoint(scope, key, data, ttl=body.ttl_seconds)
    return saved


@router.delete("/checkpoints/<scope>/<key>", tags=["checkpoints"], status_code=204, summary="Delete a checkpoint")
def delete_checkpoint(scope: Scope, key: str) -> Response[None]:
    me = caller(router.current_event)
    me.store.delete_checkpoint(scope, key)
    return Response(204)


@router.get("/owner/records/<kind>", tags=["state"], summary="My records of a kind (settings kept for me)")
def load_owner_records(kind: str) -> SaveRecords:
    me = caller(router.current_event)
    return SaveRecords(records=me.store.load_owner_records(me.owner, kind))


@router.put("/owner/records/<kind>", tags=["state"], status_code=204, summary="Replace my records of a kind")
def save_owner_records(kind: str, body: SaveRecords) -> Response[None]:
    me = caller(router.current_event)
    me.store.save_owner_records(me.owner, kind, body.records)
    return Response(204)
