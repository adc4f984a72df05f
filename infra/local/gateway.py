"""API Gateway in front of the API function, as the local stack plays it: a request's bearer token is
verified (development tokens, infra/local/devtoken.py) and its claims passed in the event where API
Gateway's JWT authorizer puts them, the event goes to the deployed handler code, and its response comes
back as status, headers and body. The local HTTP server serves every request through `answer`;
`InProcessApi` is an `HttpBackend` transport that does the same without a socket (fast tests, tools)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from functions.api.console_routes import is_console
from functions.mcp.calls import MCP_PATH
from infra.local import devtoken
from infra.local.apigw import LambdaContext, http_event, response_body
from store.backends.http_transport import Answer, BufferedAnswer, Outgoing

PUBLIC_ROUTES = frozenset({"/health", "/openapi.json"})


@dataclass(frozen=True)
class Answered:
    status: int
    headers: dict[str, str]
    body: bytes


def _unauthorized(why: str) -> Answered:
    body = json.dumps({"code": "unauthorized", "message": why}).encode()
    return Answered(401, {"Content-Type": "application/json", "WWW-Authenticate": "Bearer"}, body)


def answer(secret: bytes, method: str, path: str, query: str, headers: dict[str, str], body: bytes | None) -> Answered:
    """The answer of the function API Gateway routes a request to (the MCP function for `/mcp`, else the API
    function), after API Gateway's checks: a protected route without a valid bearer token is 401 before the
    function runs."""
    if path == MCP_PATH:
        from functions.mcp.app import lambda_handler
    else:
        from functions.api.app import lambda_handler

    claims = None
    if path not in PUBLIC_ROUTES and not is_console(path):
        auth = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return _unauthorized("a bearer token is required")
        try:
            claims = devtoken.verify(secret, token.strip())
        except devtoken.TokenError as exc:
            return _unauthorized(str(exc))
    kept = {k: v for k, v in headers.items() if k.lower() != "authorization"}
    event = http_event(method, path, query=query, headers=kept, body=body, claims=claims)
    response = lambda_handler(event, LambdaContext())
    out_headers = {k: str(v) for k, v in (response.get("headers") or {}).items()}
    for name, values in (response.get("multiValueHeaders") or {}).items():
        out_headers[name] = ", ".join(values)
    return Answered(int(response["statusCode"]), out_headers, response_body(response))


@dataclass
class InProcessApi:
    """An `HttpBackend` transport: requests under `base_url` are answered by the API function in this
    process (one at a time, as one Lambda container serves them, with `before` run first: a test installs
    its store there); any other URL (a presigned S3 URL) is fetched with `requests`, which moto's
    in-process AWS answers."""

    secret: bytes
    base_url: str = "http://api.local"
    before: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: Outgoing, timeout: float) -> Answer:
        if not request.url.startswith(self.base_url + "/"):
            return self._storage(request, timeout)
        url = urlsplit(request.url)
        body = request.body if isinstance(request.body, bytes | None) else request.body.read()
        with self._lock:
            if self.before is not None:
                self.before()
            got = answer(self.secret, request.method, url.path, url.query, request.headers, body)
        return BufferedAnswer(got.status, got.headers, got.body)

    def _storage(self, request: Outgoing, timeout: float) -> Answer:
        import requests

        got = requests.request(request.method, request.url, headers=request.headers, data=request.body, timeout=timeout)
        return BufferedAnswer(got.status_code, dict(got.headers), got.content)
