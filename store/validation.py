"""Argument checks shared by every backend: each raises InvalidInput and returns the normalised value."""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from store.codec import canonical, dumps
from store.errors import InvalidInput
from store.models import Message, TokenUsage

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MAX_TITLE = 1024
MAX_MODEL = 256
MAX_METADATA_BYTES = 16 * 1024
MAX_LIMIT = 1000
SCOPES = ("session", "run", "workflow")


def ident(value: Any, what: str = "id") -> str:
    """An id (session, message, run, workflow, checkpoint key, record kind, idempotency key, owner)."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInput(f"{what} must match {ID_PATTERN.pattern}, got {value!r:.80}")
    return value


MAX_OWNER = 256


def owner(value: Any, what: str = "owner") -> str:
    """An owner: any printable string of 1 to 256 characters (JWT subjects such as `auth0|5f1c` or an
    e-mail address fit). Owners are only ever stored behind a type prefix or as the index key, so they
    cannot forge another item's key."""
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_OWNER
        or value != value.strip()
        or any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in value)
    ):
        raise InvalidInput(f"{what} must be 1 to {MAX_OWNER} printable characters, got {value!r:.80}")
    return value


def optional_owner(value: Any) -> str | None:
    """`owner`, or None (no owner scoping)."""
    return None if value is None else owner(value)


def optional_ident(value: Any, what: str) -> str | None:
    """`ident`, or None."""
    return None if value is None else ident(value, what)


def new_id() -> str:
    """A fresh random id that matches ID_PATTERN."""
    return uuid.uuid4().hex


def text(value: Any, what: str, limit: int) -> str | None:
    """An optional string of at most `limit` characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string")
    if len(value) > limit:
        raise InvalidInput(f"{what} must be at most {limit} characters")
    return value


def metadata(value: Any, what: str = "metadata") -> dict[str, Any]:
    """A JSON object with string keys, at most MAX_METADATA_BYTES encoded."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and k for k in value):
        raise InvalidInput(f"{what} must be a JSON object with non-empty string keys")
    out = dict(value)
    if len(dumps(out, what).encode()) > MAX_METADATA_BYTES:
        raise InvalidInput(f"{what} must be at most {MAX_METADATA_BYTES} bytes as JSON")
    return out


def metadata_filter(value: Any) -> dict[str, str]:
    """A list_sessions metadata filter: {key: value} pairs, each compared by canonical JSON equality."""
    return {k: canonical(v) for k, v in metadata(value, "metadata filter").items()}


def matches_metadata(stored: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    """True when every filter key is present in `stored` with a canonically equal value."""
    return all(k in stored and canonical(stored[k]) == v for k, v in wanted.items())


def limit(value: Any, what: str = "limit", *, allow_none: bool = False, maximum: int = MAX_LIMIT) -> int | None:
    """A positive page size of at most `maximum` (None when allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInput(f"{what} must be an integer from 1 to {maximum}")
    return value


def seq(value: Any, what: str, *, allow_none: bool = True) -> int | None:
    """A sequence number (>= 0), or None."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{what} must be a non-negative integer")
    return value


def scope(value: Any) -> str:
    """A checkpoint scope."""
    if value not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}")
    return str(value)


def usage(value: Any) -> TokenUsage:
    """A TokenUsage, or a dict of its fields."""
    if isinstance(value, TokenUsage):
        return value
    try:
        return TokenUsage.model_validate(value)
    except ValidationError as exc:
        raise InvalidInput(f"usage is invalid: {exc.errors()[0]['msg']}") from None


def messages(values: Any, *, maximum: int) -> list[Message]:
    """A non-empty list of Messages (or dicts of the same shape), ids checked and unique in the call;
    content must be JSON."""
    if isinstance(values, Message | Mapping) or not isinstance(values, Iterable) or isinstance(values, str | bytes):
        raise InvalidInput("messages must be a list of messages")
    out: list[Message] = []
    for i, value in enumerate(values):
        try:
            msg = value if isinstance(value, Message) else Message.model_validate(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InvalidInput(f"messages[{i}]: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
        if msg.id is not None:
            ident(msg.id, f"messages[{i}].id")
        if msg.tool_call_id is not None:
            text(msg.tool_call_id, f"messages[{i}].tool_call_id", 256)
        out.append(msg)
    if not out:
        raise InvalidInput("messages must not be empty")
    if len(out) > maximum:
        raise InvalidInput(f"at most {maximum} messages may be appended in one call")
    ids = [m.id for m in out if m.id is not None]
    if len(ids) != len(set(ids)):
        raise InvalidInput("message ids must be unique within a call")
    return out


def roles(value: Any) -> frozenset[str] | None:
    """A roles filter: a non-empty collection of role strings, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable) or not all(isinstance(r, str) and r for r in value):
        raise InvalidInput("roles must be a list of role names")
    out = frozenset(value)
    if not out or len(out) > 20:
        raise InvalidInput("roles must name 1 to 20 roles")
    return out


def json_value(value: Any, what: str) -> Any:
    """Any JSON value (checked by encoding it)."""
    dumps(value, what)
    return value


def json_object(value: Any, what: str) -> dict[str, Any]:
    """A JSON object."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{what} must be a JSON object")
    out = dict(value)
    dumps(out, what)
    return out


def record_list(value: Any) -> list[Any]:
    """A list of JSON records."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput("records must be a list")
    out = list(value)
    dumps(out, "records")
    return out
