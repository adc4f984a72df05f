"""`agent-store mcp`: the store as an MCP server over stdio, for a desktop host (Claude Desktop, Cursor, VS
Code) or any MCP client that starts its servers as processes. It acts as the CLI's target: a deployed or
local stack (AGENT_STORE_API and AGENT_STORE_TOKEN: the token's owner, the API's checks), or the tables as
--owner. Standard output carries the protocol only."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from store.errors import InvalidInput
from store.tools.cli.target import API_ENV, TOKEN_ENV, Target

SERVER_NAME = "agent-store"


def mcp_host_entry(api_url: str, token: str) -> dict[str, Any]:
    """The `mcpServers` entry a desktop host's config takes to start `agent-store mcp` against `api_url`."""
    beside = Path(sys.executable).parent / "agent-store"  # the environment this command runs in
    found = str(beside) if beside.exists() else shutil.which("agent-store")
    command, args = (found, ["mcp"]) if found else (sys.executable, ["-m", "store.tools.cli", "mcp"])
    return {
        "mcpServers": {SERVER_NAME: {"command": command, "args": args, "env": {API_ENV: api_url, TOKEN_ENV: token}}}
    }


def mcp_serve(args: Any, t: Target, out: TextIO) -> int:
    """Serve MCP over stdin/stdout until the host closes it; 0 then. With --print-config, print the host's
    config entry for this target instead (a stack's API and token only: a host cannot be given tables)."""
    import anyio

    if args.print_config:
        token = args.token or os.environ.get(TOKEN_ENV)
        if not t.where.startswith("http") or not token:
            raise InvalidInput(f"--print-config needs the stack's API and a token: --api and --token, or {API_ENV}")
        out.write(json.dumps(mcp_host_entry(t.where, token), indent=2) + "\n")
        return 0

    from store.extraction.triggers import model_from_env
    from store.mcp import McpCaller, build_server

    model = model_from_env()

    def extract(me: McpCaller, session_id: str, names: list[str] | None) -> tuple[list[Any], bool]:
        return me.store.extract_memories(session_id, strategies=names, owner=me.owner, model=model), False

    me = McpCaller(t.owner, t.store, writes=not args.read_only, extract=extract if model is not None else None)
    anyio.run(build_server(me, writes=me.writes).run_stdio_async)
    return 0
