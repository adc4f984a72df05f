"""The store's invariants, checked over whole tables and the bucket (an operator's tool: it scans).

    python -m infra.cli check  (SESSIONS_TABLE, MESSAGES_TABLE, ARTIFACTS_BUCKET, AWS_ENDPOINT_URL from the env)

For every live session: sequence numbers 1..last_seq with no gap and nothing beyond; the usage totals
equal the sum of its messages' usages; the state saw no message that does not exist. Everywhere: every
pointer (`ref`, `object`) resolves to an object (but those of a session being deleted, whose objects go
first); no message or child item outlives its session head; every object is referenced (by an item, or a
trace batch by its run's count) or covered by a pending upload intent, which the reclaim step deletes when
it expires (`reclaim_pending`)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from store.aws.packs import expand
from store.models import TokenUsage

TRACE_KEY = re.compile(r"^sessions/[0-9a-f]{32}/(?P<sid>[^/]+)/traces/(?P<run>[^/]+)/(?P<batch>\d{10})\.jsonl\.gz$")
POINTERS = ("ref", "object")


@dataclass
class Report:
    sessions: int = 0
    messages: int = 0
    objects: int = 0
    pending: set[str] = field(default_factory=set)  # objects an unexpired upload intent covers
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def scan(client: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        items.extend(page["Items"])
    return items


def objects(s3: Any, bucket: str) -> set[str]:
    found: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        found.update(o["Key"] for o in page.get("Contents", []))
    return found


def _num(item: dict[str, Any], name: str) -> Decimal | None:
    return Decimal(item[name]["N"]) if name in item else None


def check(dynamodb: Any, s3: Any, sessions_table: str, messages_table: str, bucket: str | None) -> Report:
    """Every invariant of the module docstring; the problems found, in words."""
    report = Report()
    children = scan(dynamodb, sessions_table)
    messages = [m for item in scan(dynamodb, messages_table) for m in expand(item)]  # a pack: its messages
    stored = objects(s3, bucket) if bucket else set()
    report.objects, report.messages = len(stored), len(messages)
    heads = {i["pk"]["S"][2:]: i for i in children if i["pk"]["S"].startswith("S#") and i["sk"]["S"] == "HEAD"}
    report.sessions = len(heads)
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in messages:
        by_session[m["sid"]["S"]].append(m)
    _check_orphans(report, heads, children, by_session)
    for sid, head in heads.items():
        if head.get("deleting", {}).get("BOOL"):
            continue  # a delete in progress: the next delete, or the cascade, finishes it
        _check_session(report, sid, head, by_session.get(sid, []), children)
    _check_objects(report, heads, children, messages, stored)
    return report


def _check_orphans(
    report: Report,
    heads: dict[str, dict[str, Any]],
    children: list[dict[str, Any]],
    by_session: dict[str, list[dict[str, Any]]],
) -> None:
    """Items and messages whose session head is gone; the objects upload intents still hold (`pending`)."""
    for item in children:
        if item["pk"]["S"].startswith("U#"):
            report.pending.update(v["S"] for v in item.get("objects", {}).get("L", []))
        elif item["pk"]["S"].startswith("S#") and item["pk"]["S"][2:] not in heads:
            report.problems.append(f"item {item['pk']['S']} {item['sk']['S']} outlived its session head")
    for sid, found in by_session.items():
        if sid not in heads:
            report.problems.append(f"{len(found)} messages of session {sid} outlived its head")


def _check_objects(
    report: Report,
    heads: dict[str, dict[str, Any]],
    children: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    stored: set[str],
) -> None:
    """Every pointer names an object (but those of a session being deleted: its objects go first) and every
    object is named by a pointer, an upload intent, or a trace run's batches."""
    referenced: set[str] = set()
    being_deleted: set[str] = set()
    deleting = {sid for sid, head in heads.items() if head.get("deleting", {}).get("BOOL")}
    for item in [*children, *messages]:
        named = {item[p]["S"] for p in POINTERS if p in item}
        referenced.update(named)
        pk = item.get("pk", {}).get("S", "")
        if (item["sid"]["S"] if "sid" in item else pk[2:] if pk.startswith("S#") else "") in deleting:
            being_deleted.update(named)
    runs = {
        (i["pk"]["S"][2:], i["sk"]["S"][4:]): int(i["batches"]["N"])
        for i in children
        if i["sk"]["S"].startswith("RUN#")
    }
    for key in sorted(referenced - stored - being_deleted):
        report.problems.append(f"pointer to a missing object: {key}")
    for key in sorted(stored - referenced - report.pending):
        match = TRACE_KEY.match(key)
        if match and runs.get((match["sid"], match["run"]), 0) >= int(match["batch"]):
            continue
        report.problems.append(f"unreferenced object: {key}")


def _check_session(
    report: Report, sid: str, head: dict[str, Any], messages: list[dict[str, Any]], children: list[dict[str, Any]]
) -> None:
    last = int(head.get("last_seq", {}).get("N", "0"))
    seqs = sorted(int(m["seq"]["N"]) for m in messages)
    if seqs != list(range(1, last + 1)):
        report.problems.append(f"session {sid}: sequence numbers {_ranges(seqs)} but last_seq is {last}")
    total = TokenUsage()
    for m in messages:
        if "usage" in m:
            total = total.plus(TokenUsage.model_validate_json(m["usage"]["S"]))
    for name in TokenUsage.fields():
        expected = getattr(total, name)
        got = _num(head, f"usage_{name}")
        if Decimal(str(expected or 0)) != (got or Decimal(0)):
            report.problems.append(f"session {sid}: usage {name} is {got}, its messages add up to {expected}")
    state = next((c for c in children if c["pk"]["S"] == f"S#{sid}" and c["sk"]["S"] == "STATE"), None)
    if state is not None:
        if int(state["seq"]["N"]) > last:
            report.problems.append(f"session {sid}: the state saw message {state['seq']['N']} beyond {last}")
        if state["version"]["N"] != head.get("state_version", {}).get("N"):
            report.problems.append(f"session {sid}: state version {state['version']['N']} is not the head's")


def _ranges(seqs: list[int]) -> str:
    return f"{seqs[:3]}...{seqs[-3:]} ({len(seqs)})" if len(seqs) > 6 else str(seqs)


def reclaim_pending(dynamodb: Any, sessions_table: str, store: Any, streams: Any = None) -> int:
    """The reclaim step, as the cascade does it: hand the sessions table's stream records so far to
    `store.reclaim` (replaced and deleted items release their objects; it is idempotent), then, as
    DynamoDB's TTL would once they expire, remove each pending upload intent and hand the record of that
    removal over too. `streams` is a DynamoDB Streams client (None: skip the stream)."""
    released = 0
    if streams is not None:
        from infra.local.stack import lambda_stream_record
        from infra.local.streams import StreamReader

        for batch in StreamReader.of_table(streams, dynamodb, sessions_table).batches():
            records = [lambda_stream_record(r) for r in batch if r["eventName"] != "INSERT"]
            released += store.reclaim(records) if records else 0
    for item in scan(dynamodb, sessions_table):
        if item["pk"]["S"].startswith("U#"):
            key = {"pk": item["pk"], "sk": item["sk"]}
            dynamodb.delete_item(TableName=sessions_table, Key=key)
            record = {
                "eventName": "REMOVE",
                "userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"},
                "dynamodb": {"Keys": key, "OldImage": item},
            }
            released += store.reclaim([record])
    return released


def main() -> int:
    """`python -m infra.cli check`: print the report; exit status 1 when an invariant is broken."""
    import os

    from infra.local.aws import local_client
    from store.session_store import env_resources, s3_config

    sessions, messages, bucket = env_resources()
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    dynamodb = local_client(endpoint_url=endpoint) if endpoint else _aws("dynamodb")
    s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True)) if endpoint else _aws("s3")
    report = check(dynamodb, s3, sessions, messages, bucket)
    print(
        f"{report.sessions} sessions, {report.messages} messages, {report.objects} objects "
        f"({len(report.pending)} awaiting reclaim)"
    )
    for problem in report.problems:
        print(f"  PROBLEM: {problem}")
    print("consistent" if report.ok else f"{len(report.problems)} problem(s)")
    return 0 if report.ok else 1


def _aws(service: str) -> Any:
    from store.session_store import default_boto3_session

    return default_boto3_session().client(service)
