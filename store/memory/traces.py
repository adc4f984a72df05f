"""The in-memory backend: trace events."""

from __future__ import annotations

from typing import Any

from store.memory.core import MemoryCore
from store.requests import AppendTraceEvents, AppendTraceRuns, ListTraceRuns, LoadTraceEvents


class MemoryTraces(MemoryCore):
    """Trace events, in memory."""

    def append_trace_events(self, request: AppendTraceEvents) -> int:
        session_id, owner, run_id, events = request.session_id, request.owner, request.run_id, request.events
        with self._lock:
            entry = self._need(session_id, owner)
            stored = self._copy(events)
            batches = entry.runs.setdefault(run_id, [])
            batches.append(stored)
            self._touch(entry)
            return len(batches)

    def append_trace_runs(self, request: AppendTraceRuns) -> dict[str, int]:
        session_id, owner = request.session_id, request.owner
        with self._lock:
            entry = self._need(session_id, owner)
            numbers = {}
            for run_id, events in request.runs.items():
                batches = entry.runs.setdefault(run_id, [])
                batches.append(self._copy(events))
                numbers[run_id] = len(batches)
            self._touch(entry)
            return numbers

    def load_trace_events(self, request: LoadTraceEvents) -> list[dict[str, Any]]:
        session_id, owner, run_id = request.session_id, request.owner, request.run_id
        with self._lock:
            runs = self._need(session_id, owner).runs
            chosen = [runs.get(run_id, [])] if run_id is not None else list(runs.values())
            return [self._copy(e) for batches in chosen for batch in batches for e in batch]

    def list_trace_runs(self, request: ListTraceRuns) -> list[str]:
        session_id, owner = request.session_id, request.owner
        with self._lock:
            return list(self._need(session_id, owner).runs)
