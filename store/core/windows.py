"""Windows of a transcript that never cut a tool exchange in half, shared by every backend.

A model API refuses a conversation in which a tool result answers a call it cannot see (OpenAI's
`tool_call_id` / `call_id`, Anthropic's `tool_use_id`, Bedrock Converse's and Strands' `toolUseId`). A
window of a transcript (the last N messages, or from the latest compaction) that would start after a
call whose result lies inside it is therefore **widened**: older messages are added, newest first, until
every tool result in the window has its call, reading at most `WIDEN_MAX` messages beyond the window.
If the call is further back than that (a tool that answered hundreds of messages later), the window is
**trimmed** instead: it starts after the last message that holds such an orphan result, so what is
returned is still a contiguous tail of the transcript in which every result has its call."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from store.models import Message, MessageRecord

WIDEN_MAX = 200  # messages read beyond a window to find the calls of its tool results


def window_start(
    last_seq: int, compaction_seq: int | None, since_compaction: bool, last: int | None, after: int | None = None
) -> int:
    """The first sequence number of a live-context window before widening: from the latest compaction
    when asked (and there is one), no earlier than the last `last` messages when given, and after `after`
    (the sequence number a state names: `state_position`) when given."""
    lo = compaction_seq if since_compaction and compaction_seq is not None else 1
    if last is not None:
        lo = max(lo, last_seq - last + 1)
    if after is not None:
        lo = max(lo, after + 1)
    return max(lo, 1)


STATE_PATH_MAX = 8  # fields in an `after_seq_at` path
STATE_FIELD = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def state_position(state: Any, path: str | None) -> int | None:
    """The sequence number the state holds at the dotted `path` (a framework's own window: Strands keeps how many
    messages its conversation manager removed), or None when there is no path, no state or no non-negative
    integer there."""
    if path is None:
        return None
    value = state
    for field in path.split("."):
        if not isinstance(value, dict) or field not in value:
            return None
        value = value[field]
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _blocks(content: Any) -> list[dict[str, Any]]:
    """The JSON objects of message content: a list of blocks, or one object (an OpenAI Responses item)."""
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class _End:
    """Where one end of a tool exchange (the call, or its result) names its id in a content block, in each
    shape the store's adapters write: an Anthropic block (`type`, its id field), an OpenAI Responses item
    (a `type` ending in `suffix`, its `call_id`), a Bedrock Converse / Strands block (`converse`'s
    `toolUseId`), and LangChain's serialized message (`{"type": langchain, "data": ...}`, its ids)."""

    block_type: str
    block_id: str
    suffix: str
    converse: str
    langchain: str
    langchain_ids: Callable[[dict[str, Any]], set[str]]

    def ids(self, block: dict[str, Any]) -> set[str]:
        """The ids this end names in one content block."""
        kind = block.get("type")
        found: set[str] = set()
        if (kind == self.block_type and (cid := _text(block.get(self.block_id)))) or (
            isinstance(kind, str) and kind.endswith(self.suffix) and (cid := _text(block.get("call_id")))
        ):
            found.add(cid)
        converse = block.get(self.converse)
        if isinstance(converse, dict) and (cid := _text(converse.get("toolUseId"))):
            found.add(cid)
        data = block.get("data")
        if kind == self.langchain and isinstance(data, dict):
            found |= self.langchain_ids(data)
        return found


def _ids(items: Any, field: str) -> set[str]:
    """The `field` of each dict in `items` (a list; anything else holds none) that is a non-empty string."""
    return (
        {cid for c in items or [] if isinstance(c, dict) and (cid := _text(c.get(field)))}
        if isinstance(items, list)
        else set()
    )


CALL = _End("tool_use", "id", "_call", "toolUse", "ai", lambda data: _ids(data.get("tool_calls"), "id"))
RESULT = _End(
    "tool_result",
    "tool_use_id",
    "_call_output",
    "toolResult",
    "tool",
    lambda data: {cid} if (cid := _text(data.get("tool_call_id"))) else set(),
)


def calls_of(message: Message) -> set[str]:
    """The ids of the tool calls a message makes, in any of the shapes the store's adapters write:
    OpenAI chat `tool_calls[].id`, OpenAI Responses `*_call` items' `call_id`, Anthropic `tool_use`
    blocks' `id`, Bedrock Converse / Strands `toolUse.toolUseId`, LangChain's serialized `AIMessage`."""
    extra = message.model_extra or {}
    found = _ids(extra.get("tool_calls"), "id")
    for block in _blocks(message.content):
        found |= CALL.ids(block)
    return found


def results_of(message: Message) -> set[str]:
    """The ids of the tool calls a message answers: an OpenAI chat `tool` message's `tool_call_id`, OpenAI
    Responses `*_call_output` items' `call_id`, Anthropic `tool_result` blocks' `tool_use_id`, Bedrock
    Converse / Strands `toolResult.toolUseId`, LangChain's serialized `ToolMessage`."""
    found: set[str] = set()
    if message.role == "tool" and (cid := _text(message.tool_call_id)):
        found.add(cid)
    for block in _blocks(message.content):
        found |= RESULT.ids(block)
    return found


def orphans(messages: Iterable[Message]) -> set[str]:
    """The ids of the tool results in `messages` (oldest first) whose call is not before them."""
    seen: set[str] = set()
    missing: set[str] = set()
    for m in messages:
        missing |= results_of(m) - seen
        seen |= calls_of(m)
    return missing


class Widening:
    """A window (oldest first) grown backwards until every tool result in it has its call.

    Feed it older messages, newest first, while it `wants` them (`take`); `window()` is the answer: the
    widened window, or, when `WIDEN_MAX` messages did not reach every call (or the transcript began
    first), the window trimmed to start after its last orphan result."""

    def __init__(self, window: list[MessageRecord]) -> None:
        self._messages = list(window)
        self._size = len(window)
        self._missing = orphans(window)
        self._read = 0

    @property
    def wants(self) -> bool:
        """True while some result's call is not in the window and more may be read."""
        return bool(self._missing) and self._read < WIDEN_MAX and (not self._messages or self._messages[0].seq > 1)

    @property
    def room(self) -> int:
        """How many more older messages may be read."""
        return WIDEN_MAX - self._read

    @property
    def start(self) -> int:
        """The sequence number of the window's first message (1 when empty)."""
        return self._messages[0].seq if self._messages else 1

    def take(self, older: Iterable[MessageRecord]) -> None:
        """Add older messages (newest first) while they are wanted."""
        for m in older:
            if not self.wants:
                return
            self._read += 1
            self._messages.insert(0, m)
            self._missing = (self._missing - calls_of(m)) | (results_of(m) - calls_of(m))

    def window(self) -> list[MessageRecord]:
        """The window in which every tool result has its call (see the module docstring). A result whose
        call is nowhere before it (widening reached the transcript's first message) is the transcript's
        own: it is kept, and the window is widened only as far as the calls that do exist."""
        messages = self._messages
        if not self._missing:
            return messages  # every call found; each message added was needed to reach one
        if messages and messages[0].seq == 1:
            return self._widened_to_existing_calls(self._missing)
        while missing := orphans(messages):
            last = max(i for i, m in enumerate(messages) if results_of(m) & missing)
            messages = messages[last + 1 :]
        return messages

    def _widened_to_existing_calls(self, nowhere: set[str]) -> list[MessageRecord]:
        """The shortest widening of the window whose only orphans are the results in `nowhere`."""
        added = len(self._messages) - self._size
        missing = orphans(self._messages[added:])
        for i in range(added, 0, -1):
            if missing <= nowhere:
                return self._messages[i:]
            m = self._messages[i - 1]
            missing = (missing - calls_of(m)) | (results_of(m) - calls_of(m))
        return self._messages
