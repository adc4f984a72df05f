"""The session console: static files (functions/api/console/, in the bundle) served by the API function
itself at /console, same origin as the API (no CORS, no other infrastructure), and its sign-in settings.

The files are public (they hold no data); every call the page makes carries the signed-in user's bearer
token and goes through the same JWT authorizer and owner checks as any client. The page signs in with the
stack's OIDC issuer (authorization code with PKCE) when CONSOLE_CLIENT_ID and the endpoints are configured
(the template's Console* parameters), else it takes a pasted token."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

router = APIGatewayHttpRouter()
HERE = Path(__file__).with_name("console")
FILES = {
    "index.html": "text/html; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
}


def headers() -> dict[str, str]:
    """The page runs only its own script and style, is never framed, and talks to exactly this origin and,
    when OIDC sign-in is configured, the issuer's token endpoint (its origin): nothing else over https."""
    connect = "'self'"
    oidc = sign_in_settings()["oidc"]
    if isinstance(oidc, dict):
        token_url = urlsplit(str(oidc["token_url"]))
        connect += f" https://{token_url.netloc}"
    policy = (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        f"connect-src {connect}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )
    return {"Content-Security-Policy": policy, "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"}


@functools.cache
def _text(name: str) -> str:
    """A console file's text, read once per container (the files are part of the deployed bundle)."""
    return (HERE / name).read_text(encoding="utf-8")


def is_console(path: str) -> bool:
    """True for the console's own public paths."""
    return path == "/console" or path.startswith("/console/")


def _https(url: str) -> bool:
    """True for an https URL with a host and nothing that could widen a policy (no spaces, quotes, ';')."""
    parts = urlsplit(url)
    return parts.scheme == "https" and bool(parts.hostname) and not any(c in url for c in " ;'\",\n")


def sign_in_settings() -> dict[str, object]:
    """What the page needs to sign in: the OIDC client and endpoints, or null for a pasted token."""
    client, authorize, token = (
        os.environ.get(name, "").strip() for name in ("CONSOLE_CLIENT_ID", "CONSOLE_AUTHORIZE_URL", "CONSOLE_TOKEN_URL")
    )
    if not (client and _https(authorize) and _https(token)):
        return {"oidc": None}
    scope = os.environ.get("CONSOLE_SCOPES", "openid").strip() or "openid"
    return {"oidc": {"client_id": client, "authorize_url": authorize, "token_url": token, "scope": scope}}


@router.get("/console", include_in_schema=False)
def console_root() -> Response[Any]:
    return Response(302, headers={"Location": "console/", **headers()})


@router.get("/console/", include_in_schema=False)
def console_index() -> Response[Any]:
    return console_file("index.html")


@router.get("/console/<name>", include_in_schema=False)
def console_file(name: str) -> Response[Any]:
    if name == "config.json":
        body = json.dumps(sign_in_settings())
        return Response(
            200, content_type="application/json", body=body, headers={**headers(), "Cache-Control": "no-store"}
        )
    if name not in FILES:
        return Response(404, content_type="text/plain", body="not found", headers=headers())
    return Response(200, content_type=FILES[name], body=_text(name), headers={**headers(), "Cache-Control": "no-cache"})
