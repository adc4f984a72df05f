"""Counting what a store asks of AWS: requests, bytes, and DynamoDB capacity units computed from item
sizes (moto reports a constant ConsumedCapacity, so the units are derived with DynamoDB's own rules).

A `Meter` hooks a boto3 session's events, so every client made from it (by our store or by a peer
library) is counted. While `counting` is on it records, per HTTP request (retries included): the
operation, the request body's bytes, the response body's bytes; and for DynamoDB writes the size of
every item touched before and after the call, read with a separate, unhooked client.

Capacity rules (developer guide, "Item sizes and formats" and "Read/write capacity mode"):
- a write costs ceil(size / 1 KB) WCU, size the larger of the item before and after (a delete: the
  item removed); in TransactWriteItems every action, ConditionCheck included, costs twice that;
- a read costs ceil(size / 4 KB) RCU, halved when eventually consistent, doubled in TransactGetItems;
  a Query or Scan sums the sizes of the items it reads before rounding: whole items, whatever its
  ProjectionExpression or FilterExpression leave out of the answer (they do not lower the bill), so
  such a read is repeated without them, with the same keys, start and Limit, to size what it read.
The time the meter spends reading items is kept apart (`overhead`) and subtracted from wall times.
"""

from __future__ import annotations

import base64
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from store.aws.attrs import item_size

WRITE_UNIT = 1024
READ_UNIT = 4096
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}


@dataclass
class Tally:
    """What one measured operation cost."""

    requests: Counter[str] = field(default_factory=Counter)
    bytes_sent: int = 0
    bytes_received: int = 0
    wcu: float = 0.0
    rcu: float = 0.0
    largest_item: int = 0

    @property
    def request_count(self) -> int:
        return sum(self.requests.values())

    def sample(self, seconds: float | None = None, per: int = 1) -> dict[str, Any]:
        """This tally as the benchmarks record a measurement: divided by `per` (the operations it covered), and
        its wall time if given."""
        counts = {"requests": self.request_count, "bytes_sent": self.bytes_sent, "bytes_received": self.bytes_received}
        out: dict[str, Any] = {k: v / per if per != 1 else v for k, v in counts.items()}
        out |= {"calls": self.describe(), "wcu": self.wcu / per, "rcu": self.rcu / per}
        out |= {"largest_item": self.largest_item} | ({"seconds": seconds} if seconds is not None else {})
        return out

    def describe(self) -> str:
        """'TransactWriteItems + 2 GetObject' style summary of the requests."""
        return " + ".join(f"{n} {op}" if n > 1 else op for op, n in sorted(self.requests.items()))


def timed(meter: Any, action: Callable[[], Any]) -> tuple[dict[str, Any], Any]:
    """What `action` asked of AWS through `meter` (a Meter, or one that reports another process's) and how long
    it took, less the meter's own item reads: (the sample, the action's result)."""
    with meter.measure() as tally:
        started = time.perf_counter()
        result = action()
        seconds = time.perf_counter() - started - meter.overhead
    return tally.sample(seconds), result


def _key(item: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {n: item[n] for n in names if n in item}


def _binary(value: dict[str, Any]) -> dict[str, Any]:
    """Decode the wire's base64 binary attribute values to bytes (their size is the raw length)."""
    if len(value) == 1:
        if isinstance(value.get("B"), str):
            return {"B": base64.b64decode(value["B"])}
        if isinstance(value.get("BS"), list):
            return {"BS": [base64.b64decode(x) for x in value["BS"]]}
    return value


class Meter:
    """Counts the requests of every client created from `session` after construction."""

    def __init__(self, session: Any, reader: Any) -> None:
        self.reader = reader  # an unhooked DynamoDB client on the same endpoint
        self.counting = False
        self.capacity = True  # False: count requests and bytes only (no item reads; write units not computed)
        self.tally = Tally()
        self.overhead = 0.0
        self.last_body: Any = None  # the body of the latest request counted
        self._keys: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._before: threading.local = threading.local()
        events = session.events
        events.register("before-send", self._on_send)
        events.register("before-call.dynamodb", self._before_call)
        events.register("after-call", self._after_call)

    @contextmanager
    def measure(self) -> Iterator[Tally]:
        """Count the requests made inside the block into a fresh Tally."""
        self.tally = Tally()
        self.overhead = 0.0
        self.counting = True
        try:
            yield self.tally
        finally:
            self.counting = False

    # -- hooks -------------------------------------------------------------------------------------
    def _on_send(self, request: Any, event_name: str, **_: Any) -> None:
        if not self.counting:
            return
        body = request.body
        size = int(request.headers.get("Content-Length") or (len(body) if isinstance(body, bytes | str) else 0))
        with self._lock:
            self.tally.requests[event_name.rsplit(".", 1)[-1]] += 1
            self.tally.bytes_sent += size
            self.last_body = body

    def _after_call(self, http_response: Any, parsed: Any, model: Any, **_: Any) -> None:
        if not self.counting:
            return
        started = time.perf_counter()
        if model.has_streaming_output:
            received = int(parsed.get("ContentLength") or 0)
        else:
            received = len(http_response.content or b"")
        with self._lock:
            self.tally.bytes_received += received
        if model.service_model.service_name == "dynamodb" and http_response.status_code == 200:
            # the wire response, not `parsed`: boto3's resources turn that into Python values in place
            self._capacity(model.name, json.loads(http_response.content or b"{}", object_hook=_binary))
        self.overhead += time.perf_counter() - started

    def _before_call(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        self._before.targets = []
        if not self.counting:
            return
        started = time.perf_counter()
        request = json.loads(params["body"] or b"{}")  # the serialized request: low-level attribute values
        self._before.read_factor = 1.0 if request.get("ConsistentRead") else 0.5
        self._before.narrowed = request if model.name in ("Query", "Scan") and _narrowed(request) else None
        if model.name not in WRITES or not self.capacity:
            return
        targets = list(self._targets(model.name, request))
        self._before.targets = [(t, k, factor, self._size(t, k)) for t, k, factor in targets]
        self.overhead += time.perf_counter() - started

    # -- capacity ----------------------------------------------------------------------------------
    def _key_names(self, table: str) -> tuple[str, ...]:
        if table not in self._keys:
            schema = self.reader.describe_table(TableName=table)["Table"]["KeySchema"]
            self._keys[table] = tuple(k["AttributeName"] for k in schema)
        return self._keys[table]

    def _targets(self, op: str, params: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], int]]:
        """(table, key, capacity factor) of every item a write touches."""
        if op in ("PutItem", "UpdateItem", "DeleteItem"):
            table = params["TableName"]
            key = params.get("Key") or _key(params["Item"], self._key_names(table))
            yield table, key, 1
        elif op == "TransactWriteItems":
            for action in params["TransactItems"]:
                ((_, spec),) = action.items()
                table = spec["TableName"]
                yield table, spec.get("Key") or _key(spec["Item"], self._key_names(table)), 2
        elif op == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                for request in requests:
                    if "PutRequest" in request:
                        yield table, _key(request["PutRequest"]["Item"], self._key_names(table)), 1
                    else:
                        yield table, request["DeleteRequest"]["Key"], 1

    def _size(self, table: str, key: dict[str, Any]) -> int:
        item = self.reader.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        return item_size(item) if item else 0

    def _capacity(self, op: str, response: dict[str, Any]) -> None:
        targets = getattr(self._before, "targets", [])
        self._before.targets = []
        wcu = 0.0
        largest = 0
        for table, key, factor, before in targets:
            after = self._size(table, key)
            largest = max(largest, after)
            wcu += write_units(before, after, factor)
        narrowed = getattr(self._before, "narrowed", None)
        self._before.narrowed = None
        if narrowed is not None:
            response = self.reader.query(**whole(narrowed)) if op == "Query" else self.reader.scan(**whole(narrowed))
        rcu = read_units(op, response, getattr(self._before, "read_factor", 0.5))
        with self._lock:
            self.tally.wcu += wcu
            self.tally.rcu += rcu
            self.tally.largest_item = max(self.tally.largest_item, largest)


def _narrowed(request: dict[str, Any]) -> bool:
    return any(k in request for k in ("ProjectionExpression", "FilterExpression", "Select"))


def whole(request: dict[str, Any]) -> dict[str, Any]:
    """A Query or Scan request reading what `request` reads, answering with whole items: no projection,
    filter or Select, and only the names and values its key condition uses."""
    out = {k: v for k, v in request.items() if k not in ("ProjectionExpression", "FilterExpression", "Select")}
    used = set(re.findall(r"[#:][A-Za-z0-9_]+", out.get("KeyConditionExpression", "")))
    names = {k: v for k, v in (out.pop("ExpressionAttributeNames", None) or {}).items() if k in used}
    values = {k: v for k, v in (out.pop("ExpressionAttributeValues", None) or {}).items() if k in used}
    return {
        **out,
        **({"ExpressionAttributeNames": names} if names else {}),
        **({"ExpressionAttributeValues": values} if values else {}),
    }


def metered(url: str) -> tuple[Any, Meter]:
    """A boto3 session for the local AWS at `url` whose every client is counted, and its meter (reading item
    sizes through an unhooked client)."""
    from infra.local.aws import local_client, local_session

    session = local_session()
    return session, Meter(session, local_client(endpoint_url=url))


def write_units(before: int, after: int, factor: int = 1) -> float:
    """WCU of one write of an item that was `before` bytes and is `after` bytes (0: absent); `factor` 2
    inside TransactWriteItems."""
    return float(factor * max(1, math.ceil(max(before, after) / WRITE_UNIT)))


def read_units(op: str, response: dict[str, Any], factor: float = 0.5) -> float:
    """RCU of a read from its response (low-level attribute values); `factor` 1 for a strongly consistent
    read, 0.5 for an eventually consistent one."""
    if op == "GetItem":
        return factor * math.ceil(item_size(response["Item"]) / READ_UNIT) if "Item" in response else 0.0
    if op in ("Query", "Scan"):
        total = sum(item_size(i) for i in response.get("Items", []))
        return factor * max(1, math.ceil(total / READ_UNIT))
    if op == "BatchGetItem":  # consistency is per table there; ours and the peers' read eventually
        return sum(
            0.5 * math.ceil(item_size(i) / READ_UNIT) for items in response.get("Responses", {}).values() for i in items
        )
    if op == "TransactGetItems":
        return float(sum(2 * math.ceil(item_size(r["Item"]) / READ_UNIT) for r in response["Responses"] if "Item" in r))
    return 0.0
