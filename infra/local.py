"""The local stack: DynamoDB tables created from template.yaml, on moto (in-process or its server)."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from infra.template import BUCKET_ENV, TABLE_ENV, buckets, tables

REGION = "us-east-1"
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def local_client(service: str = "dynamodb", endpoint_url: str | None = None, config: Any = None) -> Any:
    """A client for the embedded AWS (fake credentials, us-east-1)."""
    import boto3

    return boto3.client(  # type: ignore[call-overload]
        service, region_name=REGION, endpoint_url=endpoint_url, config=config, **FAKE_CREDENTIALS
    )


@dataclass(frozen=True)
class LocalTables:
    """Names of the tables created locally, by the environment variable that carries them."""

    names: dict[str, str]

    @property
    def sessions(self) -> str:
        return self.names["SESSIONS_TABLE"]

    @property
    def messages(self) -> str:
        return self.names["MESSAGES_TABLE"]

    @property
    def bucket(self) -> str | None:
        return self.names.get("ARTIFACTS_BUCKET")


def create_tables(client: Any, prefix: str = "agent-store", s3: Any = None) -> LocalTables:
    """Create every table of template.yaml through `client` (names: prefix-logicalid), enable TTL as
    the template says, and, given an S3 client, every bucket (names: prefix-logicalid, lowercase) with
    its encryption, public access block, ownership and lifecycle rules; return their names."""
    names: dict[str, str] = {}
    if s3 is not None:
        for logical_id, bucket_spec in buckets().items():
            bucket = f"{prefix}-{logical_id}".lower()
            s3.create_bucket(Bucket=bucket)
            for op, params in bucket_spec.setup_requests(bucket):
                getattr(s3, op)(**params)
            if logical_id in BUCKET_ENV:
                names[BUCKET_ENV[logical_id]] = bucket
    for logical_id, spec in tables().items():
        name = f"{prefix}-{logical_id}"
        client.create_table(**spec.create_request(name))
        if spec.ttl_attribute:
            client.update_time_to_live(
                TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": spec.ttl_attribute}
            )
        if logical_id in TABLE_ENV:
            names[TABLE_ENV[logical_id]] = name
    return LocalTables(names)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _OneRequestAtATime:
    """WSGI wrapper executing one request at a time. moto's backends are not safe under concurrent
    requests (a transaction can be half-applied, or fail on a dict changed mid-iteration); DynamoDB
    executes each request atomically. Clients still connect and interleave their requests freely."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: Any, start_response: Any) -> list[bytes]:
        with self.lock:
            return list(self.app(environ, start_response))


def _serialized_server_class() -> Any:
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    class SerializedMotoServer(ThreadedMotoServer):
        def _server_entry(self) -> None:
            app = _OneRequestAtATime(DomainDispatcherApplication(create_backend_app))
            self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
            self._server_ready_event.set()
            self._server.serve_forever()

    return SerializedMotoServer


@contextlib.contextmanager
def moto_server(port: int | None = None) -> Iterator[str]:
    """moto's server on 127.0.0.1 only (a thread, stopped on exit), executing one request at a time;
    yields its endpoint URL."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    port = port or free_port()
    server = _serialized_server_class()(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
