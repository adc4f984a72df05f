"""What the worst requests to `POST /v1/traces` cost the API function: time and peak memory.

    .venv/bin/python -m bench.otlp_receiver

Each case (CASES: refused floods of empty spans, the largest accepted request, the most traces) runs in a fresh
interpreter; the method, beside its figures: bench/report_template.md, "The OTLP receiver's worst requests"."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import counted, in_fresh_interpreter, our_tables, peak_memory, store_on
from functions.api.otlp_proto import length_delimited, put_varint

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


def run_case(endpoint: str, case: str, prefix: str, body_file: Path) -> dict[str, Any]:
    """In this interpreter: one request of `case` (its body made by the parent, in `body_file`, so that making
    it does not count) through the API handler; its time, peak memory, requests and the trace runs stored."""
    from infra.local.aws import local_environment, local_session

    local_environment("ERROR")
    from functions import runtime
    from functions.api.app import lambda_handler
    from infra.local.apigw import LambdaContext, http_event
    from store.core.scoped_ids import scoped_id

    session = local_session()
    sent = counted(session)
    store = store_on(endpoint, our_tables(endpoint, prefix), session)
    sessions = [scoped_id("otto", f"s{i}") for i in range(96)]
    for sid in sessions:
        store.create_session("otto", session_id=sid)
    runtime.use_store(store)
    content_type = "application/x-protobuf" if "protobuf" in case else "application/json"
    body = body_file.read_bytes()
    event = http_event("POST", "/v1/traces", headers={"content-type": content_type}, body=body, claims={"sub": "otto"})
    before = sent[0]
    with peak_memory() as memory:
        started = time.perf_counter()
        response = lambda_handler(event, LambdaContext())
        seconds = time.perf_counter() - started
    made = sent[0] - before
    answer = response.get("body") or ""
    return {
        "case": case,
        "body_bytes": len(body),
        "status": int(response["statusCode"]),
        "answer": answer[:160] if isinstance(answer, str) else "",
        "seconds": seconds,
        "peak_mb_above_baseline": memory["peak_above_baseline_mb"],
        "peak_mb": memory["peak_mb"],  # the whole interpreter's, imports included
        "aws_requests": made,
        "runs_stored": sum(len(store.list_trace_runs(sid, owner="otto")) for sid in sessions),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
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
            row = in_fresh_interpreter("bench.otlp_receiver", endpoint, str(i), str(body_file))
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
