"""Reading a run's trace events as spans on a timeline: what `agent-store traces show` draws (and what the
console's timeline shows). Trace events are free-form JSON objects; a span is read from the fields these
shapes use, first match wins:

- OpenTelemetry (as `store.integrations.otel` stores it, OTLP JSON's names): `start_time_unix_nano`,
  `end_time_unix_nano`, `span_id`, `parent_span_id`, `name`, `attributes`, `status`.
- Plain: `start` / `end` (ISO 8601 or epoch seconds), or `timestamp` (or `time`) with a duration in
  milliseconds (`duration_ms`, `ms`, `latency_ms` or `elapsed_ms`); `id` / `parent_id`; `name` (or `type`,
  or `event`).

An event without a time starts where the event before it ended, and lasts its duration when it has one
(`{"type": "llm_call", "ms": 812}` is an 812 ms bar). Nothing here reads message content: names, times,
token counts and the error flag only."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TOKEN_KEYS = (
    ("gen_ai.usage.input_tokens", "in"),
    ("gen_ai.usage.output_tokens", "out"),
    ("input_tokens", "in"),
    ("output_tokens", "out"),
)


@dataclass
class Span:
    """One event as a bar: `start` and `end` in seconds since the run's first event."""

    name: str
    start: float
    end: float
    depth: int = 0
    error: bool = False
    tokens: dict[str, int] = field(default_factory=dict)
    span_id: str | None = None
    parent_id: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        return self.end - self.start


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return None
    return None


def _nanos(value: Any) -> float | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value / 1e9
    if isinstance(value, str) and value.isdigit():
        return int(value) / 1e9
    return None


def attributes_of(event: dict[str, Any]) -> dict[str, Any]:
    """An event's attributes as a flat dict (OTLP's list of {key, value: {stringValue: ...}} flattened)."""
    raw = event.get("attributes")
    if isinstance(raw, dict):
        return raw
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and "key" in item:
                value = item.get("value")
                if isinstance(value, dict) and len(value) == 1:
                    value = next(iter(value.values()))
                out[str(item["key"])] = value
    return out


DURATION_KEYS = ("duration_ms", "ms", "latency_ms", "elapsed_ms")


def duration_of(event: dict[str, Any]) -> float:
    """An event's own duration in seconds (0 when it states none)."""
    for key in DURATION_KEYS:
        value = event.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value) / 1000
    return 0.0


def times_of(event: dict[str, Any]) -> tuple[float | None, float | None]:
    """An event's start and end in epoch seconds (None, None when it has no time)."""
    start = _nanos(event.get("start_time_unix_nano"))
    if start is not None:
        return start, _nanos(event.get("end_time_unix_nano")) or start
    start = _seconds(event.get("start"))
    if start is not None:
        end = _seconds(event.get("end"))
        return start, end if end is not None else start
    at = _seconds(event.get("timestamp", event.get("time")))
    if at is None:
        return None, None
    return at, at + duration_of(event)


def _error(event: dict[str, Any]) -> bool:
    status = event.get("status")
    if isinstance(status, dict):
        return str(status.get("code", "")).upper() in ("2", "ERROR", "STATUS_CODE_ERROR")
    return bool(event.get("error")) or str(status or "").lower() == "error"


def spans(events: list[dict[str, Any]], *, in_start_order: bool = True) -> list[Span]:
    """The run's events as spans, in start order (or, with `in_start_order=False`, one per event in the
    events' order), times relative to the earliest, each indented under its parent (by span id) when the
    parent is in the run."""
    rows = [(*times_of(event), event) for event in events]
    known = [s for s, _, _ in rows if s is not None]
    origin = min(known) if known else 0.0
    out: list[Span] = []
    previous = 0.0
    for start, end, event in rows:
        if start is None:  # after the event before it, for as long as it says it took
            begin = previous
            finish = previous = begin + duration_of(event)
        else:
            begin = start - origin
            finish = max(begin, end - origin) if end is not None else begin
            previous = begin
        out.append(_span(event, begin, finish))
    _place_under_parents(out)
    return sorted(out, key=lambda s: s.start) if in_start_order else out


def _span(event: dict[str, Any], begin: float, finish: float) -> Span:
    """One event as a span from `begin` to `finish` (its name, error, tokens, ids and attributes)."""
    attrs = attributes_of(event)
    tokens: dict[str, int] = {}
    for key, label in TOKEN_KEYS:
        value = attrs.get(key, event.get(key))
        if isinstance(value, int | str) and str(value).isdigit():
            tokens.setdefault(label, int(value))
    name = event.get("name") or event.get("type") or event.get("event") or "event"
    return Span(
        name=str(name)[:120],
        start=begin,
        end=finish,
        error=_error(event),
        tokens=tokens,
        span_id=_ident(event.get("span_id", event.get("id"))),
        parent_id=_ident(event.get("parent_span_id", event.get("parent_id"))),
        attributes=attrs,
    )


def _place_under_parents(out: list[Span]) -> None:
    """Each span's depth: how many of its ancestors are in the run (at most 32; a cycle counted once)."""
    by_id = {s.span_id: s for s in out if s.span_id}
    for span in out:
        depth, parent, seen = 0, by_id.get(span.parent_id or ""), set()
        while parent is not None and parent.span_id not in seen and depth < 32:
            seen.add(parent.span_id)
            depth += 1
            parent = by_id.get(parent.parent_id or "")
        span.depth = depth


def _ident(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def waterfall(items: list[Span], width: int = 40) -> list[str]:
    """Lines of a text waterfall: name (indented by depth), a bar placed on the run's time axis, duration,
    tokens, and ERROR for a failed span."""
    if not items:
        return ["(no events)"]
    total = max(s.end for s in items) or 1.0
    label = min(48, max(len(s.name) + 2 * s.depth for s in items))
    lines = []
    for s in items:
        name = ("  " * s.depth + s.name)[:label].ljust(label)
        left = int(s.start / total * width) if total else 0
        size = max(1, round(s.duration / total * width)) if s.duration > 0 else 1
        bar = (" " * left + ("█" * size if s.duration > 0 else "│")).ljust(width + 1)[: width + 1]
        extra = " ".join(f"{k} {v}" for k, v in s.tokens.items())
        flag = "  ERROR" if s.error else ""
        lines.append(f"{name} {bar} {s.duration * 1000:9.1f} ms {extra}{flag}".rstrip())
    return lines
