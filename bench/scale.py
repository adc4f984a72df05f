"""Scale: what one call costs whatever an owner or a session has accumulated.

    .venv/bin/python -m bench.scale [--owners 100 1000 10000] [--sessions 1000 10000 100000]
        [--forks 10 1000 100000] [--rtt-ms 10]

`make bench` runs it after bench/compare.py; it writes bench/scale.json and bench/scale.md. For search,
an owner with 100, 1,000 and 10,000 sessions of 50 messages (first page and one continuation); for a
session of 1,000, 10,000 and 100,000 messages: `load_full` whole and its live context (`last=50`), and
`delete_session` inside an API request's deadline; for a session of 10, 1,000 and 100,000 messages, a
`fork_session` inside an API request's deadline, the copy the copy job then makes (nothing is left to it up
to 1,000 messages: the fork copies them itself and is published whole), and the fork's first read. Each call is measured
with bench/meter.py (requests, bytes, capacity units from item sizes) and timed with a simulated network
round trip added to every request (a sleep in botocore's `before-send`, so requests sent at once overlap
as they would). Data is written straight into the tables with the store's own item layout
(BatchWriteItem, unmeasured), each scenario in tables of its own: moto's Query reads every item of a
table, so its own time for one bare Query of the same page is reported beside ours, and the figure that
must stay flat is ours above it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3

from bench import startup
from bench.meter import Meter, timed
from bench.report import write_results
from bench.scale_report import DELETE_BUDGET, REQUEST_BUDGET, write_report
from infra.local.aws import REGION, create_tables, local_client, moto_server_process
from infra.local.streams import StreamReader
from store import SessionStore, deadline
from store.aws import keys
from store.aws.attrs import n, s
from store.aws.items import head_item
from store.aws.plans.base import Context
from store.aws.plans.messages import drafts, message_puts
from store.core.timeutil import iso
from store.models import Message, Session
from store.session_store import s3_config

HERE = Path(__file__).parent
OWNER_SESSIONS = (100, 1_000, 10_000)
SESSION_MESSAGES = (1_000, 10_000, 100_000)
FORK_MESSAGES = (10, 1_000, 100_000)
MESSAGES_PER_SESSION = 50


class Scenario:
    """Tables of its own on the moto server, a metered store over them, and an unmetered writer."""

    def __init__(self, url: str, name: str, rtt: float) -> None:
        writer = local_client(endpoint_url=url)
        s3 = local_client("s3", url, s3_config(path_style=True))
        self.tables = create_tables(writer, prefix=f"scale-{name}", s3=s3)
        self.writer = writer
        self.session = boto3.Session(region_name=REGION)
        self.meter = Meter(self.session, writer)
        self.rtt = rtt
        self.session.events.register("before-send", self._round_trip)
        self.store = SessionStore(
            self.tables.sessions,
            self.tables.messages,
            bucket=self.tables.bucket,
            client=self.session.client("dynamodb", endpoint_url=url),
            s3_client=self.session.client("s3", endpoint_url=url, config=s3_config(path_style=True)),
        )
        self.ctx = Context(self.tables.sessions, self.tables.messages)
        self.pool = ThreadPoolExecutor(4)  # the unmeasured writer's, for the scenario's whole data

    def _round_trip(self, **_: Any) -> None:
        if self.meter.counting and self.rtt:
            time.sleep(self.rtt)

    def measure(self, action: Callable[[], Any]) -> tuple[dict[str, Any], Any]:
        """What `action` asked of AWS, and how long it took (less the meter's own item reads)."""
        return timed(self.meter, action)

    def bare_query_seconds(self, session_id: str, count: int) -> float:
        """moto's own time for one Query of `count` messages of a session (unmetered, no added latency)."""
        started = time.perf_counter()
        self.writer.query(
            TableName=self.tables.messages,
            KeyConditionExpression="#s = :s",
            ExpressionAttributeNames={"#s": keys.SID},
            ExpressionAttributeValues={":s": s(session_id)},
            ScanIndexForward=False,
            Limit=count,
        )
        return time.perf_counter() - started

    def count_messages(self, session_id: str) -> int:
        """How many messages the session still has (every page of a COUNT Query; unmetered)."""
        params: dict[str, Any] = {
            "TableName": self.tables.messages,
            "KeyConditionExpression": "#s = :s",
            "ExpressionAttributeNames": {"#s": keys.SID},
            "ExpressionAttributeValues": {":s": s(session_id)},
            "Select": "COUNT",
        }
        total = 0
        while True:
            page = self.writer.query(**params)
            total += int(page.get("Count", 0))
            if "LastEvaluatedKey" not in page:
                return total
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    # -- data, written straight into the tables -----------------------------------------------------
    def add_session(self, owner: str, session_id: str, messages: int, text: Callable[[int], str]) -> None:
        """A session head with `messages` messages, in the store's layout."""
        now = datetime.now(UTC)
        head = Session(
            id=session_id, owner=owner, title=f"session {session_id}", created_at=now, updated_at=now, last_seq=messages
        )
        items = [
            {**head_item(head, None), "last_seq": n(messages)},
            {**keys.owner_index_key(owner, session_id), "created_at": s(iso(now))},
        ]
        self._write(self.tables.sessions, items)
        batch = 1_000
        for first in range(1, messages + 1, batch):
            count = min(batch, messages - first + 1)
            bodies = [Message(role="user", content=text(first + i)) for i in range(count)]
            puts = message_puts(self.ctx, drafts(self.ctx, session_id, bodies, now, "bench"), first, session_id)
            self._write(self.tables.messages, [p["Put"]["Item"] for p in puts])

    def _write(self, table: str, items: list[dict[str, Any]]) -> None:
        chunks = [items[i : i + 25] for i in range(0, len(items), 25)]

        def put(chunk: list[dict[str, Any]]) -> None:
            pending: dict[str, Any] = {table: [{"PutRequest": {"Item": i}} for i in chunk]}
            while pending:
                pending = self.writer.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}

        list(self.pool.map(put, chunks))


@contextmanager
def server() -> Iterator[str]:
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        os.environ.setdefault(name, value)
    with moto_server_process() as url:
        yield url


def needle_text(seq: int) -> str:
    return f"turn {seq}: the needle and the hay"


def search_at(url: str, sessions: int, messages: int, rtt: float) -> dict[str, Any]:
    """Search of an owner with `sessions` sessions of `messages` messages: the first call, a continuation."""
    sc = Scenario(url, f"search{sessions}", rtt)
    for i in range(sessions):
        sc.add_session("owner", f"s{i:06d}", messages, needle_text)
    sc.pool.shutdown()
    first, hits = sc.measure(lambda: sc.store.search("owner", "needle"))
    first.update(sessions_searched=hits.sessions_searched, messages_searched=hits.messages_searched)
    more, later = sc.measure(lambda: sc.store.search("owner", "needle", cursor=hits.next_cursor))
    more.update(sessions_searched=later.sessions_searched, messages_searched=later.messages_searched)
    moto = sc.bare_query_seconds("s000000", messages)
    return {
        "sessions": sessions,
        "messages": messages,
        "first": first,
        "continuation": more,
        "moto_query_seconds": moto,
    }


def session_at(url: str, messages: int, rtt: float) -> dict[str, Any]:
    """load_full whole and its live context, then a delete inside an API request's deadline."""
    sc = Scenario(url, f"session{messages}", rtt)
    sc.add_session("owner", "long", messages, lambda q: f"message {q}")
    sc.pool.shutdown()
    whole, full = sc.measure(lambda: sc.store.load_full("long"))
    whole["messages_returned"] = len(full.messages)
    del full
    live, window = sc.measure(lambda: sc.store.load_full("long", last=50))
    live["messages_returned"] = len(window.messages)

    def delete() -> None:
        with deadline(DELETE_BUDGET):
            sc.store.delete_session("long")

    sc.meter.capacity = False  # reading every deleted item back would be most of the delete's time
    deleted, _ = sc.measure(delete)
    sc.meter.capacity = True
    deleted["messages_left_for_the_cascade"] = sc.count_messages("long")
    moto = sc.bare_query_seconds("long", 50)
    return {
        "messages": messages,
        "load_full": whole,
        "live_context": live,
        "delete": deleted,
        "moto_query_seconds": moto,
    }


def fork_at(url: str, messages: int, rtt: float) -> dict[str, Any]:
    """A fork of a session of `messages` messages inside an API request's deadline, then the copy job's
    part (the copy of what the fork did not copy itself: a longer fork is `copying` until then), then the
    fork's first read (a page of 100)."""
    sc = Scenario(url, f"fork{messages}", rtt)
    sc.add_session("owner", "long", messages, lambda q: f"message {q}")
    sc.pool.shutdown()
    sc.store.save_state("long", {"step": messages})

    def fork() -> Any:
        with deadline(REQUEST_BUDGET):
            return sc.store.fork_session("long", new_session_id="fork")

    forked, made = sc.measure(fork)
    forked["copying"] = made.copying
    reader = StreamReader.of_table(local_client("dynamodbstreams", endpoint_url=url), sc.writer, sc.tables.sessions)

    def cascade() -> int:
        """What the stack's cascade does: each new stream record handed to `reclaim`, invocation after
        invocation (a long copy hands itself on to the next with a new lap), until nothing is left to do."""
        invocations = 0
        while records := reader.read():
            sc.store.reclaim([r for r in records if r["eventName"] in ("MODIFY", "REMOVE")])
            invocations += 1
        return invocations

    sc.meter.capacity = False  # reading every copied item back would be most of the copy's time
    copied, invocations = sc.measure(cascade)
    sc.meter.capacity = True
    done = sc.store.get_session("fork")
    copied["copying_after"] = bool(done is not None and done.copying)
    copied["invocations"] = invocations
    copied["messages_in_the_fork"] = sc.count_messages("fork")
    first, page = sc.measure(lambda: sc.store.list_messages("fork", limit=100))
    first["messages_returned"] = len(page.items)
    return {
        "messages": messages,
        "fork": forked,
        "first_read": first,
        "cascade": copied,
        "moto_query_seconds": sc.bare_query_seconds("long", 100),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--owners", type=int, nargs="+", default=list(OWNER_SESSIONS))
    parser.add_argument("--messages", type=int, default=MESSAGES_PER_SESSION, help="messages per searched session")
    parser.add_argument("--sessions", type=int, nargs="+", default=list(SESSION_MESSAGES))
    parser.add_argument("--forks", type=int, nargs="*", default=list(FORK_MESSAGES), help="sizes of forked sessions")
    parser.add_argument(
        "--forks-only",
        action="store_true",
        help="measure the forks alone, into the results already in --out (the report says when each part ran)",
    )
    parser.add_argument("--rtt-ms", type=float, default=10.0)
    parser.add_argument("--imports", type=int, default=5, help="fresh processes per module timed (0: skip)")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    started = time.perf_counter()
    results: dict[str, Any] = {"started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "rtt_ms": args.rtt_ms}
    rtt = args.rtt_ms / 1000
    if args.forks_only:
        earlier = json.loads((args.out / "scale.json").read_text())
        with server() as url:
            earlier["forks"] = [fork_at(url, count, rtt) for count in sorted(args.forks)]
        earlier["forks_run"] = f"{results['started']} ({time.perf_counter() - started:.0f} s)"
        write_results(earlier, args.out / "scale.json")
        write_report(earlier, args.out)
        print(f"wrote {args.out / 'scale.md'}")
        return
    with server() as url:
        results["search"] = []
        for count in sorted(args.owners):
            print(f"search: {count} sessions", flush=True)
            results["search"].append(search_at(url, count, args.messages, rtt))
        results["sessions"] = []
        for count in sorted(args.sessions):
            print(f"session: {count} messages", flush=True)
            results["sessions"].append(session_at(url, count, rtt))
        results["forks"] = []
        for count in sorted(args.forks):
            print(f"fork: {count} messages", flush=True)
            results["forks"].append(fork_at(url, count, rtt))
    if args.imports:
        print("import times", flush=True)
        results["imports"] = startup.measure(args.imports)
    results["seconds"] = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    write_results(results, args.out / "scale.json")
    write_report(results, args.out)
    print(f"wrote {args.out / 'scale.md'} in {results['seconds']:.0f} s")


if __name__ == "__main__":
    main()
