"""What the MCP tools answer: structured content (the models below, or the store's own) beside a text a model
reads, and the store's typed errors as tool errors carrying the store's code and message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from store.backends import http_errors
from store.backends.scoped import scrubbed
from store.errors import StoreError
from store.models import MessageRecord


class Namespaces(BaseModel):
    """A page of the namespaces that hold memories (each a list of labels)."""

    items: list[list[str]]
    next_cursor: str | None = None


class Forgotten(BaseModel):
    """A memory forgotten (deleting one that was not there is not an error: `forgotten` is what is true now)."""

    namespace: list[str]
    key: str
    forgotten: bool = True


class Line(BaseModel):
    """A message of a transcript as a person reads it: its words, tool calls and results included."""

    seq: int
    role: str
    text: str
    created_at: datetime


class Transcript(BaseModel):
    """A page of a session's transcript, oldest first; `next_after_seq` continues it (None at its end)."""

    session_id: str
    messages: list[Line]
    next_after_seq: int | None = None


def line(record: MessageRecord) -> Line:
    """A stored message as a transcript line (its canonical words)."""
    from store.conversation import viewed

    shown = viewed(record).canonical
    return Line(seq=record.seq, role=shown.role, text=shown.text(), created_at=record.created_at)


def answer(result: BaseModel, text: str | None = None) -> CallToolResult:
    """A tool's result: `result` as structured content and, for a model to read, `text` (its JSON if None)."""
    data: dict[str, Any] = result.model_dump(mode="json")
    shown = json.dumps(data, ensure_ascii=False) if text is None else text
    return CallToolResult(content=[TextContent(type="text", text=shown)], structured_content=data)


def refusal(exc: StoreError, owner: str) -> ToolError:
    """The store's typed error as a tool error: `code: message`, ids as the caller names them."""
    kind = next((k for k in type(exc).__mro__ if k in http_errors.ERRORS), None)
    code = http_errors.ERRORS[kind][1] if kind is not None else "invalid_request"
    return ToolError(f"{code}: {scrubbed(owner, str(exc) or code.replace('_', ' '))}")


@contextmanager
def store_errors(owner: str) -> Iterator[None]:
    """Run a tool's store calls: a typed store error becomes a tool error (an answer the model reads, never a
    protocol error); anything else is left to the SDK, which answers a generic tool error and logs the type."""
    try:
        yield
    except StoreError as exc:
        raise refusal(exc, owner) from None
