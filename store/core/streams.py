"""Reading callers' synchronous byte streams (used by the sync driver and the memory backend)."""

from __future__ import annotations

from typing import Any

from store.errors import InvalidInput, StoreError


def read_chunk(source: Any, size: int) -> bytes:
    """The next bytes of a sync source: a file-like object (`read(size)`) or an iterator of bytes
    (whose chunks may be any size). b"" at the end. InvalidInput when the source fails or yields
    something other than bytes."""
    try:
        data = source.read(size) if hasattr(source, "read") else next(source, b"")
    except StoreError:
        raise
    except Exception as exc:  # the caller's own stream failed: their error, reported as bad input
        raise InvalidInput(f"reading the caller's stream failed: {type(exc).__name__}: {exc}") from exc
    return _as_bytes(data)


def is_async_source(source: Any) -> bool:
    """True for an async iterator of bytes or an object whose `read` is a coroutine function."""
    import inspect

    read = getattr(source, "read", None)
    return hasattr(source, "__anext__") or (read is not None and inspect.iscoroutinefunction(read))


async def aread_chunk(source: Any, size: int) -> bytes:
    """`read_chunk` for any source: sync ones as there, async ones (`await read(size)`, or the next item
    of an async iterator) awaited. InvalidInput when the source fails or yields something else than bytes."""
    import inspect

    if not is_async_source(source):
        return read_chunk(source, size)
    try:
        if hasattr(source, "__anext__"):
            data = await anext(source, b"")
        else:
            data = source.read(size)
            if inspect.isawaitable(data):
                data = await data
    except StoreError:
        raise
    except Exception as exc:  # the caller's own stream failed: their error, reported as bad input
        raise InvalidInput(f"reading the caller's stream failed: {type(exc).__name__}: {exc}") from exc
    return _as_bytes(data)


def _as_bytes(data: Any) -> bytes:
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise InvalidInput(f"a stream must yield bytes, got {type(data).__name__}")
    return data


async def adrain(source: Any, chunk: int = 1024 * 1024) -> bytes:
    """All the bytes of a sync or async source."""
    out = bytearray()
    while data := await aread_chunk(source, chunk):
        out += data
    return bytes(out)
