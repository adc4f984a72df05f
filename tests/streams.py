"""The tables' stream records as the stack's stream functions receive them (read from moto's stream)."""

from __future__ import annotations

from typing import Any

from infra.local.aws import local_client


def stream_records(client: Any, table: str, streams: Any = None) -> list[dict[str, Any]]:
    """Every record of the table's stream so far (moto keeps them in one shard); `streams` is a DynamoDB
    Streams client where `client` is (in-process moto's when not given)."""
    streams = streams or local_client("dynamodbstreams")
    arn = client.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    out: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON")
        iterator = it["ShardIterator"]
        while iterator:  # a page at a time (1,000 records each), to the end of the shard
            page = streams.get_records(ShardIterator=iterator)
            out.extend(page["Records"])
            iterator = page.get("NextShardIterator") if page["Records"] else None
    return out
