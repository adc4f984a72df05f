"""The canonical message: one shape for every stored message, whatever wrote it (the API, the library,
any framework adapter). Read-only: it is derived from the stored message (`store.conversation.canonical`),
never stored, so sessions written before it existed read the same way."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from store.models import MessageRecord, TokenUsage

Role = Literal["user", "assistant", "tool", "system"]
PartType = Literal["text", "tool_call", "tool_result", "image", "file", "reasoning", "data"]
# The most parts a view shows: past them it ends with a text part saying how many it left out (`truncated`), so
# that a view is never more than a small constant factor larger than the message it reads.
MAX_PARTS = 256
LEFT_OUT = f"[… the rest of this message is not shown here: it has more than {MAX_PARTS} parts]"


class Part(BaseModel):
    """One ordered part of a message. Which fields are set depends on `type`:
    - `text`: `text`;
    - `tool_call`: `id`, `name`, `arguments` (an object when the framework's arguments are JSON);
    - `tool_result`: `call_id`, `name` when known, `content` (its text), `is_error`;
    - `image` and `file`: `media_type`, `name`, `url` (a reference: an https, s3, gs or file URI, or an
      artifact name); `inline` when the bytes are inside the message (never repeated here);
    - `reasoning`: `text` (what the framework kept of the model's reasoning);
    - `data`: `data`, a part no dialect knows, kept as it was."""

    type: PartType
    text: str | None = None
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: Any = None
    content: str | None = None
    is_error: bool | None = None
    media_type: str | None = None
    url: str | None = None
    inline: bool | None = None
    data: Any = None

    @model_serializer(mode="wrap")
    def _set_fields_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the fields this part's type sets (`type` always)."""
        out: dict[str, Any] = handler(self)
        return {k: v for k, v in out.items() if v is not None or k == "type"}


class CanonicalMessage(BaseModel):
    """A stored message read as a conversation turn: `role` (user, assistant, tool, system), its ordered
    `parts`, the `model` that produced it and its token `usage` when known, the `author` (an agent's or a
    framework's own role name) and the `dialect` it was stored in (`store`, `openai-agents`, `adk`,
    `langchain`, `strands`, `langgraph`)."""

    role: Role
    parts: list[Part] = Field(default_factory=list)
    model: str | None = None
    usage: TokenUsage | None = None
    author: str | None = None
    dialect: str = "store"
    truncated: bool | None = None  # True when the view leaves parts out: its last part says so (`MAX_PARTS`)
    raw: bool | None = None  # True when no dialect could read the message: its one part is its content's JSON

    def text(self) -> str:
        """The words of the message: its text and reasoning, tool calls' names and arguments, tool results'
        content and file names, one part a line (what search matches; never ids, types or encoded data)."""
        return "\n".join(t for t in (_words(p) for p in self.parts) if t)


def _words(part: Part) -> str:
    if part.type in ("text", "reasoning"):
        return part.text or ""
    if part.type == "tool_call":
        return " ".join(s for s in [part.name or "", *_strings(part.arguments)] if s)
    if part.type == "tool_result":
        return part.content or ""
    if part.type in ("image", "file"):
        return part.name or ""
    return " ".join(_strings(part.data))


def _strings(value: Any) -> list[str]:
    """Every string value in a JSON value (keys left out), depth-first."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int | float):
            out.append(str(item))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
    return out


VIEW_FIELD = "canonical"  # the field of a message that the store's readers add: no message may carry one


class ViewedMessage(MessageRecord):
    """A stored message with its canonical view beside it: `role`, `content` and the other fields are the
    writer's own, unchanged (what a framework reads back); `canonical` is the same message as one
    conversation model, whatever wrote it (what a front end renders)."""

    canonical: CanonicalMessage
