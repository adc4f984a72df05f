"""This store against its peers, side by side, in one run, on one machine, against one moto server.

    .venv/bin/python -m bench.compare [--lengths 10 100 1000 10000] [--appends 15] [--loads 5] [--quick]

`make bench` runs it: it measures (bench/results.json), then writes bench/results.md and the PNG plots
from those measurements only (bench/report.py). For each workload (an agent transcript and a plain
chat, bench/workload.py) every contender (bench/peers.py) holds one conversation that grows through the
history lengths; at each length the same measured messages are appended, contender after contender
(so wall-time ratios are taken pair by pair on the same message), then the last 50 are loaded. A
contender that fails (LangChain's and LlamaIndex's single item passing DynamoDB's 400 KB limit) is
recorded with the error and the length it reached, and dropped from that workload.

The moto server runs in its own process, one request at a time, and backs up only the items a
transaction names (infra.local.aws.per_item_transaction_backups) instead of deep-copying every table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import langgraph_savers, startup
from bench.harness import our_tables, peer_table
from bench.isolated import LlamaIndexIsolated, isolated_versions
from bench.meter import timed as meter_timed
from bench.peers import Contender, Endpoint, LangChain, Ours, StrandsFile, StrandsS3
from bench.report import LOAD_LAST, write_report, write_results
from bench.workload import Turn, agent_transcript, chat_transcript, huge_tool_result
from infra.local.aws import local_client, moto_server_process

HERE = Path(__file__).parent
RESULTS = HERE / "results.json"
PACKAGES = (
    "agent-session-store",
    "boto3",
    "botocore",
    "moto",
    "langchain-community",
    "strands-agents",
    "langgraph",
    "langgraph-checkpoint-aws",
)


def contenders() -> tuple[type[Contender], ...]:
    """Every contender, in report order (LlamaIndex from its own environment, bench/isolated.py)."""
    return (Ours, LangChain, LlamaIndexIsolated, StrandsS3, StrandsFile)


@contextmanager
def moto() -> Iterator[Endpoint]:
    """A moto server process on 127.0.0.1 with our tables and bucket, the peers' table and DynamoDBSaver's."""
    with moto_server_process() as url:
        tables = our_tables(url, "bench")
        assert tables.bucket is not None
        peer_table(url, "bench-peers", "SessionId")  # LangChain's and LlamaIndex's, as their docs create it
        peer_table(url, "bench-checkpoints", "PK", "SK")  # DynamoDBSaver's
        dynamodb = local_client(endpoint_url=url)
        yield Endpoint(
            url, tables.sessions, tables.messages, tables.bucket, "bench-peers", dynamodb, "bench-checkpoints"
        )


def timed(contender: Contender, action: Callable[[], Any]) -> dict[str, Any]:
    """Run `action` under the contender's meter (bench/meter.py `timed`), with its count if it returns one."""
    sample, result = meter_timed(contender.meter, action)
    return sample | ({"count": result} if isinstance(result, int) else {})


def columns(samples: list[Any]) -> Any:
    """Samples (one dict each) as one list per field, as results.json keeps them; other lists as they are."""
    if not samples or not isinstance(samples[0], dict):
        return samples
    return {field: [s.get(field) for s in samples] for field in samples[0]}


def compressed_size(turn: Turn) -> int:
    """Bytes of the message body as this store keeps it (compact JSON, zlib above 512 B)."""
    from store.core.codec import encode
    from store.models import Message

    return len(encode(Message.model_validate(Ours.message(turn)).body())[1])


def rotated(live: list[Contender], turn: int) -> list[Contender]:
    """The contenders still measured, the `turn`-th of them first (who goes first rotates, turn by turn)."""
    return live[turn % len(live) :] + live[: turn % len(live)] if live else []


def run_workload(
    endpoint: Endpoint, name: str, history: list[Turn], measured: list[Turn], lengths: list[int], loads: int
) -> dict[str, Any]:
    """Grow one conversation per contender through `lengths`, measuring appends and loads at each."""
    racing = [cls(endpoint, name) for cls in contenders()]
    used = {c.name: 0 for c in racing}
    out: dict[str, Any] = {
        "measured_turns": {
            "json_bytes": [t.json_bytes() for t in measured],
            "stored_bytes": [compressed_size(t) for t in measured],
        },
        "contenders": {c.name: {"uses_aws": c.uses_aws, "lengths": {}, "failure": None} for c in racing},
    }
    live = list(racing)

    def fail(c: Contender, exc: Exception) -> None:
        out["contenders"][c.name]["failure"] = {"length": c.length, "error": f"{type(exc).__name__}: {exc}"[:300]}
        live.remove(c)
        print(f"  {name}: {c.name} failed at {c.length} messages: {type(exc).__name__}", flush=True)

    for length in lengths:
        for c in list(live):
            need = length - c.length
            try:
                c.prefill(history[used[c.name] : used[c.name] + need])
            except Exception as exc:
                fail(c, exc)
            used[c.name] += need
        rows: dict[str, dict[str, list[Any]]] = {c.name: {"appends": [], "loads": []} for c in live}
        for i, turn in enumerate(measured):
            for c in rotated(live, i):
                try:
                    rows[c.name]["appends"].append(timed(c, lambda c=c, t=turn: c.append(t)))  # type: ignore[misc]
                except Exception as exc:
                    fail(c, exc)
        for r in range(loads):
            for c in rotated(live, r):
                rows[c.name]["loads"].append(timed(c, lambda c=c: c.load_last(LOAD_LAST)))  # type: ignore[misc]
                if isinstance(c, Ours):
                    rows[c.name].setdefault("raw_query_seconds", []).append(c.raw_query_seconds(LOAD_LAST))
        for c in live:
            out["contenders"][c.name]["lengths"][str(length)] = {k: columns(v) for k, v in rows[c.name].items()}
        print(f"  {name}: {length} messages measured ({len(live)} contenders left)", flush=True)
    return out


def run_special(endpoint: Endpoint) -> dict[str, Any]:
    """One 500 KB tool output appended to a 10-message conversation, per contender; and our first append
    from a fresh store object (sequence unknown) next to a warm one."""
    history = agent_transcript(10, seed=11, huge_every=0)
    huge = huge_tool_result()
    out: dict[str, Any] = {"huge_json_bytes": huge.json_bytes(), "huge": {}}
    for cls in contenders():
        c = cls(endpoint, "huge")
        c.prefill(history)
        try:
            out["huge"][c.name] = timed(c, lambda c=c: c.append(huge))  # type: ignore[misc]
        except Exception as exc:
            out["huge"][c.name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    warm = Ours(endpoint, "cold")
    warm.prefill(history)
    cold = Ours(endpoint, "cold", session_id=warm.session_id)
    turn = agent_transcript(1, seed=12, huge_every=0)[0]
    out["ours_cold_append"] = timed(cold, lambda: cold.append(turn))
    out["ours_warm_append"] = timed(cold, lambda: cold.append(turn))
    out["ours_append_anatomy"] = anatomy(cold.meter.last_body)
    return out


def anatomy(body: bytes | str) -> dict[str, int]:
    """Bytes of one append's TransactWriteItems request by part: the message body (base64), the rest of
    the message item's Put, the head's conditional Update, and the envelope (token, brackets); each part
    measured as botocore writes JSON (a space after every ',' and ':'), and those spaces counted."""
    text = body.decode() if isinstance(body, bytes) else body
    request = json.loads(text)
    put = next(a["Put"] for a in request["TransactItems"] if "Put" in a)
    update = next(a["Update"] for a in request["TransactItems"] if "Update" in a)
    put_bytes = len(json.dumps({"Put": put}).encode())
    body_bytes = len(put["Item"]["b"]["B"])
    update_bytes = len(json.dumps({"Update": update}).encode())
    compact = len(json.dumps(request, separators=(",", ":")).encode())
    return {
        "request": len(text.encode()),
        "message_body_base64": body_bytes,
        "message_item_rest": put_bytes - body_bytes,
        "head_update": update_bytes,
        "envelope": len(text.encode()) - put_bytes - update_bytes,
        "separator_spaces": len(text.encode()) - compact,
    }


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        memory = next(
            int(x.split()[1]) for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")
        )
    except (OSError, StopIteration):
        memory = 0
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    versions |= isolated_versions()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(memory / 1024 / 1024, 1),
        "python": platform.python_version(),
        "packages": versions,
    }


def artifact_memory(mb: int) -> dict[str, Any]:
    from bench.artifact_memory import measure

    return measure(mb)


def bundle() -> dict[str, int]:
    from infra.deploy.bundle import build

    unzipped, zipped = build()
    return {"unzipped_bytes": unzipped, "zipped_bytes": zipped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--appends", type=int, default=15, help="measured appends per history length")
    parser.add_argument("--loads", type=int, default=5, help="measured loads of the last 50 per length")
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[10, 100, 1000], help="LangGraph history")
    parser.add_argument("--imports", type=int, default=11, help="fresh processes per module timed")
    parser.add_argument("--artifact-mb", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="skip the bundle and the artifact run (tests)")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        os.environ.setdefault(name, value)
    lengths = sorted(args.lengths)
    longest = lengths[-1]
    results: dict[str, Any] = {"machine": machine(), "settings": vars(args) | {"out": str(args.out)}}
    started = time.perf_counter()
    with moto() as endpoint:
        workloads = {
            "agent": (agent_transcript(longest, seed=1), agent_transcript(args.appends, seed=2, huge_every=0)),
            "chat": (chat_transcript(longest, seed=1), chat_transcript(args.appends, seed=2)),
        }
        results["workloads"] = {}
        for name, (history, measured) in workloads.items():
            print(f"workload {name}", flush=True)
            results["workloads"][name] = run_workload(endpoint, name, history, measured, lengths, args.loads)
        results["special"] = run_special(endpoint)
        print("langgraph checkpointers", flush=True)
        results["langgraph"] = langgraph_savers.measure(endpoint, args.checkpoints)
    print("import times", flush=True)
    results["imports"] = startup.measure(args.imports)
    if not args.quick:
        print("artifact memory", flush=True)
        results["artifact_memory"] = artifact_memory(args.artifact_mb)
        print("bundle", flush=True)
        results["bundle"] = bundle()
    results["seconds"] = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    write_results(results, args.out / RESULTS.name)
    write_report(results, args.out)
    print(f"wrote {args.out / 'results.md'} in {results['seconds']:.0f} s")


if __name__ == "__main__":
    main()
