"""bench/results.md and its plots, written from the measurements of bench/compare.py (results.json) and
nothing else: every figure in the report is computed here from a measured sample.

    .venv/bin/python -m bench.report [bench/results.json]    # re-render without measuring again
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from store.core.lexical import LEXICAL_DIMENSIONS

OURS = "agent-session-store"
APPEND_BYTES_FACTOR = 1.2
APPEND_BYTES_SLACK = 300
IMPORT_TARGET = 1.5
MEMORY_TARGET_MB = 64
LOAD_LAST = 50
FLAT_GROWTH = 1.5


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def paired_ratio(ours: list[dict[str, Any]], peer: list[dict[str, Any]]) -> float:
    """Median over samples taken pair by pair (same message, same round) of our time / the peer's."""
    ratios = [a["seconds"] / b["seconds"] for a, b in zip(ours, peer, strict=False) if b["seconds"] > 0]
    return median(ratios)


def _kb(n: float) -> str:
    return f"{n:,.0f} B" if n < 10_000 else f"{n / 1024:,.1f} KB"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def markdown_table(columns: list[str], rows: list[list[Any]], right: int = 0) -> list[str]:
    """A markdown table of `rows` under `columns`, its last `right` columns aligned right."""
    rule = ["---"] * (len(columns) - right) + ["---:"] * right
    return [f"| {' | '.join(columns)} |", f"| {' | '.join(rule)} |", *(f"| {' | '.join(map(str, r))} |" for r in rows)]


def _stat(samples: list[dict[str, Any]], field: str) -> float:
    return median([s[field] for s in samples])


def lengths_of(workload: dict[str, Any]) -> list[int]:
    found = {int(n) for c in workload["contenders"].values() for n in c["lengths"]}
    return sorted(found)


def workload_tables(name: str, workload: dict[str, Any]) -> list[str]:
    """Markdown for one workload: appends and loads per history length, and what failed."""
    out = [f"### Workload `{name}`", ""]
    measured = workload["measured_turns"]
    out.append(
        f"{len(measured)} measured messages (median {median([t['json_bytes'] for t in measured]):,.0f} B as JSON, "
        f"median {median([t['stored_bytes'] for t in measured]):,.0f} B as this store keeps them), appended at "
        "every history length; then the last 50 loaded."
    )
    out.append("")
    contenders = workload["contenders"]
    ours = contenders[OURS]["lengths"]
    for length in lengths_of(workload):
        out += [
            f"**{length:,} messages of history**",
            "",
            "| store | requests / append | bytes sent / append | WCU / append | time / append | ours ÷ theirs "
            "| load last 50: requests | bytes received | RCU | time | ours ÷ theirs |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for cname, c in contenders.items():
            row = c["lengths"].get(str(length))
            if row is not None:
                out.append(_contender_row(cname, c["uses_aws"], row, ours.get(str(length))))
        raw = (ours.get(str(length)) or {}).get("raw_query_seconds")
        if raw:
            out += [
                "",
                f"Of our load time, moto's own Query of those items took {_ms(median(raw))} (moto reads every item of "
                "the table for a Query, so it grows with everything stored on the server, not with this "
                "conversation; the peers' single-item GetItem does not pay it).",
            ]
        out.append("")
    failures = [(n, c["failure"]) for n, c in contenders.items() if c["failure"]]
    if failures:
        out += ["What failed:", ""]
        for cname, f in failures:
            out.append(f"- {cname}: after {f['length']:,} messages: `{f['error']}`")
        out.append("")
    return out


def _contender_row(cname: str, aws: bool, row: dict[str, Any], mine: dict[str, Any] | None) -> str:
    """One contender's appends and loads at one history length (ratios to ours; `n/a` where it uses no AWS)."""
    a, lo = row["appends"], row["loads"]
    ratio_a = "" if cname == OURS or not mine else f"{paired_ratio(mine['appends'], a):.2f}"
    ratio_l = "" if cname == OURS or not mine else f"{paired_ratio(mine['loads'], lo):.2f}"

    def on_aws(text: Any) -> Any:
        return text if aws else "n/a"

    return (
        f"| {cname} | {_stat(a, 'requests') if aws else 'n/a (disk)'} | "
        f"{on_aws(_kb(_stat(a, 'bytes_sent')))} | {on_aws(_stat(a, 'wcu'))} | "
        f"{_ms(_stat(a, 'seconds'))} | {ratio_a} | {on_aws(_stat(lo, 'requests'))} | "
        f"{on_aws(_kb(_stat(lo, 'bytes_received')))} | {on_aws(_stat(lo, 'rcu'))} | "
        f"{_ms(_stat(lo, 'seconds'))} | {ratio_l} |"
    )


Target = tuple[str, str, bool]  # (the target, what was measured, whether it is met)


def targets(results: dict[str, Any]) -> list[str]:
    """The design's targets, each with the measured figure and whether it is met."""
    agent = results["workloads"]["agent"]["contenders"][OURS]["lengths"]
    measured = results["workloads"]["agent"]["measured_turns"]
    lengths = sorted(int(n) for n in agent)
    rows = [
        _one_request_per_append(agent, lengths),
        _bytes_per_append(agent, lengths, measured),
        _load_flat(agent, lengths),
        _handler_imports(results),
    ]
    if "artifact_memory" in results:
        rows.append(_artifact_memory(results["artifact_memory"]))
    out = ["| target | measured | met |", "|---|---|---|"]
    out += [f"| {t} | {m} | {'yes' if ok else '**no**'} |" for t, m, ok in rows]
    return out


def _one_request_per_append(agent: dict[str, Any], lengths: list[int]) -> Target:
    counts = {n: [s["requests"] for s in agent[str(n)]["appends"]] for n in lengths}
    worst = max(max(v) for v in counts.values())
    return (
        "one request per append at any history length (sequence known)",
        ", ".join(f"{n:,}: {median([float(x) for x in v]):g} (max {max(v)})" for n, v in counts.items()),
        worst == 1,
    )


def _bytes_per_append(agent: dict[str, Any], lengths: list[int], measured: list[dict[str, Any]]) -> Target:
    checks = []
    fixed = []
    for n in lengths:
        for sample, turn in zip(agent[str(n)]["appends"], measured, strict=False):
            stored = turn["stored_bytes"]
            checks.append(sample["bytes_sent"] <= APPEND_BYTES_FACTOR * stored + APPEND_BYTES_SLACK)
            fixed.append(sample["bytes_sent"] - 4 / 3 * stored)
    return (
        f"bytes per append ≤ {APPEND_BYTES_FACTOR}× the compressed message + {APPEND_BYTES_SLACK} B",
        f"{sum(checks)} of {len(checks)} appends within; bytes sent = 4/3 × compressed + a median "
        f"{median(fixed):,.0f} B (base64 of the body, then keys, head update and field names)",
        all(checks),
    )


def _load_flat(agent: dict[str, Any], lengths: list[int]) -> Target:
    """Compared across the lengths where LOAD_LAST messages exist to load."""
    full = [n for n in lengths if n >= LOAD_LAST] or lengths
    load_t = {n: _stat(agent[str(n)]["loads"], "seconds") for n in full}
    load_r = {n: _stat(agent[str(n)]["loads"], "requests") for n in full}
    load_b = {n: _stat(agent[str(n)]["loads"], "bytes_received") for n in full}
    raw = {n: median(agent[str(n)].get("raw_query_seconds", [])) for n in full}
    above = {n: load_t[n] - raw[n] for n in full}
    growth = above[full[-1]] / above[full[0]]
    flat = len(set(load_r.values())) == 1 and growth < FLAT_GROWTH
    return (
        f"loading the last {LOAD_LAST} flat in history length",
        f"at {', '.join(f'{n:,}' for n in full)} messages: requests {', '.join(f'{load_r[n]:g}' for n in full)}; "
        f"bytes {', '.join(_kb(load_b[n]) for n in full)}; time {', '.join(_ms(load_t[n]) for n in full)}, "
        f"of which moto's bare Query of those {LOAD_LAST} items {', '.join(_ms(raw[n]) for n in full)} (moto "
        f"reads the whole table for a Query; DynamoDB reads the page); time above it "
        f"{', '.join(_ms(above[n]) for n in full)} ({growth:.2f}× from {full[0]:,} to {full[-1]:,}; flat: "
        f"the same requests and under {FLAT_GROWTH}× the time above moto's Query)",
        flat,
    )


def _handler_imports(results: dict[str, Any]) -> Target:
    imports = results["imports"]["modules"]
    handlers = {m: imports[m]["ratio"] for m in ("functions.api.app", "functions.cascade.app") if m in imports}
    return (
        f"handler import ≤ {IMPORT_TARGET}× `import boto3`",
        ", ".join(f"`{m}` {r:.2f}×" for m, r in handlers.items()),
        all(r <= IMPORT_TARGET for r in handlers.values()),
    )


def _artifact_memory(measured: dict[str, Any]) -> Target:
    peaks = {d: r["peak_above_baseline_mb"] for d, r in measured["directions"].items()}
    return (
        f"peak memory of a {measured['mb']} MB artifact < {MEMORY_TARGET_MB} MB above baseline",
        ", ".join(f"{d} {p:.1f} MB" for d, p in peaks.items()),
        all(p < MEMORY_TARGET_MB for p in peaks.values()),
    )


def special(results: dict[str, Any]) -> list[str]:
    s = results["special"]
    out = [
        f"One tool output of {s['huge_json_bytes'] / 1024:,.0f} KB (as JSON) appended after 10 messages:",
        "",
        "| store | result | requests | bytes sent | WCU | time |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in s["huge"].items():
        if "error" in r:
            out.append(f"| {name} | **failed**: `{r['error'][:160]}` | | | | |")
        else:
            out.append(
                f"| {name} | stored ({r['calls'] or 'local files'}) | {r['requests']} | {_kb(r['bytes_sent'])} "
                f"| {r['wcu']:g} | {_ms(r['seconds'])} |"
            )
    cold, warm = s["ours_cold_append"], s["ours_warm_append"]
    out += [
        "",
        f"Our first append from a new store object (sequence not yet known): {cold['requests']} requests "
        f"({cold['calls']}); the next one: {warm['requests']} ({warm['calls']}).",
    ]
    parts = s.get("ours_append_anatomy")
    if parts:
        out += [
            "",
            f"Anatomy of that append's request ({parts['request']:,} B): the message body, base64-encoded as "
            f"DynamoDB's JSON protocol sends binary, {parts['message_body_base64']:,} B; the rest of the message "
            f"item (keys, ids, role, timestamp, codec) {parts['message_item_rest']:,} B; the head's conditional "
            f"update (sequence check, deletion and expiry guards, `updated_at` for the recency index) "
            f"{parts['head_update']:,} B; envelope and idempotency token {parts['envelope']:,} B. Of the whole, "
            f"{parts['separator_spaces']:,} B are the spaces botocore's JSON serializer writes after every ',' "
            "and ':'.",
        ]
    return out


def first_turn_lines(imports: dict[str, Any]) -> list[str]:
    """The handler's import and its first requests, when the measurement has them."""
    first = imports.get("first_requests")
    if not first:
        return []
    return [
        "",
        f"A cold start as its first requests see it (median of {imports['rounds']} fresh interpreters; the "
        "API handler over the memory backend, so no network): import "
        f"{first['import_ms']:.0f} ms, then the first turn (create, append, read: 3 requests) "
        f"{first['first_turn_ms']:.0f} ms and the next one {first['next_turn_ms']:.0f} ms: what the handler "
        "defers to its first requests is the difference of the two turns.",
    ]


def startup_section(results: dict[str, Any]) -> list[str]:
    imp = results["imports"]
    out = [
        f"Median of {imp['rounds']} fresh interpreters each (`python -X importtime -c 'import M'`, Lambda's "
        "environment variables set), as a multiple of `import boto3`:",
        "",
        "`store` defers boto3 to its first AWS call, so its row is the library without the SDK; a handler "
        "imports both.",
        "",
        "| module | median | min | max | × boto3 |",
        "|---|---|---|---|---|",
    ]
    for m, r in imp["modules"].items():
        out.append(
            f"| `{m}` | {r['median_ms']:.0f} ms | {r['min_ms']:.0f} ms | {r['max_ms']:.0f} ms | {r['ratio']:.2f} |"
        )
    out += [
        "",
        "Where `import functions.api.app` spends its time (own import time summed by top-level package, one run):",
        "",
        "| package | ms |",
        "|---|---|",
    ]
    out += [f"| `{p}` | {ms:.0f} |" for p, ms in imp["breakdown"]]
    out += first_turn_lines(imp)
    if "bundle" in results:
        b = results["bundle"]
        out += [
            "",
            f"Deployment bundle (`make bundle`: store, functions and their wheels for python3.12 arm64): "
            f"{b['unzipped_bytes'] / 2**20:.1f} MB unzipped, {b['zipped_bytes'] / 2**20:.1f} MB zipped "
            "(Lambda's limit: 250 MB unzipped).",
        ]
    return out


def memory_section(results: dict[str, Any]) -> list[str]:
    if "artifact_memory" not in results:
        return ["Not measured in this run (`--quick`)."]
    m = results["artifact_memory"]
    out = [
        f"A {m['mb']} MB artifact streamed up (multipart, {m['part_size_mb']} MB parts) and down, each direction in a "
        "fresh process; peak resident set (VmHWM) above the process's baseline:",
        "",
        "| direction | baseline RSS | peak above baseline | throughput on moto |",
        "|---|---|---|---|",
    ]
    for d, r in m["directions"].items():
        out.append(
            f"| {d} | {r['baseline_mb']:.1f} MB | {r['peak_above_baseline_mb']:.1f} MB | {r['mb_per_s']:.0f} MB/s |"
        )
    return out


def plots(results: dict[str, Any], out: Path) -> list[str]:
    """bytes_per_append.png and time_per_append.png: one panel per workload, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    for field, title, scale, unit, filename in (
        ("bytes_sent", "bytes sent per append", 1.0, "bytes", "bytes_per_append.png"),
        ("seconds", "wall time per append (median, moto)", 1000.0, "ms", "time_per_append.png"),
    ):
        names = list(results["workloads"])
        fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.5), squeeze=False)
        for ax, wname in zip(axes[0], names, strict=True):
            for cname, c in results["workloads"][wname]["contenders"].items():
                if field == "bytes_sent" and not c["uses_aws"]:
                    continue
                xs = sorted(int(n) for n in c["lengths"])
                ys = [_stat(c["lengths"][str(n)]["appends"], field) * scale for n in xs]
                if xs:
                    ax.plot(xs, ys, marker="o", label=cname)
                if c["failure"]:
                    at = max(c["failure"]["length"], 1)
                    ax.axvline(at, linestyle=":", linewidth=0.8, color="grey")
                    ax.annotate(
                        f"{cname.split()[0]} fails at {at:,}",
                        (at, 0.02),
                        xycoords=("data", "axes fraction"),
                        rotation=90,
                        fontsize=6,
                        color="grey",
                        va="bottom",
                    )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("messages already in the conversation")
            ax.set_ylabel(unit)
            ax.set_title(f"{title}: {wname}")
            ax.grid(True, which="both", linewidth=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / filename, dpi=110)
        plt.close(fig)
        files.append(filename)
    return files


def langgraph_section(results: dict[str, Any]) -> list[str]:
    """SessionStoreSaver against DynamoDBSaver at each history length (bench/langgraph_savers.py)."""
    graph = results.get("langgraph")
    if not graph:
        return ["Not measured in this run."]
    out = [f"Measured {graph['date']} by bench/langgraph_savers.py.", ""] if graph.get("date") else []
    out += [
        f"One thread per checkpointer, grown through the history lengths by an agent loop (each super-step adds "
        f"a short assistant message to `messages`); at each length one run of {graph['steps']} steps is measured, "
        "and its cost divided by the checkpoints it made (per super-step: the put and the task's writes). Then "
        "`graph.get_state` (the latest checkpoint) and `saver.list` (the whole history). Capacity as above; "
        "this store reads strongly consistently (a read costs twice an eventually consistent one).",
        "",
        "| checkpoints | checkpointer | per super-step: requests | bytes sent | WCU "
        "| load latest: requests | RCU | list history: requests | RCU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for length in graph["lengths"]:
        for name, rows in graph["savers"].items():
            row = rows.get(str(length))
            if row is None:
                continue
            step, latest, listing = row["super_step"], row["load_latest"], row["list_history"]
            out.append(
                f"| {row['checkpoints']} | {name} | {step['requests']:.1f} | {_kb(step['bytes_sent'])} "
                f"| {step['wcu']:.1f} | {latest['requests']:.0f} | {latest['rcu']:.1f} "
                f"| {listing['requests']:.0f} | {listing['rcu']:.1f} |"
            )
    return out


def not_measured(module: str) -> list[str]:
    """A section's text when `module`'s results are not in this run."""
    return [f"Not measured in this run: `python -m {module}` adds it.", ""]


def contention_section(results: dict[str, Any]) -> list[str]:
    """Many writers on one session, the design before the writer queue and after it (bench/append_contention.py)."""
    c = results.get("contention")
    if not c:
        return not_measured("bench.append_contention")
    lines = [
        f"Measured {c['date']} by bench/append_contention.py in {c['seconds'] / 60:.1f} minutes: W writers (threads, a "
        f"store each) append {c['appends_per_writer']} single messages each to one session, at the default settings, "
        "on moto's server in its own process (one request at a time, as one hot item), with no added latency and with "
        f'10 ms added to every request. "before" is the store at {c["baseline"]} (full-jitter backoff after every '
        'lost race, a 5 s budget of elapsed time); "after" is this one (a lost race retried at once, the session\'s '
        "writer queue after two losses, only contention backed off). Attempts are the write requests "
        "(TransactWriteItems, UpdateItem) one append made; reads are its GetItem calls (the queue's looks at the "
        "head).",
        "",
        "| round trip | design | writers | appends | Conflicts | appends/s | p50 ms | p99 ms | attempts mean | "
        "attempts max | reads/append | gapless, none lost or doubled |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in c["runs"]:
        whole = r["gapless"] and not r["missing"] and not r["duplicated"] and not r["other_errors"]
        lines.append(
            f"| {r['latency_ms']:.0f} ms | {r['design']} | {r['writers']} | {r['appends']} | {r['conflicts']} | "
            f"{r['per_second']:.0f} | {r['p50_ms']:.0f} | {r['p99_ms']:.0f} | {r['attempts_mean']:.2f} | "
            f"{r['attempts_max']} | {r['reads_per_append']:.2f} | {'yes' if whole else 'NO'} |"
        )
    return [*lines, ""]


def otlp_section(results: dict[str, Any]) -> list[str]:
    """The worst requests to POST /v1/traces (bench/otlp_receiver.py): time and peak memory."""
    o = results.get("otlp")
    if not o:
        return not_measured("bench.otlp_receiver")
    lines = [
        f"Measured {o['date']} by bench/otlp_receiver.py: each request in a fresh interpreter through the API handler "
        "(as the deployed function receives it), on moto's server. The function has 512 MB and 29 s; one request may "
        f"carry {o['max_spans']:,} spans and store {o['max_traces']} traces (docs/reliability.md, hostile input). Peak "
        "memory is the interpreter's peak RSS above what it held before the request.",
        "",
        "| request | body | answer | s | peak MB above baseline | peak MB | AWS requests | runs stored |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in o["rows"]:
        lines.append(
            f"| {r['case']} | {r['body_bytes'] / 1e6:.2f} MB | {r['status']} | {r['seconds']:.2f} | "
            f"{r['peak_mb_above_baseline']:.0f} | {r['peak_mb']:.0f} | {r['aws_requests']} | {r['runs_stored']} |"
        )
    return [*lines, ""]


def recall_section(results: dict[str, Any]) -> list[str]:
    """Long-term memory's retrieval quality (bench/memory_recall.py): recall@5 by search mode and backend."""
    r = results.get("memory_recall")
    if not r:
        return not_measured("bench.memory_recall")
    lines = [
        f"Measured {r['date']} by bench/memory_recall.py: {r['memory']['memories']} memories of one owner and "
        f"{r['memory']['questions']} questions whose answer is one of them ({r['set']}), embedded by {r['embedder']}; "
        "a question is recalled at 5 when its answer is among the first five hits. Both backends rank with the same "
        "rules (DynamoDB's vector search from infra/local/vectors.py: exact neighbours).",
        "",
        "| backend | semantic | keyword | hybrid | 200 puts (s) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for backend in ("memory", "dynamodb"):
        b = r[backend]
        lines.append(
            f"| {backend} | {b['recall@5 semantic']:.2f} | {b['recall@5 keyword']:.2f} | {b['recall@5 hybrid']:.2f} | "
            f"{b['put_seconds']:.1f} |"
        )
    return [*lines, ""]


MEMORY_OPERATIONS = (
    "put",
    "get",
    "search",
    "search by keyword",
    "search by hybrid",
    "search the owner",
    "list",
    "list_namespaces",
)


def stale_buckets(measured: int) -> list[str]:
    """A line saying that a memory costs table was measured with another count of word buckets than the store
    ships (its vectors then had another length: a put and a listing cost what docs/decisions.md says now)."""
    if measured == LEXICAL_DIMENSIONS:
        return []
    return [
        "",
        f"Measured with {measured:,} word buckets in each vector; the store now ships {LEXICAL_DIMENSIONS:,}, "
        'whose items are larger: docs/decisions.md ("1,024 buckets, measured") gives a put and a listing as '
        "they cost now. The requests are the same.",
    ]


def memory_costs_section(results: dict[str, Any]) -> list[str]:
    """Long-term memory against langgraph-checkpoint-aws's DynamoDBStore (bench/memory_costs.py): requests,
    capacity and bytes per operation and size, side by side."""
    r = results.get("memory_costs")
    if not r:
        return not_measured("bench.memory_costs")
    (ours, ours_rows), (theirs, their_rows) = list(r["contenders"].items())
    lines = [
        f"Measured {r['date']} by bench/memory_costs.py: one owner's memories in {r['topics']} namespaces, both "
        f"stores through LangGraph's store calls with the same index ({r['embedder']}, the `text` field), each "
        "on a moto server of its own with infra/local/vectors.py. Past "
        f"{r['through_api']:,} items the rest are copies of each store's own item (checked against it). Capacity "
        "is computed from item sizes (a Query or Scan billed for the whole items it reads); a SearchVectors' own "
        "unit has no public formula, so its requests and bytes are shown. `found`: what the call returned. "
        "Wall times are left out: they are the emulator's exact search and moto's table reads, not DynamoDB's.",
        *stale_buckets(r.get("word_buckets", 512)),
        "",
        f"| operation | items | {ours}: requests | RCU | WCU | bytes received | found "
        f"| {theirs}: requests | RCU | WCU | bytes received | found |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for operation in MEMORY_OPERATIONS:
        for size in r["sizes"]:
            cells = []
            for rows in (ours_rows, their_rows):
                c = rows.get(str(size), {}).get(operation)
                if c is None:
                    cells.append("— | | | |")
                    continue
                if "skipped" in c:
                    cells.append(f"{c['skipped']} | | | |")
                    continue
                cells.append(
                    f"{c['requests']:g} | {c['rcu']:g} | {c['wcu']:g} | {c['bytes_received']:,.0f} | {c['found']}"
                )
            lines.append(f"| {operation} | {size:,} | {cells[0]} | {cells[1]} |")
    put_bytes = [
        next(
            (
                rows[str(n)]["put"]["index_bytes"]
                for n in reversed(r["sizes"])
                if "index_bytes" in rows.get(str(n), {}).get("put", {})
            ),
            0,
        )
        for rows in (ours_rows, their_rows)
    ]
    lines += [
        "",
        f"Bytes a put replicates into the vector index (its projection; DynamoDB meters index writes by them): "
        f"{ours} {put_bytes[0]:,}, {theirs} {put_bytes[1]:,}.",
        "",
    ]
    return lines


def locomo_section(results: dict[str, Any]) -> list[str]:
    """Retrieval on LoCoMo (bench/locomo.py): recall@k per mode and embedder, and at size."""
    r = results.get("memory_locomo")
    if not r:
        return not_measured("bench.locomo")
    lines = [
        f"Measured {r['date']} by bench/locomo.py on LoCoMo ({r['data']}): each of its 10 conversations' turns put "
        "as one memory (`<speaker>: <text>`) in a namespace of its own; each question with annotated evidence "
        "asked with `search_memories(owner, namespace, query=question, limit=50, mode=...)` on the memory backend "
        "(DynamoDB ranks the same: tests/aws/test_memories_on_aws.py). Recall@k: the share of a question's "
        "evidence turns among the first k hits, averaged over questions. The paper's dense retriever (DRAGON, "
        "turns as units) scored 56.7 / 66.2 / 76.7 / 82.7.",
        "",
        "Scope `namespace`: each question asked in its conversation's namespace (the paper's protocol); scope "
        "`owner`: over the owner's whole prefix, all ten conversations' turns (5,882 memories), the other "
        "conversations' turns being distractors of the same style.",
        "",
        "| embedder | scope | mode | questions | R@5 | R@10 | R@25 | R@50 |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for embedder, scopes in r["embedders"].items():
        for scope, modes in scopes.items():
            for mode, row in modes.items():
                lines.append(
                    f"| {embedder} | {scope} | {mode} | {row['questions']} | {row['R@5']} | {row['R@10']} | "
                    f"{row['R@25']} | {row['R@50']} |"
                )
    for note in r.get("notes", []):
        lines += ["", note]
    size = r.get("at_size")
    if size:
        lines += [
            "",
            f"At size ({size['embedder']}): the same, then again after {size['unrelated']:,} unrelated memories "
            f"(bench/noise.py) were put among the conversations' {size['memories']:,} (a tenth in each "
            "conversation's namespace). Scope `namespace`: questions asked in their conversation's namespace, the "
            "protocol above; scope `owner`: over the owner's whole prefix (all conversations' turns and all the "
            "unrelated memories).",
            "",
            "| scope | questions | mode | when | R@5 | R@10 | R@25 | R@50 | seconds a search (memory backend) |",
            "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for scope, measured in size["scopes"].items():
            for mode in measured["before"]:
                for when in ("before", "after"):
                    row = measured[when][mode]
                    lines.append(
                        f"| {scope} | {measured['questions']} | {mode} | {when} | {row['R@5']} | {row['R@10']} | "
                        f"{row['R@25']} | {row['R@50']} | {row['seconds per search']} |"
                    )
    if results.get("memory_lexical_buckets"):
        lines += buckets_lines(results["memory_lexical_buckets"])
    return [*lines, ""]


def buckets_lines(r: dict[str, Any]) -> list[str]:
    """Keyword recall on LoCoMo by the number of word buckets, at size (bench/lexical_buckets.py's `r`)."""
    return [
        "",
        f"Word buckets, measured {r['date']} by bench/lexical_buckets.py: keyword search in each conversation's "
        "namespace, the 100 candidates by the hashed words then BM25 over them (the store's search by words) with "
        "each bucket count, against exact BM25 over the whole namespace; over the turns alone and with "
        f"{r['unrelated']:,} unrelated memories among them. The store ships {LEXICAL_DIMENSIONS:,} "
        "(store/core/lexical.py; 512 until 2026-12-06).",
        "",
        "| buckets | memories | R@5 | R@10 | R@25 | R@50 |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
        *(
            f"| {row['buckets']} | {row['memories']:,} | "
            + " | ".join(str(row[f"R@{k}"]) for k in (5, 10, 25, 50))
            + " |"
            for row in r["rows"]
        ),
    ]


def extraction_section(results: dict[str, Any]) -> list[str]:
    """Memory extraction's cost per turn at each trigger setting (bench/extraction_costs.py)."""
    r = results.get("memory_extraction")
    if not r:
        return not_measured("bench.extraction_costs")
    lines = [
        f"Measured {r['date']} by bench/extraction_costs.py: one conversation appended a message at a time on "
        "DynamoDB (moto), facts and preferences extracted each time the session grew by N messages, as the "
        "stack's extraction function does; the model a deterministic function in the answer's shape (no model is "
        "reachable here), so the store's requests and the characters sent are measured and the tokens estimated "
        "(4 characters a token). Per user turn (a user message and the assistant's answer):",
        "",
        "| every N messages | requests | WCU | RCU | model questions | characters sent | estimated tokens |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in r["rows"]:
        t = row["per turn"]
        lines.append(
            f"| {row['every']} | {t['requests']} | {t['wcu']} | {t['rcu']} | {t['model questions']} | "
            f"{t['characters sent']:,} | {t['estimated tokens']:,} |"
        )
    return [*lines, ""]


def turn_latency_section(results: dict[str, Any]) -> list[str]:
    """What persisting a turn adds to its latency, per framework, ours and its peer (bench/turn_latency.py)."""
    r = results.get("turn_latency")
    if not r:
        return not_measured("bench.turn_latency")
    lines = [
        f"Measured {r['date']} by bench/turn_latency.py: one agent turn through each framework's own loop with a "
        "scripted model (the tool call, its result, the answer), its session kept by this store's adapter at its "
        "defaults or by the framework's DynamoDB backend of choice, on a moto server answering every request "
        f"{r['rtt ms']:g} ms after it arrives (a round trip), one at a time. Each session at {r['turns']} turns; "
        f"{r['rounds']} turns timed, the variants taking turns. `added`: the median turn's time less the median "
        "turn with the framework's own in-memory session; `on DynamoDB`: the same with moto's own work on each "
        "request taken out (moto parses a transaction's expressions in Python for 5 to 15 ms, a PutItem's in 1: "
        'time no DynamoDB request takes; docs/decisions.md, "Turn latency"). The turn\'s costs in requests and '
        "capacity: docs/integrations.md.",
        "",
    ]
    columns = ["framework", "backend", "requests", "added", "added on DynamoDB", "moto's own work"]
    cells = [
        [row["framework"], row["backend"], row["requests"]]
        + [f"{row[field]:.1f} ms" for field in ("added ms", "added ms on DynamoDB", "moto ms")]
        for row in r["rows"]
    ]
    return [*lines, *markdown_table(columns, cells, right=3), ""]


def vector_emulator_section(results: dict[str, Any]) -> list[str]:
    """One SearchVectors on the local stack's vector index at each size (bench/vector_emulator.py)."""
    r = results.get("vector_emulator")
    if not r:
        return not_measured("bench.vector_emulator")
    lines = [
        f"Measured {r['date']} by bench/vector_emulator.py: one owner's memories in the memories table as "
        "template.yaml makes it for e5-small (an index of 384 + 1,024 = 1,408 dimensions), on moto's server in a "
        "process of its own with infra/local/vectors.py; each SearchVectors sent through boto3 as the store sends "
        "one (the owner's partition, the embedder or the words' scheme, not expired; TopK 100), its whole round "
        "trip timed. The first search after the writes reads the new items into the emulator's matrix; the "
        "others are the median of 20. Targets (issue 56): 50 ms or less at 3,000, under 1 s at 100,000.",
        "",
    ]
    columns = ["memories", "first search", "search by meaning", "search by words", "search after one more put"]
    fields = ("first search", "search by meaning", "search by words", "search after a put")
    cells = [[f"{row['memories']:,}", *(_ms(row[f]) for f in fields)] for row in r["rows"]]
    return [*lines, *markdown_table(columns, cells, right=len(columns)), ""]


RESULTS = Path(__file__).parent / "results.json"


def record(key: str, value: dict[str, Any]) -> None:
    """Keep one benchmark's measurement in bench/results.json under `key` and render bench/results.md again."""
    path = RESULTS
    results = json.loads(path.read_text())
    results[key] = value
    path.write_text(json.dumps(results, indent=1, default=str))
    write_report(results, path.parent)


def write_report(results: dict[str, Any], out: Path) -> None:
    """Write results.md and the plots into `out` from `results` (the output of bench.compare)."""
    m = results["machine"]
    images = plots(results, out)
    lines = [
        "# Benchmarks: agent-session-store against what users would pick instead",
        "",
        "Generated by `make bench` (bench/compare.py, then bench/report.py from bench/results.json); every "
        "figure below is a measurement of that run. Do not edit by hand.",
        "",
        f"Run {m['date']} on {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['platform']}, Python "
        f"{m['python']}; {results['seconds'] / 60:.1f} minutes in all. Versions: "
        + ", ".join(f"{p} {v}" for p, v in m["packages"].items())
        + ".",
        "",
        "Every store talks to the same moto server (its own process, one request at a time, no added latency). "
        "Requests and bytes are counted by botocore event hooks on each store's own boto3 session (HTTP request "
        "and response bodies; retries count). Capacity units are computed from item sizes with DynamoDB's rules "
        "(bench/meter.py), because moto reports a constant. Wall times are moto's CPU plus each client's: they "
        "rank the work each design asks for, not DynamoDB's latency. Ratios are medians of per-pair ratios "
        "(the same message, appended by each store in turn).",
        "",
        "## Targets",
        "",
        *targets(results),
        "",
        "## Appends and loads by history length",
        "",
    ]
    for name, workload in results["workloads"].items():
        lines += workload_tables(name, workload)
    lines += ["## A 500 KB tool output", "", *special(results), ""]
    lines += ["## LangGraph: SessionStoreSaver against DynamoDBSaver", "", *langgraph_section(results), ""]
    lines += ["## Many writers on one session", "", *contention_section(results)]
    lines += ["## The OTLP receiver's worst requests", "", *otlp_section(results)]
    lines += ["## Memory retrieval on LoCoMo", "", *locomo_section(results)]
    lines += ["## Memory extraction: cost per turn", "", *extraction_section(results)]
    lines += ["## The local stack's vector index", "", *vector_emulator_section(results)]
    lines += ["## Turn latency through each framework", "", *turn_latency_section(results)]
    lines += ["## Long-term memory: recall@5", "", *recall_section(results)]
    lines += [
        "## Long-term memory: against langgraph-checkpoint-aws's DynamoDBStore",
        "",
        *memory_costs_section(results),
    ]
    lines += ["## Cold start", "", *startup_section(results), ""]
    lines += ["## Memory", "", *memory_section(results), ""]
    lines += ["## Plots", ""] + [f"![{i}]({i})" for i in images] + [""]
    (out / "results.md").write_text("\n".join(lines))


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "results.json"
    write_report(json.loads(path.read_text()), path.parent)


if __name__ == "__main__":
    main()
