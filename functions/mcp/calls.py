"""What a log line says of an MCP request: its JSON-RPC method and, for a tool call, the tool, never the
arguments (they are the caller's data). Read without the MCP SDK, by the function and the local stack."""

from __future__ import annotations

import json
from typing import Any

MCP_PATH = "/mcp"  # the MCP function's one route (template.yaml, McpFunction)
MAX_NAME = 64


def described(body: bytes) -> dict[str, str]:
    """{"rpc": method[, "tool": name]} of a request body ("unparsed", "batch" or "invalid" when it is not one
    JSON-RPC object)."""
    try:
        message: Any = json.loads(body or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return {"rpc": "unparsed"}
    if not isinstance(message, dict):
        return {"rpc": "batch" if isinstance(message, list) else "invalid"}
    params = message.get("params")
    found = {"rpc": str(message.get("method"))[:MAX_NAME]}
    if message.get("method") == "tools/call" and isinstance(params, dict) and params.get("name") is not None:
        found["tool"] = str(params["name"])[:MAX_NAME]
    return found


def mcp_call(body: bytes) -> str:
    """The request as the local stack's log shows it after the path: " (tools/call remember)"."""
    found = described(body)
    return " (" + " ".join(found.values()) + ")"
