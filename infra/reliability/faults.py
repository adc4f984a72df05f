"""Fault injection for the sync store's clients, with botocore event hooks: a chosen share of DynamoDB
and S3 requests fail with throttling, a 500, a timeout, a connection reset, or reach the server and then
lose their response (the SDK sees a reset and resends). Usable from tests and from the CLI
(`python -m infra.cli faults`). Lost responses need a real endpoint (moto's server), since the injector sends
the request itself before dropping the answer."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

KINDS = ("throttle", "server-error", "timeout", "reset", "lost-response")


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


def _error_response(request: Any, service: str, status: int, code: str) -> Any:
    from botocore.awsrequest import AWSResponse

    if service == "s3":
        body = f"<Error><Code>{code}</Code><Message>injected</Message></Error>".encode()
        headers: Any = {"Content-Type": "application/xml"}
    else:
        body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "injected"}).encode()
        headers = {"Content-Type": "application/x-amz-json-1.0"}
    return AWSResponse(request.url, status, headers, _Raw(body))


@dataclass
class FaultInjector:
    """Fails `rate` of the requests of the clients it is attached to, choosing among `kinds`; counts what
    it did in `injected` (by kind) and `requests`."""

    rate: float
    seed: int = 0
    kinds: tuple[str, ...] = KINDS
    injected: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    _random: random.Random = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _attached: list[tuple[Any, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def attach(self, client: Any) -> None:
        event = f"before-send.{client.meta.service_model.service_id.hyphenize()}"
        client.meta.events.register(event, self._before_send, unique_id=f"faults-{id(self)}")
        self._attached.append((client, event))

    def detach(self) -> None:
        for client, event in self._attached:
            client.meta.events.unregister(event, unique_id=f"faults-{id(self)}")
        self._attached.clear()

    def _http(self) -> Any:
        """The injector's own HTTP session (made once), for sending requests whose answer it drops."""
        with self._lock:
            if not hasattr(self, "_session"):
                from botocore.httpsession import URLLib3Session

                self._session = URLLib3Session()
            return self._session

    def _choose(self) -> str | None:
        with self._lock:
            self.requests += 1
            if self._random.random() >= self.rate:
                return None
            kind = self._random.choice(self.kinds)
            self.injected[kind] += 1
            return kind

    def _before_send(self, request: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import ConnectionClosedError, ReadTimeoutError

        kind = self._choose()
        if kind is None:
            return None
        service = "s3" if str(kwargs.get("event_name", "")).startswith("before-send.s3") else "dynamodb"
        if kind == "throttle":
            code = "SlowDown" if service == "s3" else "ThrottlingException"
            return _error_response(request, service, 503 if service == "s3" else 400, code)
        if kind == "server-error":
            code = "InternalError" if service == "s3" else "InternalServerError"
            return _error_response(request, service, 500, code)
        if kind == "timeout":
            raise ReadTimeoutError(endpoint_url=request.url)
        if kind == "lost-response":
            self._http().send(request)  # the server applies it; the answer never arrives
        raise ConnectionClosedError(endpoint_url=request.url)
