"""How `HttpBackend` sends one HTTP request: a `Transport` turns an `Outgoing` request into an `Answer`
(a status, headers and a body read as it is wanted). `UrllibTransport` is the standard library's, over
the network; tests and the local tools pass one that calls the API's handler in-process instead.

A transport raises `ConnectionError` (reset, refused, closed early) or `TimeoutError` when no answer
came; every HTTP status, errors included, is an answer."""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from store.core import codec

Body = bytes | IO[bytes] | None


@dataclass(frozen=True)
class Outgoing:
    """One request: `url` absolute; a file body is sent from where it stands, with its Content-Length."""

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    body: Body = None


class Answer(Protocol):
    """A response whose body is read as the caller wants it (whole, or in parts for a download)."""

    status: int
    headers: dict[str, str]

    def read(self, n: int = -1) -> bytes:
        """Up to `n` bytes of the body (all of what is left when `n` is negative); b"" at its end."""
        ...

    def close(self) -> None:
        """Release the connection (the rest of the body is not read)."""
        ...


class Transport(Protocol):
    def __call__(self, request: Outgoing, timeout: float) -> Answer:
        """The answer to `request` within `timeout` seconds; ConnectionError or TimeoutError without one."""
        ...


@dataclass
class BufferedAnswer:
    """An answer whose body is at hand (an in-process handler's)."""

    status: int
    headers: dict[str, str]
    body: bytes
    _at: int = 0

    def read(self, n: int = -1) -> bytes:
        end = len(self.body) if n < 0 else min(len(self.body), self._at + n)
        out, self._at = self.body[self._at : end], end
        return out

    def close(self) -> None:
        self._at = len(self.body)


class _StreamAnswer:
    """urllib's response (or HTTPError, which is one), read as it arrives."""

    def __init__(self, response: Any) -> None:
        self._response = response
        self.status = int(response.status if hasattr(response, "status") else response.code)
        self.headers = dict(response.headers.items())

    def read(self, n: int = -1) -> bytes:
        try:
            return bytes(self._response.read(n if n >= 0 else None))
        except (http.client.HTTPException, OSError) as exc:
            raise ConnectionError(f"the answer broke off: {exc}") from None

    def close(self) -> None:
        self._response.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are answers here (a download's presigned URL), never followed with the bearer token."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class UrllibTransport:
    """The standard library's HTTP client; redirects are returned, not followed."""

    def __init__(self) -> None:
        self._opener = urllib.request.build_opener(_NoRedirect)

    def __call__(self, request: Outgoing, timeout: float) -> Answer:
        headers = dict(request.headers)
        data: Any = request.body
        if data is not None and not isinstance(data, bytes) and "Content-Length" not in headers:
            raise ValueError("a file body needs its Content-Length")
        sent = urllib.request.Request(request.url, data=data, method=request.method, headers=headers)
        try:
            return _StreamAnswer(self._opener.open(sent, timeout=timeout))
        except urllib.error.HTTPError as exc:
            return _StreamAnswer(exc)
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise TimeoutError(str(reason)) from None
            raise ConnectionError(str(reason)) from None
        except (http.client.HTTPException, ConnectionError) as exc:  # reset or closed before an answer
            raise ConnectionError(str(exc) or type(exc).__name__) from None


@dataclass(frozen=True)
class Reply:
    """An answer read whole: its status, headers and body (`json()`: the body parsed, None when empty)."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return codec.parse(self.body, "the API's answer", max_depth=codec.MAX_DEPTH + 8) if self.body else None
