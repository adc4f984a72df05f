"""The store as a Model Context Protocol server: tools and resources over one owner's memories, sessions and
context, built on the official Python SDK (`mcp`). The owner is the caller's (a verified token's subject, or
the one a stdio server was started for), never a tool's argument. `build_server` makes the server; the
transports are `functions/mcp` (streamable HTTP on Lambda and the local stack) and `agent-store mcp` (stdio)."""

from store.mcp.caller import McpCaller, caller_of
from store.mcp.server import build_server

__all__ = ["McpCaller", "build_server", "caller_of"]
