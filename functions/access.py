"""What a verified token may do, for every function API Gateway's JWT authorizer fronts (the HTTP API and its
MCP endpoint): the scopes a deployment requires (the template's JwtScopes), the read-only scopes
(JwtReadScopes: a token carrying only those may read, never write), and the claims API Gateway passed."""

from __future__ import annotations

import os
from typing import Any, Literal

SCOPES_ENV = "JWT_SCOPES"
READ_SCOPES_ENV = "JWT_READ_SCOPES"

Access = Literal["write", "read"]


def _listed(name: str) -> frozenset[str]:
    return frozenset(s.strip() for s in os.environ.get(name, "").split(",") if s.strip())


def required_scopes() -> frozenset[str]:
    """JWT_SCOPES (the template's JwtScopes): a token must carry one of them (or a read scope, to read); empty =
    any verified token."""
    return _listed(SCOPES_ENV)


def read_scopes() -> frozenset[str]:
    """JWT_READ_SCOPES (the template's JwtReadScopes): a token carrying one of them and none of JWT_SCOPES may
    only read."""
    return _listed(READ_SCOPES_ENV)


def token_scopes(claims: dict[str, Any]) -> frozenset[str]:
    """The scopes a verified token carries: its `scope` (or `scp`) claim, space-separated (API Gateway passes
    a list claim as text such as "[a b]")."""
    found: set[str] = set()
    for name in ("scope", "scp"):
        value = claims.get(name)
        text = " ".join(map(str, value)) if isinstance(value, list) else str(value or "")
        found.update(text.strip("[]").replace(",", " ").split())
    return frozenset(found)


def claims_of(event: dict[str, Any]) -> dict[str, Any]:
    """The claims API Gateway's JWT authorizer verified for an HTTP API event ({} when none)."""
    claims = (((event.get("requestContext") or {}).get("authorizer") or {}).get("jwt") or {}).get("claims")
    return claims if isinstance(claims, dict) else {}


def access(claims: dict[str, Any]) -> Access | None:
    """What a token with these claims may do: "write" (anything), "read" (a read scope and none of the required
    ones), or None (no scope the deployment accepts)."""
    scopes, wanted, reading = token_scopes(claims), required_scopes(), read_scopes()
    if scopes & wanted:
        return "write"
    if scopes & reading:
        return "read"
    return None if wanted else "write"


def refused(claims: dict[str, Any], writing: bool) -> tuple[int, str, str] | None:
    """Why a request with these claims may not go on, as (status, code, message): 401 without a subject, 403
    without an accepted scope or, for a write, with a read-only one; None when it may."""
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        return 401, "unauthorized", "this route needs a bearer token"
    allowed = access(claims)
    if allowed is None:
        accepted = sorted(required_scopes() | read_scopes())
        return 403, "insufficient_scope", f"this API needs a token with one of the scopes {accepted}"
    if writing and allowed == "read":
        return 403, "insufficient_scope", "this token may only read"
    return None
