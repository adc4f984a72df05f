"""Crash testing: a writer process is killed with SIGKILL in the middle of its workflow (appends, spilled
messages, artifacts, checkpoints, state, deletes), again and again; after each kill the invariant checker
must find the store consistent, and after the reclaim step no unreferenced object may remain.

    python -m infra.cli crash --kills 50        (a fresh moto server is started for it)"""

from __future__ import annotations

import base64
import json
import os
import random
import signal
import subprocess
import sys
import time
from typing import Any

from infra.reliability.invariants import check, reclaim_pending


def writer(endpoint: str, names: dict[str, str], seed: int) -> None:
    """Work forever (until killed) on a handful of sessions, as an agent would."""
    from store import SessionStore, StoreError

    store = SessionStore(
        names["SESSIONS_TABLE"],
        names["MESSAGES_TABLE"],
        bucket=names["ARTIFACTS_BUCKET"],
        endpoint_url=endpoint,
        region_name="us-east-1",
    )
    rng = random.Random(seed)
    blob = base64.b64encode(os.urandom(450_000)).decode()
    print("ready", flush=True)
    while True:
        sid = f"crash-{rng.randrange(4)}"
        try:
            if store.get_session(sid) is None:
                store.create_session("crash", session_id=sid)
            step = rng.randrange(8)
            if step == 0:
                store.append_messages(sid, [{"role": "tool", "content": blob, "usage": {"input_tokens": 5}}])
            elif step == 1:
                store.put_artifact(sid, f"a{rng.randrange(3)}.bin", os.urandom(rng.choice([10, 9 * 1024 * 1024])))
            elif step == 2:
                store.save_checkpoint("session", sid, {"blob": blob if rng.random() < 0.5 else "small"})
            elif step == 3:
                store.save_state(sid, {"blob": blob if rng.random() < 0.5 else "small"})
            elif step == 4 and rng.random() < 0.2:
                store.delete_session(sid)
            elif step == 5:
                store.save_full(sid, [{"role": "assistant", "content": "x", "usage": {"output_tokens": 2}}], {"s": 1})
            elif step == 6:
                store.append_trace_events(sid, "run", [{"e": rng.random()}])
            else:
                store.append_messages(sid, [{"role": "user", "content": f"m{rng.random()}", "usage": {"cost": 0.01}}])
            print("op", flush=True)
        except StoreError:
            continue  # contention with nobody, or a session deleted meanwhile: carry on


def run(endpoint: str, kills: int, seed: int = 1) -> tuple[list[str], int]:
    """Kill a writer `kills` times, each a random moment after it started working; the problems found
    (empty when the store stayed consistent) and how many operations the writers completed."""
    from infra.local.aws import create_tables, local_client
    from store import SessionStore
    from store.session_store import s3_config

    dynamodb = local_client(endpoint_url=endpoint)
    s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
    tables = create_tables(dynamodb, prefix=f"crash{seed}", s3=s3)
    rng = random.Random(seed)
    problems: list[str] = []
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    done = 0
    for kill in range(kills):
        command = [sys.executable, "-m", "infra.reliability.crash", "writer", endpoint, json.dumps(tables.names)]
        proc = subprocess.Popen([*command, str(seed * 1000 + kill)], env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        proc.stdout.readline()  # "ready": the store is built, the work begins
        time.sleep(rng.uniform(0.05, 1.5))
        proc.send_signal(signal.SIGKILL)
        done += proc.stdout.read().count("op")
        proc.wait(timeout=30)
        report = check(dynamodb, s3, tables.sessions, tables.messages, tables.bucket)
        problems += [f"after kill {kill + 1}: {p}" for p in report.problems if not p.startswith("unreferenced object")]
    store = SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
    reclaim_pending(dynamodb, tables.sessions, store, local_client("dynamodbstreams", endpoint_url=endpoint))
    problems += check(dynamodb, s3, tables.sessions, tables.messages, tables.bucket).problems
    return problems, done


def main(kills: int, seed: int) -> int:
    """`python -m infra.cli crash`: the kills against a fresh moto server; the verdict."""
    from infra.local.aws import moto_server

    with moto_server() as endpoint:
        started = time.perf_counter()
        problems, done = run(endpoint, kills, seed)
    took = time.perf_counter() - started
    print(f"{kills} writers killed with SIGKILL mid-workflow ({done} operations completed) in {took:.0f} s")
    for problem in problems:
        print(f"  PROBLEM: {problem}")
    print("consistent after every kill; nothing unreferenced after the reclaim step" if not problems else "")
    return 1 if problems else 0


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "writer":
    names: Any = json.loads(sys.argv[3])
    writer(sys.argv[2], names, int(sys.argv[4]))
