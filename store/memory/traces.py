"""The in-memory backend: trace events."""

from __future__ import annotations

from typing import Any

from store.memory.core import MemoryCore


class MemoryTraces(MemoryCore):
    """Trace events, in memory."""

    def append_trace_events(self, session_id: str, owner: str | None, run_id: str, events: list[dict[str, Any]]) -> int:
        with self._lock:
            entry = self._need(session_id, owner)
            stored = self._copy(events)
            batches = entry.runs.setdefault(run_id, [])
            batches.append(stored)
            self._touch(entry)
            return len(batches)

    def load_trace_events(self, session_id: str, owner: str | None, run_id: str | None) -> list[dict[str, Any]]:
        with self._lock:
            runs = self._need(session_id, owner).runs
            chosen = [runs.get(run_id, [])] if run_id is not None else list(runs.values())
            return [self._copy(e) for batches in chosen for batch in batches for e in batch]

    def list_trace_runs(self, session_id: str, owner: str | None) -> list[str]:
        with self._lock:
            return list(self._need(session_id, owner).runs)
