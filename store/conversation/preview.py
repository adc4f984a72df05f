"""What a session without a title shows: the start of its first user message."""

from __future__ import annotations

from collections.abc import Iterable

from store.conversation.dialects import canonical
from store.models import Message

PREVIEW_CHARACTERS = 120


def preview_of(messages: Iterable[Message]) -> str | None:
    """The first `PREVIEW_CHARACTERS` characters (whitespace collapsed) of the text of the first message
    that reads as a user's turn with text (whatever framework wrote it), or None when there is none."""
    for message in messages:
        view = canonical(message)
        if view.role != "user":
            continue
        text = " ".join(" ".join(p.text or "" for p in view.parts if p.type == "text").split())
        if text:
            return text if len(text) <= PREVIEW_CHARACTERS else text[: PREVIEW_CHARACTERS - 1] + "…"
    return None
