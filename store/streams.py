"""Reading callers' synchronous byte streams (used by the sync driver and the memory backend)."""

from __future__ import annotations

from typing import Any

from store.errors import InvalidInput


def read_chunk(source: Any, size: int) -> bytes:
    """The next bytes of a sync source: a file-like object (`read(size)`) or an iterator of bytes
    (whose chunks may be any size). b"" at the end. InvalidInput when the source fails or yields
    something other than bytes."""
    try:
        data = source.read(size) if hasattr(source, "read") else next(source, b"")
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"reading the caller's stream failed: {exc}") from exc
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise InvalidInput(f"a stream must yield bytes, got {type(data).__name__}")
    return data
