"""The tables' stream records as the stack's stream functions receive them (read from moto's stream)."""

from __future__ import annotations

from typing import Any

from infra.local.aws import local_client
from infra.local.streams import StreamReader


def stream_records(client: Any, table: str, streams: Any = None) -> list[dict[str, Any]]:
    """Every record of the table's stream so far (moto keeps them in one shard); `streams` is a DynamoDB
    Streams client where `client` is (in-process moto's when not given)."""
    reader = StreamReader.of_table(streams or local_client("dynamodbstreams"), client, table)
    return [record for batch in reader.batches() for record in batch]
