"""The official MCP Python SDK's client, as the tests use it: a session over streamable HTTP with a bearer
token, or over stdio against `agent-store mcp`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


@asynccontextmanager
async def over_http(url: str, token: str) -> AsyncIterator[ClientSession]:
    """An initialized session with the MCP endpoint at `url`, as the owner of `token`."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def over_stdio(env: dict[str, str], *args: str) -> AsyncIterator[ClientSession]:
    """An initialized session with `agent-store mcp` started as a process with `env` added."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "store.tools.cli", "mcp", *args], env={**os.environ, **env}
    )
    async with stdio_client(params) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        yield session


def text(result: Any) -> str:
    """A tool result's text."""
    return "\n".join(getattr(block, "text", "") for block in result.content)


def data(result: Any) -> Any:
    """A tool result's structured content, checked to be what its text says when that is JSON."""
    assert not result.is_error, text(result)
    return result.structured_content if result.structured_content is not None else json.loads(text(result))
