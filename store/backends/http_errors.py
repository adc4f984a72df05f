"""The HTTP API's error codes: one table, read one way by the API (an exception's status and code) and the
other by `HttpBackend` (the store's exception for an answer's code), so the two cannot drift apart."""

from __future__ import annotations

from typing import Any

from store import errors as e

# exception class -> (HTTP status, stable code); a subclass answers as the first class of its MRO here
ERRORS: dict[type[e.StoreError], tuple[int, str]] = {
    e.InvalidInput: (400, "invalid_input"),
    e.AccessDenied: (401, "unauthorized"),
    e.SessionNotFound: (404, "session_not_found"),
    e.MessageNotFound: (404, "message_not_found"),
    e.ArtifactNotFound: (404, "artifact_not_found"),
    e.BranchNotFound: (404, "branch_not_found"),
    e.MemoryNotFound: (404, "memory_not_found"),
    e.SessionExists: (409, "session_exists"),
    e.Conflict: (409, "conflict"),
    e.PayloadTooLarge: (413, "payload_too_large"),
    e.StoreUnavailable: (503, "unavailable"),
    e.StoreError: (500, "store_error"),
}

# codes the API answers for what is not a store error (a request the API itself refuses), as the store's
REFUSALS: dict[str, type[e.StoreError]] = {
    "insufficient_scope": e.AccessDenied,  # 403: the token lacks the scopes the deployment requires
    "invalid_request": e.InvalidInput,  # 422: the request does not match its schema
    "unsupported_media_type": e.InvalidInput,  # 415
    "not_found": e.InvalidInput,  # 404 where absence is not an answer
    "route_not_found": e.InvalidInput,  # 404: no such route
    "internal_error": e.StoreUnavailable,  # 500: an unexpected failure, logged under the request id
}

_BY_CODE: dict[str, type[e.StoreError]] = {code: kind for kind, (_, code) in ERRORS.items()} | REFUSALS


def _by_status(status: int) -> type[e.StoreError]:
    if status in (401, 403):
        return e.AccessDenied
    if status == 409:
        return e.Conflict
    if status == 413:
        return e.PayloadTooLarge
    if status >= 500:
        return e.StoreUnavailable
    return e.InvalidInput if 400 <= status < 500 else e.StoreError


def error_for(status: int, code: str, message: str, request: Any) -> e.StoreError:
    """The store's exception for the API's answer (`code` read first, then the status), naming what
    `request` names (its session, message, artifact)."""
    kind = _BY_CODE.get(code) or _by_status(status)
    sid = str(getattr(request, "session_id", ""))
    if kind is e.SessionNotFound:
        return e.SessionNotFound(sid)
    if kind is e.SessionExists:
        return e.SessionExists(sid)
    if kind is e.MessageNotFound:
        return e.MessageNotFound(sid, str(getattr(request, "message_id", "")))
    if kind is e.ArtifactNotFound:
        presign = getattr(request, "presign", None)
        name = str(getattr(presign or request, "name", ""))
        return e.ArtifactNotFound(sid, name, getattr(presign or request, "version", None))
    if kind is e.BranchNotFound:
        return e.BranchNotFound(sid, str(getattr(request, "branch", "")))
    if kind is e.StoreUnavailable:
        return e.StoreUnavailable(f"the API answered {status}: {message}")
    if kind is e.AccessDenied:
        return e.AccessDenied(f"the API refused the token: {message}")
    return kind(message)
