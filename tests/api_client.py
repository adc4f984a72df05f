"""Calling the HTTP API's Lambda handler with API Gateway v2 events, as API Gateway would."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from infra.local.apigw import LambdaContext, http_event, response_body


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    method: str,
    path: str,
    *,
    owner: str | None = "alice",
    json_body: Any = None,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    query: dict[str, Any] | list[tuple[str, Any]] | None = None,
) -> Reply:
    """Invoke the API handler; `owner` is the `sub` the JWT authorizer verified (None: no token). A query
    written into `path` (`?a=b`) is sent as the query string."""
    from functions.api.app import lambda_handler

    path, _, inline = path.partition("?")
    if inline and query is None:
        query = parse_qsl(inline, keep_blank_values=True)
    hdrs = dict(headers or {})
    if json_body is not None:
        body = json.dumps(json_body).encode()
        hdrs.setdefault("content-type", "application/json")
    claims = None if owner is None else {"sub": owner, "iss": "https://issuer.example", "aud": "agent-store"}
    qs = urlencode(query, doseq=True) if query else ""
    event = http_event(method, path, query=qs, headers=hdrs, body=body, claims=claims)
    resp = lambda_handler(event, LambdaContext())
    return Reply(
        resp["statusCode"], {k.lower(): v for k, v in (resp.get("headers") or {}).items()}, response_body(resp)
    )


def artifact_path(session_id: str, name: str) -> str:
    return f"/sessions/{session_id}/artifacts/{quote(name, safe='')}"
