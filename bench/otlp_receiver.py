"""What the worst requests to `POST /v1/traces` cost the API function: time and peak memory.

    .venv/bin/python -m bench.otlp_receiver

Each case (CASES: refused floods of empty spans, the largest accepted request, the most traces) runs in a fresh
interpreter; the method, beside its figures: bench/report_template.md, "The OTLP receiver's worst requests"."""

from __future__ import annotations

import json
import os
import subprocess  # nosec B404: runs this module's own cases
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from functions.api.otlp_proto import length_delimited, put_varint

ROOT = Path(__file__).resolve().parent.parent
CASES = (
    "4 MB of empty spans, protobuf",
    "4 MB of empty objects (1.3 million), JSON",
    "MAX_SPANS spans in MAX_TRACES traces of one session, JSON",
    "MAX_SPANS spans in MAX_TRACES traces of one session, protobuf",
    "MAX_TRACES traces, each of its own session, JSON",
)


def _spans(traces: int, spans: int, sessions: int) -> list[dict[str, Any]]:
    """`spans` spans spread over `traces` traces, trace t naming session t % sessions, each with enough
    attributes to bring the body near 4 MB."""
    out = []
    for i in range(spans):
        t = i % traces
        attrs = [{"key": "session.id", "value": {"stringValue": f"s{t % sessions}"}}]
        attrs += [{"key": f"attr.{k}", "value": {"stringValue": "x" * 16}} for k in range(2)]
        out.append(
            {
                "traceId": f"{t + 1:032x}",
                "spanId": f"{i + 1:016x}",
                "name": f"span {i}",
                "startTimeUnixNano": str(1_700_000_000_000_000_000 + i),
                "endTimeUnixNano": str(1_700_000_000_000_001_000 + i),
                "attributes": attrs,
            }
        )
    return out


def _protobuf(spans: list[dict[str, Any]]) -> bytes:
    def attr(kv: dict[str, Any]) -> bytes:
        value = length_delimited(1, kv["value"]["stringValue"].encode())
        return length_delimited(1, kv["key"].encode()) + length_delimited(2, value)

    def span(s: dict[str, Any]) -> bytes:
        fixed = b"".join(
            put_varint(n << 3 | 1) + int(s[k]).to_bytes(8, "little")
            for n, k in ((7, "startTimeUnixNano"), (8, "endTimeUnixNano"))
        )
        return (
            length_delimited(1, bytes.fromhex(s["traceId"]))
            + length_delimited(2, bytes.fromhex(s["spanId"]))
            + length_delimited(5, s["name"].encode())
            + fixed
            + b"".join(length_delimited(9, attr(a)) for a in s["attributes"])
        )

    return length_delimited(1, length_delimited(2, b"".join(length_delimited(2, span(s)) for s in spans)))


def body_of(case: str) -> tuple[bytes, str]:
    from functions.api.traces import MAX_SPANS, MAX_TRACES

    if case == CASES[0]:
        inner = b"\x12\x00" * 2_000_000
        return length_delimited(1, length_delimited(2, inner)), "application/x-protobuf"
    if case == CASES[1]:
        return b'{"resourceSpans":[{"scopeSpans":[{"spans":[' + b",".join(
            [b"{}"] * 1_333_000
        ) + b"]}]}]}", "application/json"  # 3,999,048 bytes
    if case in (CASES[2], CASES[3]):
        spans = _spans(MAX_TRACES, MAX_SPANS, 1)
        if case == CASES[3]:
            return _protobuf(spans), "application/x-protobuf"
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), "application/json"
    spans = _spans(MAX_TRACES, MAX_TRACES, MAX_TRACES)
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode(), "application/json"


def _status_kb(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in KB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def run_case(endpoint: str, case: str, prefix: str, body_file: Path) -> dict[str, Any]:
    """In this interpreter: one request of `case` (its body made by the parent, in `body_file`, so that making
    it does not count) through the API handler; its time and peak memory."""
    from infra.local.aws import create_tables, local_client, local_environment

    local_environment("ERROR")
    from functions import runtime
    from functions.api.app import lambda_handler
    from infra.local.apigw import LambdaContext, http_event
    from store import SessionStore
    from store.core.scoped_ids import scoped_id
    from store.session_store import s3_config

    dynamodb = local_client(endpoint_url=endpoint)
    s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
    tables = create_tables(dynamodb, prefix=prefix, s3=s3)
    store = SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
    for i in range(96):
        store.create_session("otto", session_id=scoped_id("otto", f"s{i}"))
    runtime.use_store(store)
    content_type = "application/x-protobuf" if "protobuf" in case else "application/json"
    body = body_file.read_bytes()
    event = http_event("POST", "/v1/traces", headers={"content-type": content_type}, body=body, claims={"sub": "otto"})
    requests = [0]
    dynamodb.meta.events.register("before-send.dynamodb.*", lambda **_: requests.__setitem__(0, requests[0] + 1))
    s3.meta.events.register("before-send.s3.*", lambda **_: requests.__setitem__(0, requests[0] + 1))
    Path("/proc/self/clear_refs").write_text("5")  # Linux: the peak RSS (VmHWM) starts again from now
    before = _status_kb("VmRSS")
    started = time.perf_counter()
    response = lambda_handler(event, LambdaContext())
    seconds = time.perf_counter() - started
    peak = _status_kb("VmHWM")
    made = requests[0]
    answer = response.get("body") or ""
    stored = sum(len(store.list_trace_runs(scoped_id("otto", f"s{i}"), owner="otto")) for i in range(96))
    return {
        "case": case,
        "body_bytes": len(body),
        "status": int(response["statusCode"]),
        "answer": answer[:160] if isinstance(answer, str) else "",
        "seconds": seconds,
        "peak_mb_above_baseline": (peak - before) / 1024,
        "peak_mb": peak / 1024,  # the whole interpreter's, imports included
        "aws_requests": made,
        "runs_stored": stored,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--case":
        case = CASES[int(sys.argv[3])]
        print(json.dumps(run_case(sys.argv[2], case, f"otlp{sys.argv[3]}", Path(sys.argv[4]))), flush=True)
        return
    from functions.api.traces import MAX_SPANS, MAX_TRACES
    from infra.local.aws import moto_server_process

    started = time.perf_counter()
    rows = []
    with moto_server_process() as endpoint, tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(CASES):
            body_file = Path(tmp) / f"body{i}"
            body_file.write_bytes(body_of(case)[0])
            done = subprocess.run(  # nosec B603: this interpreter, this module
                [sys.executable, "-m", "bench.otlp_receiver", "--case", endpoint, str(i), str(body_file)],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(done.stdout.strip().splitlines()[-1])
            row["case"] = case.replace("MAX_SPANS", f"{MAX_SPANS:,}").replace("MAX_TRACES", str(MAX_TRACES))
            rows.append(row)
            print(json.dumps(row), flush=True)
    from bench.report import record

    record(
        "otlp",
        {
            "date": time.strftime("%Y-%m-%d"),
            "seconds": time.perf_counter() - started,
            "max_spans": MAX_SPANS,
            "max_traces": MAX_TRACES,
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
