"""Readers of one artifact version: `ArtifactReader` (sync) and `AsyncArtifactReader`, both checked
against the version's size and SHA-256 as they are read."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from store.core.lifecycle import AsyncClosing
from store.errors import StoreError, StoreUnavailable
from store.models import ArtifactVersion

CHUNK = 1024 * 1024


class _Checked:
    """What both readers share: the running size and digest, and the verdict at the end."""

    def __init__(self, version: ArtifactVersion) -> None:
        self.version = version
        self._sha = hashlib.sha256()
        self._size = 0
        self._done = False
        self.closed = False

    def _before(self) -> None:
        if self.closed:
            raise ValueError("read from a closed artifact reader")

    def _failed(self, exc: Exception) -> StoreError:
        if isinstance(exc, StoreError):
            return exc
        return StoreUnavailable(f"reading artifact {self.version.name!r} failed: {exc}")

    def _took(self, n: int, data: bytes) -> bytes:
        """Account for `data` read for a request of `n` bytes; at the end, check the whole."""
        if n and not data:
            self._done = True
            v = self.version
            if self._size != v.size or self._sha.hexdigest() != v.sha256:
                raise StoreError(f"artifact {v.name!r} version {v.version} did not match its size and sha256")
        else:
            self._sha.update(data)
            self._size += len(data)
        return data


class ArtifactReader(_Checked):
    """Reads an artifact version's bytes in pieces (`read(n)`, iteration, `readinto`), never the whole
    object unless asked (`read()`). When the end is reached, the bytes read are checked against the
    version's size and SHA-256 (StoreError if they differ). Close it, or use it as a context manager."""

    def __init__(self, version: ArtifactVersion, read: Callable[[int], bytes], close: Callable[[], None]) -> None:
        super().__init__(version)
        self._read = read
        self._close = close

    def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes (all that remain when `n` is negative); b"" at the end."""
        self._before()
        if self._done:
            return b""
        if n is None or n < 0:
            return b"".join(iter(self))
        try:
            data = self._read(n) if n else b""
        except Exception as exc:  # the SDK's stream errors must not reach callers
            raise self._failed(exc) from None
        return self._took(n, data)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self.read(CHUNK):
            yield chunk

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._close()

    def __enter__(self) -> ArtifactReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncArtifactReader(_Checked, AsyncClosing):
    """`ArtifactReader` for the async store: `await read(n)`, `async for`, `async with`."""

    def __init__(self, version: ArtifactVersion, read: Callable[[int], Any], close: Callable[[], Any]) -> None:
        super().__init__(version)
        self._read = read
        self._close = close

    @classmethod
    def over(cls, reader: ArtifactReader) -> AsyncArtifactReader:
        """An async view of a sync reader (the memory backend's)."""
        return cls(reader.version, reader._read, reader._close)

    async def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes (all that remain when `n` is negative); b"" at the end."""
        self._before()
        if self._done:
            return b""
        if n is None or n < 0:
            return b"".join([chunk async for chunk in self])
        try:
            data = self._read(n) if n else b""
            if inspect.isawaitable(data):
                data = await data
        except Exception as exc:  # the SDK's stream errors must not reach callers
            raise self._failed(exc) from None
        return self._took(n, data)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        while chunk := await self.read(CHUNK):
            yield chunk

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            done = self._close()
            if inspect.isawaitable(done):
                await done
