"""The public operations on trace events by run, and the reclaim of staged objects.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from store.core import validation as v
from store.front.base import Domain
from store.requests import AppendTraceEvents, AppendTraceRuns, ListTraceRuns, LoadTraceEvents, Reclaim


class Traces(Domain):
    """Trace events by run, and the reclaim of staged objects."""

    def append_trace_events(
        self, session_id: str, run_id: str, events: Iterable[dict[str, Any]], *, owner: str | None = None
    ) -> int:
        """Append a batch of events (JSON objects) to a run, stored as one compressed JSON-lines object;
        returns the batch's number in the run. Batches keep their order under concurrent writers."""
        return self._backend.execute(
            AppendTraceEvents(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                run_id=v.ident(run_id, "run_id"),
                events=v.trace_events(events),
            )
        )

    def append_trace_runs(
        self, session_id: str, runs: Mapping[str, Iterable[dict[str, Any]]], *, owner: str | None = None
    ) -> dict[str, int]:
        """Append a batch to each of several runs (at most MAX_TRACE_RUNS, MAX_TRACE_EVENTS events in all) in
        one write: one transaction numbers every batch and the objects are uploaded together. Returns each
        run's batch number. What a span exporter or an OTLP receiver uses for a request that holds many
        traces of one session."""
        return self._backend.execute(
            AppendTraceRuns(
                session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner), runs=v.trace_runs(runs)
            )
        )

    def load_trace_events(
        self, session_id: str, run_id: str | None = None, *, owner: str | None = None
    ) -> list[dict[str, Any]]:
        """The events of one run in order, or of every run (runs in the order they started)."""
        return self._backend.execute(
            LoadTraceEvents(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                run_id=v.optional_ident(run_id, "run_id"),
            )
        )

    def list_trace_runs(self, session_id: str, *, owner: str | None = None) -> list[str]:
        """The session's run ids, in the order they started."""
        return self._backend.execute(
            ListTraceRuns(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )

    def reclaim(self, records: Iterable[dict[str, Any]], *, jobs: Iterable[str] | None = None) -> int:
        """Act on records of the sessions table's stream (the stack's stream functions' job; idempotent):
        `purge` sessions whose head was removed (TTL expiry, or a finished delete: a backstop) or whose
        delete was handed on, `copy` a long fork's or rewind's transcript on (the copy function's job),
        finish a `branch`'s delete, and delete the S3 `objects` that records release (upload intents
        that expired uncommitted; items deleted or replaced). `jobs`: which of them (default all; the
        cascade function does all but `copy`). Returns how many released objects were deleted."""
        return self._backend.execute(
            Reclaim(records=v.stream_records(records), jobs=v.reclaim_jobs(jobs), reduce=self.forget_reducers)
        )
