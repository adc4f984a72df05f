"""JSON encoding and compression of stored bodies, shared by every backend.

A body is compact JSON; at or above `COMPRESS_THRESHOLD` bytes it is zlib-compressed. The codec is
recorded beside the body ("json" or "zlib") so it can change later without rewriting old items.
The choice was measured once (docs/decisions.md, "Codec").
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zlib
from typing import Any

from store.errors import InvalidInput, PayloadTooLarge, StoreError

# DynamoDB's item limit is 400 KB; a stored body may use all but 8 KB of it (keys, ids, metadata).
MAX_BODY_BYTES = 400 * 1024 - 8 * 1024
# A transaction carries at most 4 MB; the bodies of one write may use all but 64 KB of it.
MAX_WRITE_BYTES = 4 * 1024 * 1024 - 64 * 1024
COMPRESS_THRESHOLD = 512
ZLIB_LEVEL = 6
CODEC_JSON = "json"
CODEC_ZLIB = "zlib"
MAX_DEPTH = 64
MAX_INT_DIGITS = 1000
_INT_LIMIT = 10**MAX_INT_DIGITS
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def check_json(value: Any, what: str = "value", *, max_depth: int = MAX_DEPTH) -> None:
    """InvalidInput unless `value` is JSON this store can encode and every reader can decode: objects with
    string keys, arrays (lists or tuples), strings without lone surrogates (they have no UTF-8 form),
    finite floats, integers of at most MAX_INT_DIGITS digits, booleans and None, nested at most
    `max_depth` levels. One pass, no recursion (so no depth can exhaust the stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                raise InvalidInput(f"{what} holds a lone surrogate (text that has no UTF-8 encoding)")
        elif isinstance(v, bool) or v is None:
            continue
        elif isinstance(v, int):
            if not -_INT_LIMIT < v < _INT_LIMIT:
                raise InvalidInput(f"{what} holds an integer of more than {MAX_INT_DIGITS} digits")
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise InvalidInput(f"{what} holds {v!r}, which JSON cannot represent")
        elif isinstance(v, dict | list | tuple):
            if depth > max_depth:
                raise InvalidInput(f"{what} is nested deeper than {max_depth} levels")
            if isinstance(v, dict):
                for key, child in v.items():
                    if not isinstance(key, str):
                        raise InvalidInput(f"{what} has a key that is not a string: {type(key).__name__}")
                    if _SURROGATE.search(key):
                        raise InvalidInput(f"{what} has a key with a lone surrogate")
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in v)
        else:
            raise InvalidInput(f"{what} is not JSON: it holds a {type(v).__name__}")


class _TooMany(Exception):
    """Raised inside the decoder once a document holds more objects than allowed."""


def loads(
    text: str | bytes, what: str = "the JSON", *, max_depth: int = MAX_DEPTH, max_objects: int | None = None
) -> Any:
    """JSON from an untrusted source, refused with InvalidInput (never a raw exception) when no store could
    keep it: NaN or Infinity, integers of more than MAX_INT_DIGITS digits, floats beyond a double, lone
    surrogates, nesting deeper than `max_depth` (however deep: the decoder's own recursion is caught). With
    `max_objects`, PayloadTooLarge once it holds more JSON objects than that, counted while it is decoded, so a
    body of millions of empty objects is refused before they are all built. Text that is not JSON at all
    raises json.JSONDecodeError (a ValueError), for callers that answer it differently; `parse` refuses it too."""
    count = 0

    def refuse_constant(name: str) -> Any:
        raise InvalidInput(f"{what} holds {name}, which is not JSON")

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise InvalidInput(f"{what} holds an integer of more than {MAX_INT_DIGITS} digits")
        return int(digits)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal count
        count += 1
        if max_objects is not None and count > max_objects:
            raise _TooMany
        return dict(items)

    try:
        value = json.loads(text, parse_constant=refuse_constant, parse_int=bounded_int, object_pairs_hook=pairs)
    except RecursionError:
        raise InvalidInput(f"{what} is nested deeper than {max_depth} levels") from None
    except _TooMany:
        raise PayloadTooLarge(f"{what} holds more than {max_objects} JSON objects") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} is not UTF-8 text") from None
    check_json(value, what, max_depth=max_depth)
    return value


def parse(
    text: str | bytes, what: str = "the JSON", *, max_depth: int = MAX_DEPTH, max_objects: int | None = None
) -> Any:
    """`loads`, with text that is not JSON refused as InvalidInput too."""
    try:
        return loads(text, what, max_depth=max_depth, max_objects=max_objects)
    except json.JSONDecodeError:
        raise InvalidInput(f"{what} is not JSON") from None


def dumps(value: Any, what: str = "value") -> str:
    """Compact JSON text of `value`; InvalidInput when `check_json` refuses it."""
    check_json(value, what)
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:  # a container subclass that misbehaves
        raise InvalidInput(f"{what} is not JSON-serialisable: {exc}") from None


def canonical(value: Any) -> str:
    """A canonical JSON text of `value` (sorted keys): equal JSON values give equal strings."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":"))


def digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of `value` (an idempotent request's fingerprint)."""
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def encode(value: Any, what: str = "value", limit: int = MAX_BODY_BYTES) -> tuple[str, bytes]:
    """(codec, payload) for storing `value`; PayloadTooLarge when the stored form exceeds `limit` bytes."""
    return encode_text(dumps(value, what), what, limit)


def encode_text(text: str, what: str = "value", limit: int = MAX_BODY_BYTES) -> tuple[str, bytes]:
    """`encode` of a value already written as JSON by `dumps` (or made of such texts): compressed at or above
    COMPRESS_THRESHOLD bytes; PayloadTooLarge when the stored form exceeds `limit` bytes."""
    raw = text.encode("utf-8")
    codec, payload = (
        (CODEC_ZLIB, zlib.compress(raw, ZLIB_LEVEL)) if len(raw) >= COMPRESS_THRESHOLD else (CODEC_JSON, raw)
    )
    if len(payload) > limit:
        raise PayloadTooLarge(f"{what} is {len(payload)} bytes stored ({len(raw)} as JSON); the limit is {limit}")
    return codec, payload


def encode_all(
    values: list[Any], what: str, limit: int = MAX_BODY_BYTES, total_limit: int = MAX_WRITE_BYTES
) -> list[tuple[str, bytes]]:
    """`encode` each value of one write (each at most `limit` stored bytes); PayloadTooLarge when
    together they exceed `total_limit`."""
    out = [encode(v, f"{what}[{i}]", limit) for i, v in enumerate(values)]
    total = sum(len(p) for _, p in out)
    if total > total_limit:
        raise PayloadTooLarge(f"{what} is {total} bytes stored; one atomic write holds at most {total_limit}")
    return out


def decode(codec: str, payload: bytes) -> Any:
    """Inverse of `encode`."""
    return json.loads(decoded_text(codec, payload))


def decoded_text(codec: str, payload: bytes) -> str:
    """The JSON text `encode` stored (inverse of `encode_text`), not parsed."""
    if codec == CODEC_ZLIB:
        payload = zlib.decompress(payload)
    elif codec != CODEC_JSON:
        raise StoreError(f"unknown body codec {codec!r}")
    return payload.decode("utf-8")
