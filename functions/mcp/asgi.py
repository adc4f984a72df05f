"""One API Gateway HTTP API event (payload 2.0) served by an ASGI application, and its answer as the
function's response: how the MCP SDK's streamable HTTP transport (an ASGI app) runs in Lambda without
response streaming. The request's body is handed over whole; the answer is collected whole."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from functions.api.context import raw_body

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


def scope_of(event: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The ASGI HTTP scope of an event, with `extra` keys added (what the function verified)."""
    http = (event.get("requestContext") or {}).get("http") or {}
    headers = [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in (event.get("headers") or {}).items()]
    host = str((event.get("headers") or {}).get("host") or (event.get("requestContext") or {}).get("domainName", ""))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": str(http.get("method", "GET")).upper(),
        "scheme": "https",
        "path": event.get("rawPath") or "/",
        "raw_path": (event.get("rawPath") or "/").encode("utf-8"),
        "root_path": "",
        "query_string": str(event.get("rawQueryString") or "").encode("latin-1"),
        "headers": headers,
        "server": (host or "localhost", 443),
        "client": (str(http.get("sourceIp", "127.0.0.1")), 0),
        "state": {},
        **extra,
    }


async def serve(app: App, event: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`app`'s answer to the event, as a Lambda proxy response (the body base64-encoded unless it is text)."""
    body, answered = raw_body(event), anyio.Event()
    status, headers, chunks, given = 500, [], [], False

    async def receive() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client stays connected until the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = int(message["status"]), list(message.get("headers") or [])
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body") or b""))
            if not message.get("more_body"):
                answered.set()

    await app(scope_of(event, extra), receive, send)
    answered.set()
    out: dict[str, str] = {}
    for name, value in headers:
        key = name.decode("latin-1")
        out[key] = f"{out[key]}, {value.decode('latin-1')}" if key in out else value.decode("latin-1")
    data = b"".join(chunks)
    kind = out.get("content-type", "")
    if kind.startswith(("application/json", "text/")):
        return {"statusCode": status, "headers": out, "body": data.decode("utf-8"), "isBase64Encoded": False}
    return {"statusCode": status, "headers": out, "body": base64.b64encode(data).decode(), "isBase64Encoded": True}
