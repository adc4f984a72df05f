"""A message's words as a person reads them (`spoken`), and what a session without a title shows: the start of
its first user message."""

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


TOOL_RESULT_CHARACTERS = 500  # of a tool's result, in a message's words


def spoken(message: Message) -> tuple[str, str]:
    """A message's role and words as the conversation view shows them: its text, the tools it called ("(called
    the tool NAME)") and the start of their results ("(tool result: ...)"), whatever framework wrote it."""
    view = canonical(message)
    words = []
    for part in view.parts:
        if part.type == "text" and part.text:
            words.append(part.text)
        elif part.type == "tool_call":
            words.append(f"(called the tool {part.name})")
        elif part.type == "tool_result" and part.content:
            words.append(f"(tool result: {part.content[:TOOL_RESULT_CHARACTERS]})")
    return view.role, " ".join(words).strip()
