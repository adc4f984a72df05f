"""Development tokens for the local stack: HS256 JWTs signed with a secret that exists only in the
running local stack. Only the local HTTP adapter (infra/local/stack.py) verifies them; the deployed API
trusts nothing but the claims API Gateway's JWT authorizer verified, and this module is not in the
Lambda bundle, so a development token cannot be enabled there."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import secrets
import time
from typing import Any

from store.core import codec
from store.errors import InvalidInput

ISSUER = "agent-store-local"
AUDIENCE = "agent-store"


class TokenError(Exception):
    """The token is missing, malformed, wrongly signed, expired, or for another issuer or audience."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def operator_key(secret: bytes) -> str:
    """The stack's operator key: what mints tokens for any owner (`POST /_local/token`). Derived from the
    signing secret, so it stays the same across restarts with --data, and is no token of any owner. It starts
    with `op-`, never with a dash: `--operator-key KEY` parses whatever the secret is."""
    return "op-" + _b64(hmac.new(secret, b"agent-store-local operator key", hashlib.sha256).digest())


def is_operator(secret: bytes, presented: str) -> bool:
    """True when `presented` is the stack's operator key."""
    return hmac.compare_digest(presented.encode(), operator_key(secret).encode())


def issue(
    secret: bytes, subject: str, *, ttl: int = 12 * 3600, now: float | None = None, scope: str | None = None
) -> str:
    """A token for `subject`, valid for `ttl` seconds, carrying `scope` (space-separated scopes) when given."""
    issued = int(time.time() if now is None else now)
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims: dict[str, Any] = {"sub": subject, "iss": ISSUER, "aud": AUDIENCE, "iat": issued, "exp": issued + ttl}
    if scope:
        claims["scope"] = scope
    payload = _b64(json.dumps(claims).encode())
    signature = _b64(hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest())
    return f"{header}.{payload}.{signature}"


def _check_times(claims: dict[str, Any], current: float) -> None:
    """TokenError unless `exp`, `iat` and `nbf` (those given) are finite numbers, `exp` is given and after
    `current`, and neither `iat` nor `nbf` is after it."""
    times: dict[str, float] = {}
    for name in ("exp", "iat", "nbf"):
        value = claims.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise TokenError(f"token's {name} is not a time")
        times[name] = float(value)
    if "exp" not in times or times["exp"] <= current:
        raise TokenError("token expired")
    if times.get("iat", current) > current or times.get("nbf", current) > current:
        raise TokenError("token is not valid yet")


def verify(secret: bytes, token: str, *, now: float | None = None) -> dict[str, Any]:
    """The token's claims; TokenError unless it is a well-formed HS256 token signed with `secret`, for
    this issuer and audience, unexpired, with a subject."""
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("malformed token")
    try:
        header = codec.parse(_unb64(parts[0]), "a token's header", max_depth=8)
        claims = codec.parse(_unb64(parts[1]), "a token's claims", max_depth=8)
        signature = _unb64(parts[2])
    except (ValueError, InvalidInput) as exc:
        raise TokenError("malformed token") from exc
    if not isinstance(header, dict) or header.get("alg") != "HS256" or not isinstance(claims, dict):
        raise TokenError("unsupported token")
    expected = hmac.new(secret, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(signature, expected):
        raise TokenError("bad signature")
    _check_times(claims, time.time() if now is None else now)
    if claims.get("iss") != ISSUER or claims.get("aud") != AUDIENCE:
        raise TokenError("token is for another issuer or audience")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise TokenError("token has no subject")
    return claims
