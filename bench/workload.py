"""Deterministic agent transcripts for the comparison benchmark (bench/compare.py).

A transcript is a list of `Turn`s generated from a seed: user questions, assistant text, assistant tool
calls with JSON arguments, tool results of 200 B to 50 KB (log-uniform), and now and then a 500 KB tool
output. The text is drawn from a fixed vocabulary, so it compresses about as well as real prose and
JSON (3-4x with zlib), neither random bytes nor repeated filler. Each store turns a `Turn` into its own
message shape (bench/peers.py); `Turn.strands()` is the shared content, Bedrock Converse / Strands style.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from typing import Any, Literal

Kind = Literal["user", "assistant", "tool_call", "tool_result"]

WORDS = (
    "agent session store request table partition item message tool result user assistant model token "
    "lambda region bucket object version query limit cursor state checkpoint artifact trace event run "
    "error retry latency throughput capacity write read index key value schema field record batch "
    "the a of to in and is for on with that this from by as at be it are was or an not but can will "
    "customer order invoice shipping address product price quantity total status pending shipped refund "
    "search found document page section summary report analysis figure chart data file line function"
).split()
TOOLS = ("search_documents", "read_file", "run_sql", "http_get", "list_orders", "summarize")
HUGE_BYTES = 500 * 1024


@dataclass(frozen=True)
class Turn:
    """One message of a transcript, independent of any framework's shape."""

    kind: Kind
    text: str = ""
    tool_id: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)

    @property
    def role(self) -> str:
        """user / assistant, as Strands and Bedrock name them (a tool result is the user's turn)."""
        return "assistant" if self.kind in ("assistant", "tool_call") else "user"

    def strands(self) -> list[dict[str, Any]]:
        """The message's content blocks, Bedrock Converse / Strands style."""
        if self.kind == "tool_call":
            return [{"toolUse": {"toolUseId": self.tool_id, "name": self.tool_name, "input": self.tool_input}}]
        if self.kind == "tool_result":
            return [{"toolResult": {"toolUseId": self.tool_id, "status": "success", "content": [{"text": self.text}]}}]
        return [{"text": self.text}]

    def json_bytes(self) -> int:
        """Size of the content as compact JSON."""
        return len(json.dumps(self.strands(), separators=(",", ":")).encode())


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def _tool_output(rng: random.Random, size: int) -> str:
    """A tool's output: JSON rows (ids, numbers, short text) or plain text, about `size` bytes."""
    if rng.random() < 0.5:
        return _text(rng, size)
    rows: list[dict[str, Any]] = []
    length = 2
    while length < size:
        row = {
            "id": f"{rng.randrange(16**8):08x}",
            "score": round(rng.random(), 4),
            "count": rng.randrange(10_000),
            "title": _text(rng, rng.randrange(20, 80)),
        }
        rows.append(row)
        length += len(json.dumps(row)) + 1
    return json.dumps(rows)[:size]


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return int(math.exp(rng.uniform(math.log(low), math.log(high))))


def agent_transcript(count: int, seed: int = 1, huge_every: int = 150) -> list[Turn]:
    """`count` turns of an agent conversation: a question, then tool calls and their results, then an
    answer, repeated. About one tool result in `huge_every` is a 500 KB output (0 disables them)."""
    rng = random.Random(seed)
    out: list[Turn] = []
    call = 0
    while len(out) < count:
        out.append(Turn("user", _text(rng, rng.randrange(40, 400))))
        for _ in range(rng.randrange(0, 4)):
            call += 1
            tool_id = f"call_{seed}_{call}"
            name = rng.choice(TOOLS)
            args = {"query": _text(rng, rng.randrange(10, 120)), "limit": rng.randrange(1, 50)}
            out.append(Turn("tool_call", tool_id=tool_id, tool_name=name, tool_input=args))
            huge = huge_every > 0 and rng.randrange(huge_every) == 0
            size = HUGE_BYTES if huge else _log_uniform(rng, 200, 50_000)
            out.append(Turn("tool_result", _tool_output(rng, size), tool_id=tool_id, tool_name=name))
        out.append(Turn("assistant", _text(rng, rng.randrange(100, 2_000))))
    return out[:count]


def chat_transcript(count: int, seed: int = 1) -> list[Turn]:
    """`count` turns of a plain chat: user and assistant alternate with 50-600 B of text each."""
    rng = random.Random(seed)
    return [Turn("user" if i % 2 == 0 else "assistant", _text(rng, rng.randrange(50, 600))) for i in range(count)]


def huge_tool_result(seed: int = 1) -> Turn:
    """One 500 KB tool output (the case that breaks single-item histories)."""
    rng = random.Random(seed)
    return Turn("tool_result", _tool_output(rng, HUGE_BYTES), tool_id=f"call_huge_{seed}", tool_name="read_file")
