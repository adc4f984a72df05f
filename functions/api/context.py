"""What every route needs: the shared store, the caller's identity, and the request limits."""

from __future__ import annotations

import base64
from typing import Any

from functions.runtime import store, use_store

__all__ = ["MAX_BODY_BYTES", "Absent", "Unauthorized", "body_bytes", "owner_of", "store", "use_store"]

MAX_BODY_BYTES = 4 * 1024 * 1024  # a Lambda request is at most 6 MB, and binary bodies arrive base64-encoded
INLINE_ARTIFACT_BYTES = MAX_BODY_BYTES


class Absent(Exception):
    """The thing asked for does not exist (or is not the caller's): 404 `not_found`."""


class Unauthorized(Exception):
    """The request carries no verified identity."""


def owner_of(event: Any) -> str:
    """The caller: the `sub` claim that API Gateway's JWT authorizer verified. Nothing else is trusted."""
    claims = (((event.raw_event.get("requestContext") or {}).get("authorizer") or {}).get("jwt") or {}).get("claims")
    subject = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(subject, str) or not subject:
        raise Unauthorized("this route needs a verified token")
    return subject


def body_bytes(event: Any) -> bytes:
    """The request body as bytes (API Gateway base64-encodes binary bodies)."""
    raw = event.raw_event.get("body") or ""
    if event.raw_event.get("isBase64Encoded"):
        return base64.b64decode(raw)
    return raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
