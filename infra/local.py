"""The local stack: DynamoDB tables created from template.yaml, on moto (in-process or its server)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from infra.template import TABLE_ENV, tables

REGION = "us-east-1"
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


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


def create_tables(client: Any, prefix: str = "agent-store") -> LocalTables:
    """Create every table of template.yaml through `client` (names: prefix-logicalid), enable TTL as
    the template says, and return their names."""
    names: dict[str, str] = {}
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


@contextlib.contextmanager
def moto_server(port: int | None = None) -> Iterator[str]:
    """moto's server on 127.0.0.1 (a thread, stopped on exit); yields its endpoint URL."""
    from moto.server import ThreadedMotoServer

    port = port or free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
