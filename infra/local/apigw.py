"""API Gateway HTTP API (payload 2.0) events and Lambda contexts, as API Gateway and Lambda make them:
used by the local HTTP adapter and by the handler tests."""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

TEXT_TYPES = ("application/json", "text/", "application/xml", "application/x-www-form-urlencoded")


def http_event(
    method: str,
    path: str,
    *,
    query: str = "",
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    claims: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An HTTP API event for `method path?query`. `claims` are what the JWT authorizer verified (None: the
    route has no authorizer, or the request carried no token). Binary bodies are base64-encoded."""
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    params: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        params[key] = f"{params[key]},{value}" if key in params else value  # API Gateway joins repeats
    content_type = lowered.get("content-type", "")
    text = body is not None and (not content_type or content_type.startswith(TEXT_TYPES))
    if text:
        try:
            encoded, is_b64 = (body or b"").decode("utf-8"), False
        except UnicodeDecodeError:
            text = False
    if body is not None and not text:
        encoded, is_b64 = base64.b64encode(body).decode(), True
    now = time.time()
    context: dict[str, Any] = {
        "accountId": "123456789012",
        "apiId": "local",
        "domainName": lowered.get("host", "127.0.0.1"),
        "domainPrefix": "local",
        "http": {
            "method": method.upper(),
            "path": path,
            "protocol": "HTTP/1.1",
            "sourceIp": "127.0.0.1",
            "userAgent": lowered.get("user-agent", ""),
        },
        "requestId": uuid.uuid4().hex,
        "routeKey": "$default",
        "stage": "$default",
        "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
        "timeEpoch": int(now * 1000),
    }
    if claims is not None:
        context["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "headers": lowered,
        "requestContext": context,
        "isBase64Encoded": False,
    }
    if params:
        event["queryStringParameters"] = params
    if body is not None:
        event["body"] = encoded
        event["isBase64Encoded"] = is_b64
    return event


@dataclass
class LambdaContext:
    """The attributes of Lambda's context object that handlers and Powertools read."""

    function_name: str = "agent-store-local"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:agent-store-local"
    aws_request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    log_group_name: str = "/aws/lambda/agent-store-local"
    log_stream_name: str = "local"
    timeout_ms: int = 30_000  # the function's timeout: what it has left as it starts

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout_ms


def response_body(response: dict[str, Any]) -> bytes:
    """The body bytes of a handler's response."""
    body = response.get("body") or ""
    return base64.b64decode(body) if response.get("isBase64Encoded") else str(body).encode("utf-8")
