"""The extraction function (its own event source mapping on the sessions table's stream: session heads' changes,
and idle timers removed by TTL). A session whose `last_seq` crossed a multiple of EXTRACTION_EVERY in a batch
gets one extraction (`SessionStore.extract_memories`, trigger "messages") with EXTRACTION_MODEL and the owner's
or the stack's strategies (`store.extraction.triggers`). With EXTRACTION_IDLE_MINUTES, every session that moved
gets its idle timer (re)started: a workflow checkpoint whose TTL is that long (one PutItem); when DynamoDB's TTL
removes it, the session has been idle at least that long (TTL is late by minutes) and gets one extraction
(trigger "idle") of what is left. It runs beside the session's writes, never in their way: a write has returned
before its stream record exists.

A model's failure is a run recorded as failed (its range is read again by the next run), never an error of the
batch; a failure of the store (throttling that outlasted retries, say) reports that session's records as failed
(`ReportBatchItemFailures`), so Lambda hands them again and the run, idempotent per range, is made once. A
session left when too little of the invocation's time remains for a run is reported the same way. Metrics:
MemoryExtractionRuns, MemoryExtractionFailed, MemoryExtractionRefused, MemoryExtractionTokens; logs name
sessions and codes, never content."""

from __future__ import annotations

import os
import warnings
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.runtime import TRACED_MODULES, store
from store import SessionStore
from store.backends.scoped import ScopedBackend
from store.core.scoped_ids import unscoped_id
from store.errors import SessionNotFound, StoreError
from store.extraction.triggers import (
    IDLE_PK,
    IDLE_SCOPE,
    HeadMove,
    changed,
    due,
    every_from_env,
    head_moves,
    idle,
    idle_from_env,
    idle_key,
)

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "agent-session-store-extraction"))
tracer = Tracer(patch_modules=TRACED_MODULES)
warnings.filterwarnings("ignore", message="No application metrics to publish")
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "AgentSessionStore"))
RUN_RESERVE_SECONDS = 90.0  # a run's worst case: three questions with their retries (left for the next batch)


def model() -> Any:
    """The function's model: its store's (`SessionStore.from_env` reads EXTRACTION_MODEL into
    `Settings.extraction_model`, once per container); None when extraction is off."""
    return store().settings.extraction_model


def _stream_positions_of(records: list[dict[str, Any]], session_id: str) -> list[str]:
    """The sequence numbers of the batch's records about the session (its head's changes, its idle timer's
    removal): what is reported back to the stream when its run could not be made."""
    out = []
    for record in records:
        change = record.get("dynamodb") or {}
        head = (change.get("NewImage") or {}).get("id", {}).get("S")
        timer = (change.get("Keys") or {}).get("pk", {}).get("S")
        if (head == session_id or timer == IDLE_PK + session_id) and "SequenceNumber" in change:
            out.append(change["SequenceNumber"])
    return out


def owners_view(session_id: str, owner: str) -> tuple[SessionStore, str]:
    """The store and session id a run uses: for a session of an owner's namespace (the API's, the adapters'),
    the owner's view and the id as the owner names it, so a memory's provenance and namespaces read the
    same over HTTP; else the shared store and the id as stored."""
    shared = store()
    local = unscoped_id(owner, session_id)
    if local is None:
        return shared, session_id
    return owners_store(owner), local


def owners_store(owner: str) -> SessionStore:
    """The container's store as `owner` sees it (the API's view: `functions.api.context.caller`)."""
    shared = store()
    return SessionStore(backend=ScopedBackend(shared.backend, owner), settings=shared.settings)


def _asked(request: dict[str, Any], chosen: Any) -> dict[str, Any]:
    """A run the API asked for (`{"extract": {"owner", "session_id", "strategies"}}`, the id as the owner names
    it): its runs (a model's failure is in them; a session gone is no runs)."""
    owner = str(request.get("owner") or "")
    view = owners_store(owner)
    try:
        runs = view.extract_memories(
            str(request.get("session_id") or ""),
            strategies=request.get("strategies") or None,
            owner=owner,
            model=chosen,
            trigger="on_demand",
        )
    except SessionNotFound:
        return {"runs": []}
    _count(runs, str(request.get("session_id")))
    return {"runs": [r.model_dump(mode="json") for r in runs]}


def _count(runs: list[Any], session_id: str) -> None:
    for run in runs:
        metrics.add_metric(name="MemoryExtractionRuns", unit=MetricUnit.Count, value=1)
        metrics.add_metric(
            name="MemoryExtractionTokens", unit=MetricUnit.Count, value=run.input_tokens + run.output_tokens
        )
        if run.status != "succeeded":
            name = "MemoryExtractionRefused" if run.status == "refused" else "MemoryExtractionFailed"
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
            logger.warning(
                "extraction run did not succeed",
                extra={"session_id": session_id, "strategy": run.strategy, "error": run.error},
            )


def _idle_timers(records: list[dict[str, Any]], moves: list[HeadMove], sessions: dict[str, str]) -> set[str]:
    """With idle timers on (EXTRACTION_IDLE_MINUTES): each session that moved has its timer started again, and
    each session whose timer ran out is added to `sessions` (id -> owner) unless due already. The sessions added
    for being idle."""
    minutes = idle_from_env()
    idled: set[str] = set()
    if not minutes:
        return idled
    for session_id, seq in changed(moves).items():  # each active session's idle timer starts again
        key = idle_key(session_id)
        if key is not None:
            store().save_checkpoint(IDLE_SCOPE, key, {"seq": seq}, ttl=minutes * 60)
    for session_id in idle(records):  # a timer ran out: the session has been idle that long
        head = store().get_session(session_id)
        if head is not None and session_id not in sessions:
            sessions[session_id] = head.owner
            idled.add(session_id)
    return idled


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Extract for each session the batch makes due; the records of sessions not done reported as failures.
    An event `{"extract": {...}}` (the API's asynchronous invocation) is one run asked for."""
    chosen = model()
    if isinstance(event.get("extract"), dict):
        return _asked(event["extract"], chosen) if chosen is not None else {"runs": []}
    records = event.get("Records") or []
    if chosen is None:
        return {"batchItemFailures": []}
    moves = head_moves(records)  # the stream read once, for both triggers
    sessions = due(moves, every_from_env())
    idled = _idle_timers(records, moves, sessions)
    failed: list[str] = []
    for session_id, owner in sessions.items():
        if context.get_remaining_time_in_millis() / 1000 < RUN_RESERVE_SECONDS:
            failed += _stream_positions_of(records, session_id)
            continue
        view, named = owners_view(session_id, owner)
        try:
            trigger = "idle" if session_id in idled else "messages"
            runs = view.extract_memories(named, model=chosen, trigger=trigger)
        except StoreError as error:
            logger.warning("extraction not done", extra={"session_id": session_id, "error": type(error).__name__})
            if not isinstance(error, SessionNotFound):  # a session deleted since: nothing to do
                failed += _stream_positions_of(records, session_id)
            continue
        _count(runs, session_id)
    return {"batchItemFailures": [{"itemIdentifier": s} for s in failed]}
