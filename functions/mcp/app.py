"""The MCP endpoint's Lambda handler: `POST /mcp` (streamable HTTP, stateless, answering JSON) behind the same
JWT authorizer as the API, in a function of its own so that the API's cold start does not carry the MCP SDK
(docs/decisions.md, "The MCP server").

Before the SDK sees a request: 401 without a verified subject, 403 without a scope the deployment accepts,
413 for a body over the API's limit. The caller is the token's `sub`; a read-only token (JwtReadScopes) gets
the server without the writing tools. Logs name the JSON-RPC method and the tool, never arguments or answers."""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

import anyio
from aws_lambda_powertools import Logger
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from functions import access
from functions.api.context import MAX_BODY_BYTES, body_size, owner_view, raw_body
from functions.mcp import asgi
from functions.mcp.calls import MCP_PATH, described
from functions.runtime import SECURITY_HEADERS, register_snapstart_hooks, time_budget
from store import deadline
from store.mcp import McpCaller, build_server
from store.mcp.caller import SCOPE_KEY

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "agent-session-store"))
# the SDK logs a failed tool's message at INFO (ids a caller named); the function logs method and tool only
logging.getLogger("mcp").setLevel(logging.WARNING)
register_snapstart_hooks()
_servers: dict[bool, MCPServer] = {}
_serving = threading.Lock()  # one request at a time per container, as Lambda serves them (the local stack too)


def server(writes: bool) -> MCPServer:
    """The container's server for writing callers (True) or read-only ones (False), built on first use."""
    if writes not in _servers:
        _servers[writes] = build_server(writes=writes)
    return _servers[writes]


def _extract(me: McpCaller, session_id: str, names: list[str] | None) -> tuple[list[Any], bool]:
    from functions.api.extraction import request_extraction

    return request_extraction(me.store, me.owner, session_id, names)


def caller(claims: dict[str, Any]) -> McpCaller:
    """The request's caller: the verified subject, the store as that owner sees it, and what it may do."""
    owner = str(claims["sub"])
    return McpCaller(owner, owner_view(owner), writes=access.access(claims) == "write", extract=_extract)


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", **SECURITY_HEADERS}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    body = json.dumps({"code": code, "message": message})
    return {"statusCode": status, "headers": headers, "body": body, "isBase64Encoded": False}


LOOPBACK = ("127.0.0.1", "::1")
LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]"]


def transport_security(event: dict[str, Any]) -> TransportSecuritySettings:
    """The SDK's Host and Origin checks for a request from this machine (the local stack, on 127.0.0.1): only
    loopback names, so that a web page whose name was rebound to 127.0.0.1 is refused (DNS rebinding). Behind
    API Gateway, which routes by its own name and never from loopback, there is nothing to rebind: no check,
    and a browser-based client of any origin may call with its token."""
    source = str(((event.get("requestContext") or {}).get("http") or {}).get("sourceIp", ""))
    if source not in LOOPBACK:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=LOCAL_HOSTS + [f"{host}:*" for host in LOCAL_HOSTS],
        allowed_origins=[f"http://{host}:*" for host in LOCAL_HOSTS] + [f"http://{host}" for host in LOCAL_HOSTS],
    )


async def _answer(mcp: MCPServer, event: dict[str, Any], me: McpCaller, budget: float) -> dict[str, Any]:
    """The SDK's answer to one POST, or 503 when it takes longer than the request's budget."""
    app = mcp.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        stateless_http=True,
        transport_security=transport_security(event),
        max_request_body_size=MAX_BODY_BYTES,
    )
    with anyio.move_on_after(budget):
        async with mcp.session_manager.run():
            return await asgi.serve(app, event, {SCOPE_KEY: me})
    return _error(503, "unavailable", "the request took longer than its time budget; retry")


def refused(event: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to a request that may not reach the SDK (401, 403, 405, 413), or None. Only POST reaches it:
    a stateless server answering JSON offers no stream to GET and no session to DELETE."""
    why = access.refused(access.claims_of(event), writing=False)
    if why is not None:
        return _error(*why)
    method = ((event.get("requestContext") or {}).get("http") or {}).get("method", "")
    if method != "POST":
        answer = _error(405, "method_not_allowed", "this MCP endpoint is stateless: POST JSON-RPC messages to it")
        answer["headers"]["Allow"] = "POST"
        return answer
    if body_size(event) > MAX_BODY_BYTES:
        return _error(413, "payload_too_large", f"request bodies are at most {MAX_BODY_BYTES} bytes")
    return None


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One MCP request (a JSON-RPC message) and its answer."""
    response = refused(event)
    if response is None:
        me = caller(access.claims_of(event))
        logger.append_keys(**described(raw_body(event)))
        budget = time_budget(context)
        with _serving, deadline(budget):
            response = anyio.run(_answer, server(me.writes), event, me, budget)
        logger.info("mcp request", extra={"status": response["statusCode"]})
    response["headers"] = {**(response.get("headers") or {}), **SECURITY_HEADERS}
    return response
