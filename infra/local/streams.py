"""Reading a table's DynamoDB stream from its start, as Lambda's poller does: for the local stack's stream
functions, the reliability checks, the tests and the bench."""

from __future__ import annotations

from typing import Any


class StreamReader:
    """The stream at `arn` read from TRIM_HORIZON through `streams` (a DynamoDB Streams client): each `read` gives
    the records added since the last, a page a shard."""

    def __init__(self, streams: Any, arn: str) -> None:
        self.streams = streams
        self.arn = arn
        self._iterators: dict[str, str] = {}

    @classmethod
    def of_table(cls, streams: Any, dynamodb: Any, table: str) -> StreamReader:
        """The reader of `table`'s stream (`dynamodb` describes the table)."""
        return cls(streams, dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"])

    def read(self) -> list[dict[str, Any]]:
        """The records since the last read: a page of each shard (1,000 records at most each), in shard order."""
        records: list[dict[str, Any]] = []
        for shard in self.streams.describe_stream(StreamArn=self.arn)["StreamDescription"]["Shards"]:
            shard_id = shard["ShardId"]
            if shard_id not in self._iterators:
                start = {"StreamArn": self.arn, "ShardId": shard_id, "ShardIteratorType": "TRIM_HORIZON"}
                self._iterators[shard_id] = self.streams.get_shard_iterator(**start)["ShardIterator"]
            page = self.streams.get_records(ShardIterator=self._iterators[shard_id])
            self._iterators[shard_id] = page.get("NextShardIterator") or self._iterators[shard_id]
            records += page["Records"]
        return records

    def batches(self) -> list[list[dict[str, Any]]]:
        """Every batch `read` gives until the stream has nothing new (each as one invocation would get it)."""
        out = []
        while batch := self.read():
            out.append(batch)
        return out
