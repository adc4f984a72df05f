"""Peak memory of streaming a large artifact up and down (target: under 64 MB above the baseline).

    .venv/bin/python -m bench.artifact_memory            # 200 MB
    .venv/bin/python -m bench.artifact_memory --mb 500

moto's server runs in its own process (so the object it stores is not counted), and each direction
runs in a fresh child process: after a warm-up (imports, clients, connections) the child notes its
resident set, resets the kernel's high-water mark (/proc/self/clear_refs), does the work, and reports
the new high-water mark (VmHWM) minus the baseline. The data is generated 1 MB at a time and hashed as
it is read back, so neither side ever needs the whole object."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MB = 1024 * 1024


def _status(field: str) -> int:
    """A /proc/self/status field in bytes (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def _data(total_mb: int, seed: int = 7) -> Iterator[bytes]:
    block = hashlib.sha256(str(seed).encode()).digest() * (MB // 32)
    for i in range(total_mb):
        yield block[i % 32 :] + block[: i % 32]


def child(direction: str, endpoint: str, names: dict[str, str], session_id: str, total_mb: int) -> dict[str, float]:
    from infra.local.aws import local_client
    from store import SessionStore
    from store.session_store import s3_config

    store = SessionStore(
        names["SESSIONS_TABLE"],
        names["MESSAGES_TABLE"],
        bucket=names["ARTIFACTS_BUCKET"],
        client=local_client(endpoint_url=endpoint),
        s3_client=local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True)),
    )
    store.put_artifact(session_id, "warm-up", b"x" * MB)  # imports, clients and connections in place
    warm = store.open_artifact(session_id, "warm-up")
    assert warm is not None
    with warm:
        warm.read()
    baseline = _status("VmRSS")
    _reset_peak()
    started = time.perf_counter()
    if direction == "upload":
        version = store.put_artifact(session_id, "big.bin", _data(total_mb))
        size = version.size
    else:
        digest = hashlib.sha256()
        size = 0
        reader = store.open_artifact(session_id, "big.bin")
        assert reader is not None
        with reader:
            for chunk in reader:
                digest.update(chunk)
                size += len(chunk)
    seconds = time.perf_counter() - started
    assert size == total_mb * MB
    return {
        "baseline_mb": baseline / MB,
        "peak_above_baseline_mb": (_status("VmHWM") - baseline) / MB,
        "seconds": seconds,
        "mb_per_s": total_mb / seconds,
    }


def measure(total_mb: int) -> dict[str, Any]:
    """Upload then download a `total_mb` artifact, each in a fresh child process: per direction the
    baseline RSS, the peak above it and the throughput (MB, MB/s); plus the part size used."""
    from infra.local.aws import create_tables, free_port, local_client
    from store import SessionStore
    from store.session_store import s3_config

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", f"from moto.server import main; main(['-H', '127.0.0.1', '-p', '{port}'])"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                dynamodb = local_client(endpoint_url=endpoint)
                dynamodb.list_tables()
                break
            except Exception:  # the server is still starting
                time.sleep(0.1)
        s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
        tables = create_tables(dynamodb, prefix="bench-memory", s3=s3)
        store = SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
        session_id = store.create_session("bench").id
        results = {}
        for direction in ("upload", "download"):
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bench.artifact_memory",
                    "--child",
                    direction,
                    "--mb",
                    str(total_mb),
                    "--endpoint",
                    endpoint,
                    "--names",
                    json.dumps(tables.names),
                    "--session",
                    session_id,
                ],
                check=True,
                capture_output=True,
                text=True,
                env={**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"},
            )
            results[direction] = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=10)
    return {"mb": total_mb, "part_size_mb": store.settings.part_size // MB, "directions": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--child", choices=["upload", "download"])
    parser.add_argument("--endpoint")
    parser.add_argument("--names")
    parser.add_argument("--session")
    args = parser.parse_args()
    if args.child:
        result = child(args.child, args.endpoint, json.loads(args.names), args.session, args.mb)
        print(json.dumps(result))
        return

    report = measure(args.mb)
    results = report["directions"]
    print(f"artifact of {args.mb} MB, part size {report['part_size_mb']} MB, moto server in its own process")
    print(f"{'direction':<10} {'baseline RSS':>13} {'peak above baseline':>20} {'throughput':>12}")
    for direction, r in results.items():
        print(
            f"{direction:<10} {r['baseline_mb']:>10.1f} MB {r['peak_above_baseline_mb']:>17.1f} MB "
            f"{r['mb_per_s']:>7.1f} MB/s"
        )
    worst = max(r["peak_above_baseline_mb"] for r in results.values())
    print(f"target: under 64 MB above baseline -> {'met' if worst < 64 else 'MISSED'} ({worst:.1f} MB)")


if __name__ == "__main__":
    main()
