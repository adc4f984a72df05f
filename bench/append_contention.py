"""Concurrent appends through the DynamoDB backend against moto's server: correctness and cost.

W writer threads (each its own store, as separate Lambda instances would be) append N single-message
batches, either all to one session (worst-case contention) or each to its own session. Reports appends
per second, DynamoDB requests per append, calls that raised, and checks that sequence numbers are gapless,
that every acknowledged message is stored, and that none is stored twice.

Run: .venv/bin/python -m bench.append_contention [--writers 8] [--appends 50]
(numbers depend on the machine; moto executes one request at a time, like a single hot DynamoDB item)
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import Counter
from datetime import timedelta
from typing import Any

from botocore.config import Config

from infra.local.aws import create_tables, local_client, moto_server
from store import SessionStore, Settings
from store.session_store import retry_config


def run(endpoint: str, writers: int, appends: int, shared: bool, prefix: str, settings: Settings) -> dict[str, Any]:
    """One measurement: `writers` threads x `appends` appends, to one shared session or one session each."""
    client = local_client(endpoint_url=endpoint, config=retry_config(Config(max_pool_connections=64)))
    tables = create_tables(client, prefix=prefix)
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def count(model: Any, **_: Any) -> None:
        with lock:
            calls[model.name] += 1

    setup = SessionStore(tables.sessions, tables.messages, client=client)
    sessions = [setup.create_session("bench").id for _ in range(1 if shared else writers)]
    stores = [SessionStore(tables.sessions, tables.messages, client=client, settings=settings) for _ in range(writers)]
    acknowledged: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(writers + 1)

    def write(i: int) -> None:
        sid = sessions[0 if shared else i]
        barrier.wait()
        for j in range(appends):
            try:
                stores[i].append_messages(sid, [{"role": "user", "content": f"w{i}-{j}"}])
            except Exception as exc:
                errors.append(exc)
                continue
            with lock:
                acknowledged.append(f"w{i}-{j}")

    client.meta.events.register("before-call.dynamodb.*", count)
    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    client.meta.events.unregister("before-call.dynamodb.*", count)
    transcripts = [setup.list_messages(sid).items for sid in sessions]
    stored = [m.content for t in transcripts for m in t]
    total = writers * appends
    return {
        "mode": "one session" if shared else f"{writers} sessions",
        "appends": total,
        "raised": len(errors),
        "stored": len(stored),
        "missing": len(set(acknowledged) - set(stored)),
        "duplicated": len(stored) - len(set(stored)),
        "gapless": all([m.seq for m in t] == list(range(1, len(t) + 1)) for t in transcripts),
        "per_second": total / elapsed,
        "requests_per_append": sum(calls.values()) / total,
        "transactions_per_append": calls["TransactWriteItems"] / total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--appends", type=int, default=50)
    parser.add_argument("--backoff-cap", type=float, default=Settings.backoff_cap)
    parser.add_argument("--retries", type=int, default=Settings.conflict_retries)
    parser.add_argument("--retry-budget", type=float, default=Settings.retry_budget.total_seconds())
    args = parser.parse_args()
    settings = Settings(
        backoff_cap=args.backoff_cap,
        conflict_retries=args.retries,
        retry_budget=timedelta(seconds=args.retry_budget),
    )
    with moto_server() as endpoint:
        rows = [
            run(endpoint, args.writers, args.appends, shared, f"bench{i}", settings)
            for i, shared in enumerate((True, False))
        ]
    print(
        f"{args.writers} writers x {args.appends} appends each; moto server on 127.0.0.1; "
        f"retry policy: backoff cap {args.backoff_cap}s, {args.retries} retries, budget {args.retry_budget:g} s\n"
    )
    print(
        "| target | appends | raised | stored | acknowledged, missing | duplicated | gapless | appends/s "
        "| requests/append | transactions/append |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['mode']} | {r['appends']} | {r['raised']} | {r['stored']} | {r['missing']} | {r['duplicated']} "
            f"| {'yes' if r['gapless'] else 'NO'} | {r['per_second']:.0f} | {r['requests_per_append']:.2f} "
            f"| {r['transactions_per_append']:.2f} |"
        )


if __name__ == "__main__":
    main()
