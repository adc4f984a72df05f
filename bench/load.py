"""Load: W concurrent writers (threads or processes) x N appends, to one session or to 100 sessions,
through the library or through the local stack's HTTP API. Every writer retries a failed append with its
idempotency key, as a careful client does. Verdict: 0 lost, 0 duplicated, sequence numbers gapless;
throughput reported.

    .venv/bin/python -m bench.load [--writers 16] [--appends 500] [--quick]

moto's server runs in this process (one request at a time) with per-item transaction backups
(infra.local.aws.per_item_transaction_backups), so that thousands of appends do not slow to hours."""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SESSIONS_MANY = 100
RUNS = itertools.count()


@dataclass
class Result:
    via: str
    workers: str
    target: str
    appends: int
    seconds: float
    lost: int
    duplicated: int
    gapless: bool

    def row(self) -> str:
        rate = self.appends / self.seconds if self.seconds else 0
        return (
            f"| {self.via} | {self.workers} | {self.target} | {self.appends} | {self.seconds:.1f} s | {rate:.0f} | "
            f"{self.lost} | {self.duplicated} | {'yes' if self.gapless else 'NO'} |"
        )


def session_of(writer: int, j: int, sessions: list[str]) -> str:
    return sessions[(writer + j * 16) % len(sessions)]


def library_writer(endpoint: str, names: dict[str, str], sessions: list[str], writer: int, appends: int) -> int:
    """`appends` appends of writer `writer`; each retried with its idempotency key until acknowledged."""
    from store import SessionStore, StoreError

    store = SessionStore(
        names["SESSIONS_TABLE"], names["MESSAGES_TABLE"], endpoint_url=endpoint, region_name="us-east-1"
    )
    for j in range(appends):
        message = [{"role": "user", "content": f"w{writer}-{j}"}]
        while True:
            try:
                store.append_messages(session_of(writer, j, sessions), message, idempotency_key=f"w{writer}-{j}")
                break
            except StoreError:
                time.sleep(0.01)
    return appends


def http_writer(api: str, token: str, sessions: list[str], writer: int, appends: int) -> int:
    for j in range(appends):
        body = json.dumps({"messages": [{"role": "user", "content": f"w{writer}-{j}"}]}).encode()
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Idempotency-Key": f"w{writer}-{j}",
        }
        url = f"{api}/sessions/{session_of(writer, j, sessions)}/messages"
        while True:
            request = urllib.request.Request(url, data=body, method="POST", headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=60) as resp:
                    if resp.status == 201:
                        break
            except urllib.error.HTTPError as err:
                if 400 <= err.code < 500 and err.code not in (409, 429):
                    raise  # refused for what it is: retrying cannot help
                time.sleep(0.01)
            except (urllib.error.URLError, OSError):
                time.sleep(0.01)
    return appends


def run_workers(kind: str, count: int, target: Callable[[int], int], command: Callable[[int], list[str]]) -> None:
    if kind == "threads":
        threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return
    procs = [subprocess.Popen(command(i)) for i in range(count)]
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError("a writer process failed")


def verify(store: Any, sessions: list[str], writers: int, appends: int) -> tuple[int, int, bool]:
    seen: Counter[str] = Counter()
    gapless = True
    for sid in sessions:
        items = store.list_messages(sid).items
        gapless &= [m.seq for m in items] == list(range(1, len(items) + 1))
        seen.update(m.content for m in items)
    wanted = {f"w{w}-{j}" for w in range(writers) for j in range(appends)}
    lost = len(wanted - set(seen))
    duplicated = sum(n - 1 for n in seen.values() if n > 1)
    return lost, duplicated, gapless


def measure(via: str, workers: str, many: bool, writers: int, appends: int) -> Result:
    from infra.local.stack import local_stack
    from store import SessionStore, scoped_id

    with local_stack(port=0, cascade=False, prefix=f"load{next(RUNS)}") as stack:
        endpoint, names = stack.aws_endpoint, stack.tables.names
        store = SessionStore(
            stack.tables.sessions, stack.tables.messages, endpoint_url=endpoint, region_name="us-east-1"
        )
        owner = "load"
        # the sessions' ids as the API names them (the owner's namespace) and as the library stores them
        local_ids = [f"load-{i}" for i in range(SESSIONS_MANY if many else 1)]
        sessions = [store.create_session(owner, session_id=scoped_id(owner, local)).id for local in local_ids]
        token = stack.token(owner)
        started = time.perf_counter()
        if via == "library":
            run_workers(
                workers,
                writers,
                lambda i: library_writer(endpoint, names, sessions, i, appends),
                lambda i: [
                    sys.executable,
                    "-m",
                    "bench.load",
                    "--worker",
                    "library",
                    endpoint,
                    json.dumps(names),
                    json.dumps(sessions),
                    str(i),
                    str(appends),
                ],
            )
        else:
            run_workers(
                workers,
                writers,
                lambda i: http_writer(stack.api_url, token, local_ids, i, appends),
                lambda i: [
                    sys.executable,
                    "-m",
                    "bench.load",
                    "--worker",
                    "http",
                    stack.api_url,
                    token,
                    json.dumps(local_ids),
                    str(i),
                    str(appends),
                ],
            )
        seconds = time.perf_counter() - started
        lost, duplicated, gapless = verify(store, sessions, writers, appends)
    target = f"{SESSIONS_MANY} sessions" if many else "one session"
    return Result(via, workers, target, writers * appends, seconds, lost, duplicated, gapless)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        kind, where, names_or_token, sessions, writer, appends = sys.argv[2:8]
        if kind == "library":
            library_writer(where, json.loads(names_or_token), json.loads(sessions), int(writer), int(appends))
        else:
            http_writer(where, names_or_token, json.loads(sessions), int(writer), int(appends))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--appends", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="library and HTTP, threads only")
    parser.add_argument("--via", choices=["library", "http"], nargs="+", default=["library", "http"])
    parser.add_argument("--target", choices=["one", "many"], nargs="+", default=["one", "many"])
    args = parser.parse_args()
    from infra.local.aws import local_environment, per_item_transaction_backups

    local_environment("ERROR")
    per_item_transaction_backups()
    print(f"{args.writers} writers x {args.appends} appends each")
    print("| via | writers | target | appends | wall | appends/s | lost | duplicated | gapless |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    kinds = ["threads"] if args.quick else ["threads", "processes"]
    for via in args.via:
        for workers in kinds:
            for many in [target == "many" for target in args.target]:
                print(measure(via, workers, many, args.writers, args.appends).row(), flush=True)


if __name__ == "__main__":
    main()
