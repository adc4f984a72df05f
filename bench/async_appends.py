"""100 sessions x 20 appends: issued concurrently through AsyncSessionStore, and sequentially through
SessionStore, against moto's server (its own process, one request at a time, as DynamoDB applies each
request atomically).

    .venv/bin/python -m bench.async_appends [--sessions 100] [--appends 20] [--latency-ms 0 10]

Each run gets a fresh server. With `--latency-ms N` every request also waits N ms before it is executed,
side by side with other requests, as a network round trip does (DynamoDB answers in single-digit
milliseconds in-region; moto on this machine takes ~10-30 ms of CPU per request, one at a time). The
server backs up only the items a transaction names (infra.local.aws.per_item_transaction_backups)
instead of deep-copying the tables, which otherwise makes every append O(table size). Every run
checks that each session ends with exactly its appends, numbered 1..n."""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from botocore.config import Config

from infra.local.aws import REGION, create_tables, local_client, moto_server_process


def message(session: int, turn: int) -> list[dict[str, Any]]:
    return [{"role": "user" if turn % 2 == 0 else "assistant", "content": f"session {session} turn {turn}"}]


def run_sync(endpoint: str, tables: Any, sessions: int, appends: int) -> tuple[float, list[str]]:
    from store import SessionStore

    store = SessionStore(tables.sessions, tables.messages, endpoint_url=endpoint, region_name=REGION)
    ids = [store.create_session("bench").id for _ in range(sessions)]
    started = time.perf_counter()
    for i, sid in enumerate(ids):
        for turn in range(appends):
            store.append_messages(sid, message(i, turn))
    elapsed = time.perf_counter() - started
    for sid in ids:
        assert [m.seq for m in store.list_messages(sid).items] == list(range(1, appends + 1))
    return elapsed, ids


def run_async(endpoint: str, tables: Any, sessions: int, appends: int) -> float:
    from store import AsyncSessionStore

    async def main() -> float:
        config = Config(max_pool_connections=sessions)
        async with AsyncSessionStore(
            tables.sessions, tables.messages, endpoint_url=endpoint, region_name=REGION, config=config
        ) as store:
            ids = [(await store.create_session("bench")).id for _ in range(sessions)]

            async def converse(i: int, sid: str) -> None:
                for turn in range(appends):  # one conversation's turns are sequential
                    await store.append_messages(sid, message(i, turn))

            started = time.perf_counter()
            await asyncio.gather(*(converse(i, sid) for i, sid in enumerate(ids)))
            elapsed = time.perf_counter() - started
            for sid in ids:
                assert [m.seq for m in (await store.list_messages(sid)).items] == list(range(1, appends + 1))
            return elapsed

    return asyncio.run(main())


def with_server(latency_ms: float, work: Any) -> float:
    with moto_server_process(latency_ms / 1000) as endpoint:
        tables = create_tables(local_client(endpoint_url=endpoint), prefix="bench")
        return float(work(endpoint, tables))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--appends", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0.0, 10.0])
    args = parser.parse_args()
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        os.environ.setdefault(name, value)
    total = args.sessions * args.appends
    print(f"{args.sessions} sessions x {args.appends} appends = {total} appends; moto's server in its own process")
    print(
        f"{'added latency':>13} | {'SessionStore, sequential':>26} | {'AsyncSessionStore, concurrent':>30} | speed-up"
    )
    for latency in args.latency_ms:
        sync_s = with_server(latency, lambda e, t: run_sync(e, t, args.sessions, args.appends)[0])
        async_s = with_server(latency, lambda e, t: run_async(e, t, args.sessions, args.appends))
        print(
            f"{latency:>10.0f} ms | {sync_s:>7.1f} s {total / sync_s:>7.0f} appends/s | "
            f"{async_s:>9.1f} s {total / async_s:>8.0f} appends/s | {sync_s / async_s:>6.1f}x",
            flush=True,
        )
    print(f"every session ended gapless 1..{args.appends} in every run")


if __name__ == "__main__":
    main()
