"""Opaque pagination cursors: URL-safe base64 of a small JSON document bound to what it pages."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from store.core import codec
from store.errors import InvalidInput


def encode(kind: str, scope: str, position: dict[str, Any]) -> str:
    """A cursor for resuming listing `kind` of `scope` (a session id or an owner) after `position`."""
    raw = json.dumps({"k": kind, "s": scope, "p": position}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: Any, kind: str, scope: str) -> dict[str, Any]:
    """The position in `cursor`; InvalidInput when it is malformed or was made for another listing."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > 2048:
        raise InvalidInput("cursor is malformed")
    try:
        doc = codec.parse(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)), "cursor", max_depth=4)
    except (binascii.Error, ValueError, InvalidInput):
        raise InvalidInput("cursor is malformed") from None
    if not isinstance(doc, dict) or doc.get("k") != kind or doc.get("s") != scope or not isinstance(doc.get("p"), dict):
        raise InvalidInput("cursor does not belong to this listing")
    position: dict[str, Any] = doc["p"]
    return position
