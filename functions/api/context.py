"""What every route needs: the shared store, the caller's identity, and the request limits."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, TypeVar

from functions.runtime import store, use_store
from store import SessionStore
from store.backends.scoped import ScopedBackend, scrubbed
from store.core.codec import MAX_DEPTH, loads
from store.errors import AccessDenied

__all__ = [
    "MAX_BODY_BYTES",
    "Absent",
    "Caller",
    "Unauthorized",
    "body_bytes",
    "body_size",
    "caller",
    "owner_of",
    "owner_view",
    "parse_json_body",
    "raw_body",
    "store",
    "use_store",
]

MAX_BODY_BYTES = 4 * 1024 * 1024  # a Lambda request is at most 6 MB, and binary bodies arrive base64-encoded
INLINE_ARTIFACT_BYTES = MAX_BODY_BYTES
BODY_DEPTH = MAX_DEPTH + 4  # the request's own envelope ({"messages": [{"content": ...}]}) around a value


def parse_json_body(text: str) -> Any:
    """A request body as JSON, refused with InvalidInput (400) when no store could keep it: NaN or
    Infinity, integers of more than MAX_INT_DIGITS digits, floats beyond a double, lone surrogates,
    nesting deeper than BODY_DEPTH (`codec.loads`). Malformed JSON raises JSONDecodeError (422, as
    Powertools answers)."""
    return loads(text, "the request body", max_depth=BODY_DEPTH)


class Absent(Exception):
    """The thing asked for does not exist (or is not the caller's): 404 `not_found`."""


class Unauthorized(AccessDenied):
    """The request carries no verified identity (401 `unauthorized`)."""


def owner_of(event: Any) -> str:
    """The caller: the `sub` claim that API Gateway's JWT authorizer verified. Nothing else is trusted."""
    claims = (((event.raw_event.get("requestContext") or {}).get("authorizer") or {}).get("jwt") or {}).get("claims")
    subject = claims.get("sub") if isinstance(claims, dict) else None
    if not isinstance(subject, str) or not subject:
        raise Unauthorized("this route needs a verified token")
    return subject


M = TypeVar("M")


@dataclass(frozen=True)
class Caller:
    """The verified owner of a request, and the store as that owner sees it: `ScopedBackend` over the
    shared store's backend, so every request is the owner's, a session id in a path or body is the owner's
    own name for it (scoped to its namespace on the way in; two owners can use the same id and neither
    learns of the other's), ids in answers and error messages are the owner's names again, and sessions
    outside the namespace (made by the library under unscoped ids) are not listed."""

    owner: str
    store: SessionStore

    def scrub(self, message: str) -> str:
        """An error message with the caller's namespace taken off the ids it names (for errors raised
        outside the store, which `ScopedBackend` already scrubs)."""
        return scrubbed(self.owner, message)


def owner_view(owner: str) -> SessionStore:
    """The container's store as `owner` sees it (`ScopedBackend`: the owner's sessions under the owner's ids)."""
    shared = store()
    return SessionStore(backend=ScopedBackend(shared.backend, owner), settings=shared.settings)


def caller(event: Any) -> Caller:
    """The request's verified caller and its view of the store (Unauthorized without a verified caller)."""
    owner = owner_of(event)
    return Caller(owner, owner_view(owner))


def raw_body(raw_event: dict[str, Any]) -> bytes:
    """An API Gateway event's body as bytes (API Gateway base64-encodes binary bodies)."""
    raw = raw_event.get("body") or ""
    if raw_event.get("isBase64Encoded"):
        return base64.b64decode(raw)
    return raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)


def body_size(raw_event: dict[str, Any]) -> int:
    """How many bytes an event's body holds, without decoding it (a base64 body's size from its length)."""
    body = raw_event.get("body") or ""
    return len(body) * 3 // 4 if raw_event.get("isBase64Encoded") else len(str(body).encode("utf-8"))


def body_bytes(event: Any) -> bytes:
    """The request body as bytes (API Gateway base64-encodes binary bodies)."""
    return raw_body(event.raw_event)
