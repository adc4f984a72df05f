"""`ArtifactReader`: a file-like, read-only stream of one artifact version, checked as it is read."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

from store.errors import StoreError, StoreUnavailable
from store.models import ArtifactVersion

CHUNK = 1024 * 1024


class ArtifactReader:
    """Reads an artifact version's bytes in pieces (`read(n)`, iteration, `readinto`), never the whole
    object unless asked (`read()`). When the end is reached, the bytes read are checked against the
    version's size and SHA-256 (StoreError if they differ). Close it, or use it as a context manager."""

    def __init__(self, version: ArtifactVersion, read: Callable[[int], bytes], close: Callable[[], None]) -> None:
        self.version = version
        self._read = read
        self._close = close
        self._sha = hashlib.sha256()
        self._size = 0
        self._done = False
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes (all that remain when `n` is negative); b"" at the end."""
        if self.closed:
            raise ValueError("read from a closed ArtifactReader")
        if self._done:
            return b""
        if n is None or n < 0:
            parts = []
            while chunk := self.read(CHUNK):
                parts.append(chunk)
            return b"".join(parts)
        try:
            data = self._read(n) if n else b""
        except StoreError:
            raise
        except Exception as exc:  # the SDK's stream errors must not reach callers
            raise StoreUnavailable(f"reading artifact {self.version.name!r} failed: {exc}") from None
        if n and not data:
            self._finish()
        else:
            self._sha.update(data)
            self._size += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self.read(CHUNK):
            yield chunk

    def _finish(self) -> None:
        self._done = True
        if self._size != self.version.size or self._sha.hexdigest() != self.version.sha256:
            raise StoreError(
                f"artifact {self.version.name!r} v{self.version.version} did not match its size and sha256"
            )

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._close()

    def __enter__(self) -> ArtifactReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
