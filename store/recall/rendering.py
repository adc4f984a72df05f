"""How a turn's context reads: each part a line ("role: text" for a message, in the order of the conversation;
"- text" for a memory; the summary as written: sequence numbers and sources are the parts' provenance, not
the model's reading) under a heading per section; what each line costs is counted on exactly that line, so a
context's `used_tokens` is the estimate of its whole text (`store.recall.tokens`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from store.recall.tokens import count_tokens


class Part(Protocol):
    """What a part is read by (`store.models.ContextPart` has it)."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def role(self) -> str | None: ...


class Context(Protocol):
    """What a context is rendered from (`store.models.TurnContext` has it)."""

    @property
    def summary(self) -> Part | None: ...

    @property
    def memories(self) -> Sequence[Part]: ...

    @property
    def recalled(self) -> Sequence[Part]: ...

    @property
    def recent(self) -> Sequence[Part]: ...


SUMMARY = "Summary of the conversation before the recent messages:"
MEMORIES = "What you know about the user:"
RECALLED = "Earlier in this conversation:"
RECENT = "Recent messages:"
HEADINGS = (SUMMARY, MEMORIES, RECALLED, RECENT)
HEADING_TOKENS = sum(count_tokens(h) for h in HEADINGS)  # what a context reserves for its headings


def line(kind: str, text: str, role: str | None = None) -> str:
    """A part as it reads in the context."""
    if kind == "message":
        return f"{role}: {text}"
    if kind == "memory":
        return f"- {text}"
    return text


def cost(kind: str, text: str, role: str | None = None) -> int:
    """What a part costs as it reads."""
    return count_tokens(line(kind, text, role))


def _lines(parts: Sequence[Part]) -> list[str]:
    return [line(p.kind, p.text, p.role) for p in parts]


def background(context: Context) -> str:
    """The summary, the memories and the recalled messages, each under its heading."""
    blocks = []
    if context.summary is not None:
        blocks.append(SUMMARY + "\n" + context.summary.text)
    if context.memories:
        blocks.append("\n".join([MEMORIES, *_lines(context.memories)]))
    if context.recalled:
        blocks.append("\n".join([RECALLED, *_lines(context.recalled)]))
    return "\n\n".join(blocks)


def as_text(context: Context) -> str:
    """The background, then the recent messages."""
    recent = "\n".join([RECENT, *_lines(context.recent)]) if context.recent else ""
    return "\n\n".join(b for b in (background(context), recent) if b)


def as_messages(context: Context) -> list[dict[str, Any]]:
    """A system message with the background (when there is one), then each recent message."""
    shown = background(context)
    out: list[dict[str, Any]] = [{"role": "system", "content": shown}] if shown else []
    out += [{"role": p.role or "user", "content": p.text} for p in context.recent]
    return out
