"""The OpenAI Agents SDK's own tracing into a session's traces (`[openai-agents]`):
`add_trace_processor(SessionTracingProcessor(store, owner=...))`. A trace's spans are collected and
written when the trace ends, by a background thread (`force_flush` waits for it), so the agent never waits
on storage. The session is the trace's `group_id` (the SDK's conversation id), or `session_id` in its
metadata; traces naming neither are not stored (counted in `dropped`). Span inputs and outputs are not
copied; names, times, usage and the error flag are."""

from __future__ import annotations

import queue
import threading
from typing import Any

from agents.tracing.processor_interface import TracingProcessor

from store.session_store import SessionStore
from store.tools.otlp import TraceWriter, plain


class SessionTracingProcessor(TracingProcessor):
    """The OpenAI Agents SDK's TracingProcessor into the store: spans are collected per trace and written
    when it ends, by a background thread (`force_flush` waits for it). The session is the trace's
    `group_id`, or `session_id` in its metadata; traces naming neither are not stored (counted in `dropped`)."""

    def __init__(self, store: SessionStore, *, owner: str | None = None, create_sessions: bool = False) -> None:
        self._writer = TraceWriter(store, owner, create_sessions)
        self._spans: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[str, str, list[dict[str, Any]]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="agent-store-traces", daemon=True)
        self._thread.start()
        self.dropped = 0

    @property
    def failures(self) -> int:
        return self._writer.failures

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._writer.write(*item)
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def on_trace_start(self, trace: Any) -> None:
        with self._lock:
            self._spans.setdefault(trace.trace_id, [])

    def on_span_start(self, span: Any) -> None:
        return None

    def on_span_end(self, span: Any) -> None:
        data = span.export() or {}
        info = data.get("span_data") or {}
        name = info.get("name") or info.get("type") or "span"
        event = {
            "id": data.get("id"),
            "parent_id": data.get("parent_id"),
            "name": f"{info.get('type', 'span')} {name}".strip() if info.get("name") else str(name),
            "start": data.get("started_at"),
            "end": data.get("ended_at"),
            "attributes": {k: plain(v) for k, v in info.items() if k not in ("input", "output", "response")},
            "error": data.get("error") is not None,
        }
        usage = info.get("usage") or {}
        if isinstance(usage, dict):
            event.update({k: v for k, v in usage.items() if k in ("input_tokens", "output_tokens")})
        with self._lock:
            self._spans.setdefault(data.get("trace_id", ""), []).append(event)

    def on_trace_end(self, trace: Any) -> None:
        with self._lock:
            events = self._spans.pop(trace.trace_id, [])
        exported = trace.export() or {}
        metadata = exported.get("metadata") or {}
        session = exported.get("group_id") or metadata.get("session_id")
        if not session:
            self.dropped += len(events)
            return
        if events:
            self._queue.put((str(session), str(trace.trace_id), events))

    def force_flush(self) -> None:
        self._queue.join()

    def shutdown(self) -> None:
        self._queue.join()
        self._queue.put(None)
        self._thread.join(timeout=10)
