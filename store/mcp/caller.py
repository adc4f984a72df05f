"""Who an MCP request is: the owner a verified token names and the store as that owner sees it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from store.errors import AccessDenied
from store.session_store import SessionStore

SCOPE_KEY = "agent_store.caller"  # where an HTTP transport puts the verified caller in the ASGI scope

# A session's extraction asked for now: (caller, session id, strategy names or None) -> the runs and whether
# the run was handed on (accepted, not yet done)
Extract = Callable[["McpCaller", str, list[str] | None], tuple[list[Any], bool]]


@dataclass(frozen=True)
class McpCaller:
    """The owner every tool acts as (`store` sees that owner's sessions under the owner's own ids), whether
    the caller may write (a read-only token may not), and how a session's extraction is asked for (None:
    no model is configured where this server runs)."""

    owner: str
    store: SessionStore
    writes: bool = True
    extract: Extract | None = None


def caller_of(request: Any, fixed: McpCaller | None) -> McpCaller:
    """The caller of a request: the one its transport verified (an HTTP request's ASGI scope), else the one
    the server was started for (stdio). AccessDenied when there is neither: no tool runs unowned."""
    scope = getattr(request, "scope", None)
    verified = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
    if isinstance(verified, McpCaller):
        return verified
    if fixed is not None and request is None:
        return fixed
    raise AccessDenied("this MCP request carries no verified caller")
