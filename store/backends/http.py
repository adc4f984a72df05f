"""A backend that carries each request to a deployed (or local) HTTP API: `SessionStore(backend=
HttpBackend(url, token))` is a store whose every call is one or two HTTPS requests to the stack's API,
with the same results and typed errors as a store on the tables. The owner is the token's subject:
session ids are the caller's own names (the API scopes them), and an `owner=` given to a call is not sent.

Operations the API does not offer (`pop_message`, `reclaim`: `supports` lists what it does) raise
InvalidInput, naming the operation. Standard library only (urllib): no extra."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from store import requests as rq
from store.backend import EVERY_OPERATION, Backend, refuse_unsupported
from store.backends import http_routes
from store.backends.http_errors import ERRORS, error_for
from store.backends.http_transport import Answer, Body, Outgoing, Reply, Transport, UrllibTransport
from store.core import codec
from store.errors import InvalidInput, SessionNotFound, StoreError, StoreUnavailable
from store.requests import operations

R = TypeVar("R")
DEFAULT_TIMEOUT = 30.0
CONNECTION_ATTEMPTS = 3  # a reset or refused connection is tried again, as the SDK's clients do
BACKOFF_SECONDS = 0.05


def _retryable(method: str, headers: dict[str, str]) -> bool:
    """A request that may be sent again when its connection broke: one whose repetition changes nothing
    (GET, PUT, DELETE, PATCH of fields to values) or that carries an idempotency key."""
    return method in ("GET", "HEAD", "PUT", "DELETE", "PATCH") or "Idempotency-Key" in headers


class HttpBackend(Backend):
    """Requests to the API at `url` with `token` (a bearer JWT whose `sub` is the owner), sent by
    `transport` (the standard library's HTTP client unless another is given)."""

    name = "http"

    def __init__(
        self, url: str, token: str | None, *, timeout: float = DEFAULT_TIMEOUT, transport: Transport | None = None
    ) -> None:
        split = urlsplit(url)
        if split.scheme not in ("http", "https") or not split.netloc:
            raise InvalidInput(f"the API's URL must be http(s)://host[:port][/stage], not {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.transport: Transport = transport or UrllibTransport()

    # -- transport -------------------------------------------------------------------------------
    def open(
        self,
        method: str,
        path: str,
        *,
        query: str = "",
        body: Any = None,
        raw: Body = None,
        headers: dict[str, str] | None = None,
        authorized: bool = True,
    ) -> Answer:
        """One request, its answer unread whatever its status (errors are read by `check`). A connection
        that breaks before an answer is tried again (CONNECTION_ATTEMPTS in all, with a short backoff)
        when repeating the request changes nothing; StoreUnavailable when the API cannot be reached or does
        not answer in time. A JSON `body` is checked as the store checks what it keeps (InvalidInput)."""
        url = (self.url + path if authorized else path) + (f"?{query}" if query else "")
        sent = dict(headers or {})
        data = raw
        if body is not None:
            data = codec.dumps(body, "the request").encode("utf-8")
            sent["Content-Type"] = "application/json"
        if authorized and self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        start = data.tell() if data is not None and not isinstance(data, bytes) else 0
        attempts = CONNECTION_ATTEMPTS if _retryable(method, sent) else 1
        for attempt in range(1, attempts + 1):
            try:
                return self.transport(Outgoing(method, url, sent, data), self.timeout)
            except ConnectionError as exc:
                if attempt == attempts:
                    raise StoreUnavailable(f"the API at {self.url} did not answer: {exc}") from None
            except TimeoutError as exc:
                raise StoreUnavailable(f"the API at {self.url} did not answer in time: {exc}") from None
            if data is not None and not isinstance(data, bytes):
                data.seek(start)
            time.sleep(BACKOFF_SECONDS * 2 ** (attempt - 1) * (0.5 + random.random()))  # nosec B311: jitter
        raise AssertionError("unreachable")  # pragma: no cover

    def send(self, method: str, path: str, **kwargs: Any) -> Reply:
        """`open`, its body read whole (an answer of the API: JSON, bounded)."""
        answer = self.open(method, path, **kwargs)
        try:
            body = answer.read()
        except ConnectionError as exc:
            raise StoreUnavailable(f"the API at {self.url} broke off its answer: {exc}") from None
        finally:
            answer.close()
        return Reply(answer.status, answer.headers, body)

    def check(self, reply: Reply, request: rq.Request[Any], *, absent: bool = False) -> Reply | None:
        """The reply when it succeeded; None for a 404 where absence is an answer (`absent`: the thing
        asked for is missing, not its session, unless the session is what was asked for); otherwise the
        typed error the API's code stands for, with the API's message."""
        if reply.status < 400:
            return reply
        try:
            error = reply.json() or {}
            code, message = str(error.get("code", "")), str(error.get("message", ""))
        except (StoreError, AttributeError):
            code, message = "", reply.body[:200].decode("utf-8", "replace")
        session_missing = code == ERRORS[SessionNotFound][1] and not isinstance(request, rq.GetSession)
        if absent and reply.status == 404 and not session_missing:
            return None
        raise error_for(reply.status, code, message or f"HTTP {reply.status}", request)

    def call(self, request: rq.Request[Any], method: str, path: str, **kwargs: Any) -> Any:
        """A request whose success is JSON: the parsed body."""
        reply = self.check(self.send(method, path, **kwargs), request)
        return None if reply is None else reply.json()

    def maybe(self, request: rq.Request[Any], method: str, path: str, **kwargs: Any) -> Any:
        """As `call`, but None where the API answers 404 (the thing does not exist)."""
        reply = self.check(self.send(method, path, **kwargs), request, absent=True)
        return None if reply is None else reply.json()

    # -- the interface ---------------------------------------------------------------------------
    def execute(self, request: rq.Request[R]) -> R:
        refuse_unsupported(self, request)
        return cast(R, ROUTES[type(request)](self, request))


ROUTES: dict[type[rq.Request[Any]], Callable[[HttpBackend, Any], Any]] = {
    request: getattr(http_routes, name) for name, request in operations().items() if hasattr(http_routes, name)
}
HttpBackend.supports = EVERY_OPERATION & {r.operation for r in ROUTES}
