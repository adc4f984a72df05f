"""Peak memory of streaming a large artifact up and down (target: under 64 MB above the baseline).

    .venv/bin/python -m bench.artifact_memory            # 200 MB
    .venv/bin/python -m bench.artifact_memory --mb 500

moto's server runs in its own process (so the object it stores is not counted), and each direction in a fresh
child process, its peak resident set measured above its baseline after a warm-up (bench/harness.py
`peak_memory`). The data is generated 1 MB at a time and hashed as it is read back, so neither side ever needs
the whole object."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterator
from typing import Any

from bench.harness import in_fresh_interpreter, our_tables, peak_memory, store_on
from infra.local.aws import LocalTables, moto_server_process

MB = 1024 * 1024


def _data(total_mb: int, seed: int = 7) -> Iterator[bytes]:
    block = hashlib.sha256(str(seed).encode()).digest() * (MB // 32)
    for i in range(total_mb):
        yield block[i % 32 :] + block[: i % 32]


def child(direction: str, endpoint: str, names: dict[str, str], session_id: str, total_mb: int) -> dict[str, float]:
    """In this interpreter: one direction after a warm-up (imports, clients, connections), its peak memory."""
    store = store_on(endpoint, LocalTables(names))
    store.put_artifact(session_id, "warm-up", b"x" * MB)
    with store.open_artifact(session_id, "warm-up") as warm:  # type: ignore[union-attr]
        warm.read()
    with peak_memory() as memory:
        started = time.perf_counter()
        if direction == "upload":
            size = store.put_artifact(session_id, "big.bin", _data(total_mb)).size
        else:
            digest, size = hashlib.sha256(), 0
            with store.open_artifact(session_id, "big.bin") as reader:  # type: ignore[union-attr]
                for chunk in reader:
                    digest.update(chunk)
                    size += len(chunk)
        seconds = time.perf_counter() - started
    assert size == total_mb * MB
    return {**memory, "seconds": seconds, "mb_per_s": total_mb / seconds}


def measure(total_mb: int) -> dict[str, Any]:
    """Upload then download a `total_mb` artifact, each in a fresh child process: per direction the
    baseline RSS, the peak above it and the throughput (MB, MB/s); plus the part size used."""
    with moto_server_process() as endpoint:
        tables = our_tables(endpoint, "bench-memory")
        store = store_on(endpoint, tables)
        session_id = store.create_session("bench").id
        names = json.dumps(tables.names)
        results = {
            direction: in_fresh_interpreter(
                "bench.artifact_memory", direction, str(total_mb), endpoint, names, session_id
            )
            for direction in ("upload", "download")
        }
    return {"mb": total_mb, "part_size_mb": store.settings.part_size // MB, "directions": results}


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        direction, total_mb, endpoint, names, session_id = sys.argv[2:7]
        print(json.dumps(child(direction, endpoint, json.loads(names), session_id, int(total_mb))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    report = measure(parser.parse_args().mb)
    print(json.dumps(report, indent=1))
    worst = max(r["peak_above_baseline_mb"] for r in report["directions"].values())
    print(f"target: under 64 MB above baseline -> {'met' if worst < 64 else 'MISSED'} ({worst:.1f} MB)")


if __name__ == "__main__":
    main()
