"""Text matching for `search`, shared by every backend: what text a message has, how a hit scores,
and its snippet."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from store.models import MessageRecord, Session, SessionHit
from store.timeutil import iso

SKIP_KEYS = frozenset(
    {
        "type",
        "id",
        "data",
        "bytes",
        "media_type",
        "mime_type",
        "mimeType",
        "format",
        "url",
        "image_url",
        "source",
        "signature",
        "toolUseId",
        "tool_use_id",
        "call_id",
        "tool_call_id",
    }
)
SNIPPET_CONTEXT = 60
TITLE_WEIGHT = 3.0


def message_text(content: Any) -> str:
    """The searchable text of message content: every string in it, except ids, types and binary data."""
    parts: list[str] = []
    stack = [content]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, dict):
            stack.extend(reversed([v for k, v in value.items() if k not in SKIP_KEYS]))
    return "\n".join(parts)


def match(text: str | None, query: str) -> tuple[int, str]:
    """(occurrences of `query` in `text`, case-insensitively; a snippet around the first one)."""
    if not text:
        return 0, ""
    folded = text.casefold()
    count = folded.count(query)
    if not count:
        return 0, ""
    at = folded.find(query)
    start, end = max(0, at - SNIPPET_CONTEXT), min(len(text), at + len(query) + SNIPPET_CONTEXT)
    snippet = ("…" if start else "") + text[start:end].replace("\n", " ") + ("…" if end < len(text) else "")
    return count, snippet


Ranked = tuple[float, str, int, SessionHit]


def session_hits(session: Session, messages: Iterable[MessageRecord], needle: str) -> list[Ranked]:
    """Hits in one session's title and messages for a casefolded `needle`, with their ranking keys."""
    stamp = iso(session.updated_at)
    out: list[Ranked] = []
    count, snippet = match(session.title, needle)
    if count:
        score = count * TITLE_WEIGHT
        out.append(
            (score, stamp, 0, SessionHit(session_id=session.id, title=session.title, snippet=snippet, score=score))
        )
    for m in messages:
        count, snippet = match(message_text(m.content), needle)
        if count:
            out.append(
                (
                    float(count),
                    stamp,
                    m.seq,
                    SessionHit(
                        session_id=session.id, title=session.title, seq=m.seq, snippet=snippet, score=float(count)
                    ),
                )
            )
    return out


def rank(hits: list[Ranked], limit: int) -> list[SessionHit]:
    """The best `limit` hits: highest score, then most recently updated session, then latest message."""
    hits.sort(key=lambda h: h[:3], reverse=True)
    return [h[3] for h in hits[:limit]]
