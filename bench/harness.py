"""What every benchmark stands on: tables on the local AWS (our template's, a peer's as its documentation
creates it) and a store over them whose clients come from a boto3 session of the benchmark's choosing (metered,
timed, or plain), so that each module measures its question and nothing else; a child interpreter and its
peak memory. Servers: infra.local.aws's `moto_server_process`; meters: bench/meter.py; contenders:
bench/peers.py and bench/framework_backends.py."""

from __future__ import annotations

import json
import os
import subprocess  # nosec B404: the bench's own children
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from infra.local.aws import LocalTables, create_tables, local_client, local_session
from store import SessionStore

ROOT = Path(__file__).resolve().parent.parent


def s3_client(url: str, session: Any = None) -> Any:
    """An S3 client on the local AWS at `url` (path-style addressing), from `session` if given."""
    from store.session_store import s3_config

    if session is None:
        return local_client("s3", url, s3_config(path_style=True))
    return session.client("s3", endpoint_url=url, config=s3_config(path_style=True))


def our_tables(url: str, prefix: str, **options: Any) -> LocalTables:
    """template.yaml's tables and bucket on the local AWS at `url`, named by `prefix` (`options`: create_tables')."""
    return create_tables(local_client(endpoint_url=url), prefix=prefix, s3=s3_client(url), **options)


def store_on(url: str, tables: LocalTables, session: Any = None, **options: Any) -> SessionStore:
    """A store over `tables` whose clients are made from `session` (a boto3 session: metered, timed, or plain
    when None), as a user's store makes its own; `options` are SessionStore's."""
    session = session or local_session()
    return SessionStore(
        tables.sessions, tables.messages, bucket=tables.bucket, session=session, endpoint_url=url, **options
    )


def peer_table(url: str, name: str, *keys: str) -> str:
    """A table as a peer package documents it: string keys, the first the partition, the second (if any) the
    sort key; on demand."""
    schema = [{"AttributeName": k, "KeyType": kind} for k, kind in zip(keys, ("HASH", "RANGE"), strict=False)]
    local_client(endpoint_url=url).create_table(
        TableName=name,
        KeySchema=schema,
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in keys],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


def status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmRSS, VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


@contextmanager
def peak_memory() -> Iterator[dict[str, float]]:
    """The block's peak resident set (Linux: the high-water mark starts again at the block), into the dict
    yielded when the block ends: baseline_mb, peak_mb (the whole interpreter's), peak_above_baseline_mb."""
    out: dict[str, float] = {"baseline_mb": status_mb("VmRSS")}
    Path("/proc/self/clear_refs").write_text("5")
    yield out
    out["peak_mb"] = status_mb("VmHWM")
    out["peak_above_baseline_mb"] = out["peak_mb"] - out["baseline_mb"]


def in_fresh_interpreter(module: str, *args: str) -> dict[str, Any]:
    """Run `python -m module --child args...` in a new interpreter (its own peak memory, its own imports) and
    return the JSON of the last line it prints."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    done = subprocess.run(  # nosec B603: this interpreter, a module of this repository
        [sys.executable, "-m", module, "--child", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def counted(session: Any) -> list[int]:
    """A counter of the requests sent through clients made of `session` from now on: [count]."""
    sent = [0]

    def count(**_: Any) -> None:
        sent[0] += 1

    session.events.register("before-send", count)
    return sent
