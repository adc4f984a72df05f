"""Many writers appending to one session through the DynamoDB backend, at the default settings: the design
before the writer queue (BASELINE, extracted with `git archive` and imported in a subprocess) and after it.

    .venv/bin/python -m bench.append_contention [--appends 12] [--writers 1 4 16 64] [--latency 0 0.01]

The method, beside its figures: bench/report_template.md, "Many writers on one session"."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess  # nosec B404: runs git and this module's own worker
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

BASELINE = "54935d1"  # the last commit before the writer queue and the new retry rules
ROOT = Path(__file__).resolve().parent.parent
WRITES = ("TransactWriteItems", "UpdateItem")

_counter: ContextVar[Counter[str] | None] = ContextVar("bench_counter", default=None)


def _count(model: Any, **_: Any) -> None:
    counter = _counter.get()
    if counter is not None:
        counter[model.name] += 1


def measure(endpoint: str, writers: int, appends: int, prefix: str) -> dict[str, Any]:
    """One run: `writers` threads x `appends` appends to one session, with whichever `store` is importable."""
    from botocore.config import Config

    from infra.local.aws import create_tables, local_client
    from store import SessionStore
    from store.session_store import retry_config

    client = local_client(endpoint_url=endpoint, config=retry_config(Config(max_pool_connections=2 * writers + 4)))
    client.meta.events.register("before-call.dynamodb.*", _count)
    tables = create_tables(client, prefix=prefix)
    setup = SessionStore(tables.sessions, tables.messages, client=client)
    sid = setup.create_session("bench").id
    stores = [SessionStore(tables.sessions, tables.messages, client=client) for _ in range(writers)]
    lock = threading.Lock()
    samples: list[tuple[float, int, int]] = []  # (seconds, write attempts, head reads) per acknowledged append
    acknowledged: list[str] = []
    raised: Counter[str] = Counter()
    barrier = threading.Barrier(writers + 1)

    def write(i: int) -> None:
        barrier.wait()
        for j in range(appends):
            counter: Counter[str] = Counter()
            token = _counter.set(counter)
            started = time.perf_counter()
            try:
                stores[i].append_messages(sid, [{"role": "user", "content": f"w{i}-{j}"}])
            except Exception as exc:  # counted by type: the figure is how many calls failed
                with lock:
                    raised[type(exc).__name__] += 1
                continue
            finally:
                _counter.reset(token)
            took = time.perf_counter() - started
            with lock:
                samples.append((took, sum(counter[w] for w in WRITES), counter["GetItem"]))
                acknowledged.append(f"w{i}-{j}")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    stored = setup.list_messages(sid).items
    contents = [str(m.content) for m in stored]
    latencies = sorted(s[0] for s in samples) or [0.0]
    attempts = [s[1] for s in samples] or [0]
    return {
        "writers": writers,
        "appends": writers * appends,
        "conflicts": raised.get("Conflict", 0),
        "other_errors": sum(raised.values()) - raised.get("Conflict", 0),
        "per_second": len(samples) / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "attempts_mean": statistics.mean(attempts),
        "attempts_max": max(attempts),
        "reads_per_append": statistics.mean(s[2] for s in samples) if samples else 0.0,
        "gapless": [m.seq for m in stored] == list(range(1, len(stored) + 1)),
        "missing": len(set(acknowledged) - set(contents)),
        "duplicated": len(contents) - len(set(contents)),
    }


def worker(latency: float, writers: list[int], appends: int) -> None:
    """Run every writer count on a moto server of its own; print one JSON line per run (the first line
    says which `store` ran)."""
    import store
    from infra.local.aws import moto_server_process

    print(json.dumps({"store": store.__file__}), flush=True)

    with moto_server_process(latency=latency) as endpoint:
        for i, count in enumerate(writers):
            print(json.dumps(measure(endpoint, count, appends, f"b{i}")), flush=True)


@contextlib.contextmanager
def baseline_store(rev: str) -> Iterator[Path]:
    """A directory holding `store/` as it was at `rev` (from git)."""
    archive = subprocess.run(  # nosec B603 B607: git, with fixed arguments
        ["git", "archive", "--format=tar", rev, "store"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


def run_design(path: Path | None, latency: float, writers: list[int], appends: int) -> list[dict[str, Any]]:
    """The worker in a fresh interpreter, with `store` from `path` (None: this checkout)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(p) for p in (path, ROOT) if p is not None])
    args = [sys.executable, "-m", "bench.append_contention", "--worker", str(latency), str(appends)]
    # run from `path`: `python -m` puts the working directory first on sys.path, before PYTHONPATH
    done = subprocess.run(  # nosec B603: this interpreter, this module
        [*args, *map(str, writers)], cwd=path or ROOT, env=env, capture_output=True, text=True, check=True
    )
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    expected = (path or ROOT) / "store" / "__init__.py"
    if Path(rows[0]["store"]).resolve() != expected.resolve():
        raise RuntimeError(f"the worker ran {rows[0]['store']}, not {expected}")
    return rows[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--appends", type=int, default=12, help="appends per writer")
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0, 0.01], help="added round trip, s")
    parser.add_argument("--baseline", default=BASELINE, help="the git revision of the design before")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        latency, appends, *writers = args.worker
        worker(float(latency), [int(w) for w in writers], int(appends))
        return
    started = time.perf_counter()
    runs: list[dict[str, Any]] = []
    with baseline_store(args.baseline) as before:
        for latency in args.latency:
            for design, path in (("before", before), ("after", None)):
                for row in run_design(path, latency, args.writers, args.appends):
                    runs.append({"design": design, "latency_ms": latency * 1000, **row})
                    print(json.dumps(runs[-1]), flush=True)
    from bench.report import record

    record(
        "contention",
        {
            "date": time.strftime("%Y-%m-%d"),
            "baseline": args.baseline,
            "appends_per_writer": args.appends,
            "seconds": time.perf_counter() - started,
            "runs": runs,
        },
    )


if __name__ == "__main__":
    main()
