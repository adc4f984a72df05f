"""`agent-store mcp`: the store as an MCP server over stdio, for a desktop host (Claude Desktop, Cursor, VS
Code) or any MCP client that starts its servers as processes. It acts as the CLI's target: a deployed or
local stack (AGENT_STORE_API and AGENT_STORE_TOKEN: the token's owner, the API's checks), or the tables as
--owner. Standard output carries the protocol only."""

from __future__ import annotations

import shutil
import sys
from typing import Any, TextIO

from store.tools.cli.target import API_ENV, TOKEN_ENV, Target

SERVER_NAME = "agent-store"


def mcp_host_entry(api_url: str, token: str) -> dict[str, Any]:
    """The `mcpServers` entry a desktop host's config takes to start `agent-store mcp` against `api_url`."""
    found = shutil.which("agent-store")
    command, args = (found, ["mcp"]) if found else (sys.executable, ["-m", "store.tools.cli", "mcp"])
    return {
        "mcpServers": {SERVER_NAME: {"command": command, "args": args, "env": {API_ENV: api_url, TOKEN_ENV: token}}}
    }


def mcp_serve(args: Any, t: Target, out: TextIO) -> int:
    """Serve MCP over stdin/stdout until the host closes it; 0 then."""
    import anyio

    from store.extraction.triggers import model_from_env
    from store.mcp import McpCaller, build_server

    model = model_from_env()

    def extract(me: McpCaller, session_id: str, names: list[str] | None) -> tuple[list[Any], bool]:
        return me.store.extract_memories(session_id, strategies=names, owner=me.owner, model=model), False

    me = McpCaller(t.owner, t.store, writes=not args.read_only, extract=extract if model is not None else None)
    anyio.run(build_server(me, writes=me.writes).run_stdio_async)
    return 0
