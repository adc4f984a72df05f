"""A conversation as a model reads it: a session's messages rendered as "[seq] role: text" lines within a budget
(`transcript`), and a framework's messages read as numbered records (`as_records`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from store.conversation.preview import spoken
from store.errors import InvalidInput
from store.models import MessageRecord

MAX_MESSAGE_CHARS = 4000  # of one message shown to the model


def transcript(records: list[MessageRecord], max_chars: int) -> tuple[str, list[MessageRecord]]:
    """The messages as the model reads them ("[seq] role: text"), the first ones that fit in `max_chars` (at
    least one), and which those are. System messages and compaction summaries are left out of the text."""
    lines: list[str] = []
    used: list[MessageRecord] = []
    size = 0
    for record in records:
        role, words = spoken(record)
        text = words[:MAX_MESSAGE_CHARS]
        line = f"[{record.seq}] {role}: {text}" if text and role != "system" and record.kind == "message" else ""
        if used and size + len(line) > max_chars:
            break
        used.append(record)
        if line:
            lines.append(line)
            size += len(line) + 1
    return "\n".join(lines), used


def as_records(messages: list[Any], source: str, numbers: list[int] | None, now: datetime) -> list[MessageRecord]:
    """A framework's messages (dicts of its own shape, read as canonical messages) as records numbered by
    `numbers` (1, 2, 3, ... when None); one that is not a message is InvalidInput."""
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InvalidInput("each message must be a dict with a role")
        seq = numbers[i] if numbers is not None else i + 1
        fields = {k: v for k, v in message.items() if k not in ("id", "seq", "session_id", "created_at", "kind")}
        try:
            out.append(MessageRecord(**fields, id=f"m{seq}", seq=seq, session_id=source, created_at=now))
        except ValueError:
            raise InvalidInput("a message could not be read (its role must be a short string)") from None
    return out
