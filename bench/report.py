"""bench/results.md and its plots, from bench/results.json and nothing else: every figure in the report is
computed here from a measured sample. The prose is bench/report_template.md: one `## ` section per question,
whose comment names the results it reads and the module that measures them; this module fills its fields.

    .venv/bin/python -m bench.report [bench/results.json]    # re-render without measuring again
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from store.core.lexical import LEXICAL_DIMENSIONS

OURS = "agent-session-store"
RESULTS = Path(__file__).parent / "results.json"
TEMPLATE = Path(__file__).parent / "report_template.md"
APPEND_BYTES_FACTOR = 1.2
APPEND_BYTES_SLACK = 300
IMPORT_TARGET = 1.5
MEMORY_TARGET_MB = 64
LOAD_LAST = 50
FLAT_GROWTH = 1.5
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
Fields = dict[str, Any]
Target = tuple[str, str, bool]  # (the target, what was measured, whether it is met)


def median(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.median(values) if values else float("nan")


def kb(n: float) -> str:
    return f"{n:,.0f} B" if n < 10_000 else f"{n / 1024:,.1f} KB"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def table(columns: Iterable[str], rows: Iterable[Iterable[Any]], right: int = 0) -> str:
    """A markdown table of `rows` under `columns`, its last `right` columns aligned right."""
    columns = list(columns)
    rule = ["---"] * (len(columns) - right) + ["---:"] * right
    lines = [columns, rule, *rows]
    return "\n".join(f"| {' | '.join(map(str, line))} |" for line in lines)


def _stat(samples: dict[str, list[float]], field: str) -> float:
    return median(samples[field])


def paired_ratio(ours: dict[str, list[float]], peer: dict[str, list[float]]) -> float:
    """Median over samples taken pair by pair (same message, same round) of our time / the peer's."""
    return median(a / b for a, b in zip(ours["seconds"], peer["seconds"], strict=False) if b > 0)


# ---------------------------------------------------------------- bench/compare.py: appends, loads, targets


def workloads(_: Any, results: dict[str, Any]) -> Fields:
    return {"workloads": "\n".join(workload_text(name, w) for name, w in results["workloads"].items())}


def workload_text(name: str, workload: dict[str, Any]) -> str:
    """One workload: appends and loads per history length, and what failed."""
    measured = workload["measured_turns"]
    out = [
        f"### Workload `{name}`",
        "",
        f"{len(measured['json_bytes'])} measured messages (median {median(measured['json_bytes']):,.0f} B as JSON, "
        f"median {median(measured['stored_bytes']):,.0f} B as this store keeps them), appended at every history "
        "length; then the last 50 loaded.",
        "",
    ]
    contenders = workload["contenders"]
    ours = contenders[OURS]["lengths"]
    columns = ["store", "requests / append", "bytes sent / append", "WCU / append", "time / append", "ours ÷ theirs"]
    columns += ["load last 50: requests", "bytes received", "RCU", "time", "ours ÷ theirs"]
    for length in sorted({int(n) for c in contenders.values() for n in c["lengths"]}):
        rows = [
            _contender_row(cname, c["uses_aws"], c["lengths"][str(length)], ours.get(str(length)))
            for cname, c in contenders.items()
            if str(length) in c["lengths"]
        ]
        out += [f"**{length:,} messages of history**", "", table(columns, rows)]
        raw = (ours.get(str(length)) or {}).get("raw_query_seconds")
        if raw:
            out += [
                "",
                f"Of our load time, moto's own Query of those items took {ms(median(raw))} (moto reads every item of "
                "the table for a Query, so it grows with everything stored on the server, not with this "
                "conversation; the peers' single-item GetItem does not pay it).",
            ]
        out.append("")
    failures = [(n, c["failure"]) for n, c in contenders.items() if c["failure"]]
    if failures:
        out += ["What failed:", "", *(f"- {n}: after {f['length']:,} messages: `{f['error']}`" for n, f in failures)]
        out.append("")
    return "\n".join(out)


def _contender_row(cname: str, aws: bool, row: dict[str, Any], mine: dict[str, Any] | None) -> list[Any]:
    """One contender's appends and loads at one history length (ratios to ours; `n/a` where it uses no AWS)."""
    a, lo = row["appends"], row["loads"]
    ratios = (
        ["", ""]
        if cname == OURS or not mine
        else [f"{paired_ratio(mine[k], row[k]):.2f}" for k in ("appends", "loads")]
    )

    def on_aws(text: Any) -> Any:
        return text if aws else "n/a"

    return [
        cname,
        _stat(a, "requests") if aws else "n/a (disk)",
        on_aws(kb(_stat(a, "bytes_sent"))),
        on_aws(_stat(a, "wcu")),
        ms(_stat(a, "seconds")),
        ratios[0],
        on_aws(_stat(lo, "requests")),
        on_aws(kb(_stat(lo, "bytes_received"))),
        on_aws(_stat(lo, "rcu")),
        ms(_stat(lo, "seconds")),
        ratios[1],
    ]


def targets(_: Any, results: dict[str, Any]) -> Fields:
    """The design's targets, each with the measured figure and whether it is met."""
    agent = results["workloads"]["agent"]["contenders"][OURS]["lengths"]
    measured = results["workloads"]["agent"]["measured_turns"]["stored_bytes"]
    lengths = sorted(int(n) for n in agent)
    rows = [
        _one_request_per_append(agent, lengths),
        _bytes_per_append(agent, lengths, measured),
        _load_flat(agent, lengths),
        _handler_imports(results),
    ]
    if "artifact_memory" in results:
        rows.append(_artifact_memory(results["artifact_memory"]))
    return {"targets": table(["target", "measured", "met"], [(t, m, "yes" if ok else "**no**") for t, m, ok in rows])}


def _one_request_per_append(agent: dict[str, Any], lengths: list[int]) -> Target:
    counts = {n: agent[str(n)]["appends"]["requests"] for n in lengths}
    return (
        "one request per append at any history length (sequence known)",
        ", ".join(f"{n:,}: {median(float(x) for x in v):g} (max {max(v)})" for n, v in counts.items()),
        max(max(v) for v in counts.values()) == 1,
    )


def _bytes_per_append(agent: dict[str, Any], lengths: list[int], stored: list[int]) -> Target:
    pairs = [
        (sent, size)
        for n in lengths
        for sent, size in zip(agent[str(n)]["appends"]["bytes_sent"], stored, strict=False)
    ]
    checks = [sent <= APPEND_BYTES_FACTOR * size + APPEND_BYTES_SLACK for sent, size in pairs]
    return (
        f"bytes per append ≤ {APPEND_BYTES_FACTOR}× the compressed message + {APPEND_BYTES_SLACK} B",
        f"{sum(checks)} of {len(checks)} appends within; bytes sent = 4/3 × compressed + a median "
        f"{median(sent - 4 / 3 * size for sent, size in pairs):,.0f} B (base64 of the body, then keys, head update "
        "and field names)",
        all(checks),
    )


def _load_flat(agent: dict[str, Any], lengths: list[int]) -> Target:
    """Compared across the lengths where LOAD_LAST messages exist to load."""
    full = [n for n in lengths if n >= LOAD_LAST] or lengths
    loads = {n: agent[str(n)]["loads"] for n in full}
    load_t = {n: _stat(loads[n], "seconds") for n in full}
    load_r = {n: _stat(loads[n], "requests") for n in full}
    raw = {n: median(agent[str(n)].get("raw_query_seconds", [])) for n in full}
    above = {n: load_t[n] - raw[n] for n in full}
    growth = above[full[-1]] / above[full[0]]

    def each(values: dict[int, Any], shown: Callable[[Any], str]) -> str:
        return ", ".join(shown(values[n]) for n in full)

    return (
        f"loading the last {LOAD_LAST} flat in history length",
        f"at {each({n: n for n in full}, '{:,}'.format)} messages: requests {each(load_r, '{:g}'.format)}; "
        f"bytes {each({n: _stat(loads[n], 'bytes_received') for n in full}, kb)}; time {each(load_t, ms)}, "
        f"of which moto's bare Query of those {LOAD_LAST} items {each(raw, ms)} (moto reads the whole table for a "
        f"Query; DynamoDB reads the page); time above it {each(above, ms)} ({growth:.2f}× from {full[0]:,} to "
        f"{full[-1]:,}; flat: the same requests and under {FLAT_GROWTH}× the time above moto's Query)",
        len(set(load_r.values())) == 1 and growth < FLAT_GROWTH,
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


def special(_: Any, results: dict[str, Any]) -> Fields:
    s = results["special"]
    rows = [
        [name, f"**failed**: `{r['error'][:160]}`", "", "", "", ""]
        if "error" in r
        else [
            name,
            f"stored ({r['calls'] or 'local files'})",
            r["requests"],
            kb(r["bytes_sent"]),
            f"{r['wcu']:g}",
            ms(r["seconds"]),
        ]
        for name, r in s["huge"].items()
    ]
    return {
        "huge_kb": s["huge_json_bytes"] / 1024,
        "huge": table(["store", "result", "requests", "bytes sent", "WCU", "time"], rows),
        "cold": s["ours_cold_append"],
        "warm": s["ours_warm_append"],
        "a": s["ours_append_anatomy"],
    }


def plots(results: dict[str, Any], out: Path) -> Fields:
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
                if xs:
                    ax.plot(xs, [_stat(c["lengths"][str(n)]["appends"], field) * scale for n in xs], "o-", label=cname)
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
            ax.set(xscale="log", yscale="log", xlabel="messages already in the conversation", ylabel=unit)
            ax.set_title(f"{title}: {wname}")
            ax.grid(True, which="both", linewidth=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / filename, dpi=110)
        plt.close(fig)
        files.append(filename)
    return {"plots": "\n".join(f"![{i}]({i})" for i in files)}


# ---------------------------------------------------------------- one section per benchmark module


def langgraph(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """SessionStoreSaver against DynamoDBSaver at each history length (bench/langgraph_savers.py)."""
    columns = ["checkpoints", "checkpointer", "per super-step: requests", "bytes sent", "WCU"]
    columns += ["load latest: requests", "RCU", "list history: requests", "RCU"]
    rows = []
    for length in r["lengths"]:
        for name, saver in r["savers"].items():
            if (row := saver.get(str(length))) is not None:
                step, latest, listing = row["super_step"], row["load_latest"], row["list_history"]
                rows.append(
                    [
                        row["checkpoints"],
                        name,
                        f"{step['requests']:.1f}",
                        kb(step["bytes_sent"]),
                        f"{step['wcu']:.1f}",
                        f"{latest['requests']:.0f}",
                        f"{latest['rcu']:.1f}",
                        f"{listing['requests']:.0f}",
                        f"{listing['rcu']:.1f}",
                    ]
                )
    measured = f"Measured {r['date']} by bench/langgraph_savers.py.\n\n" if r.get("date") else ""
    return {"table": table(columns, rows), "measured": measured}


def contention(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """Many writers on one session, the design before the writer queue and after it."""
    columns = ["round trip", "design", "writers", "appends", "Conflicts", "appends/s", "p50 ms", "p99 ms"]
    columns += ["attempts mean", "attempts max", "reads/append", "gapless, none lost or doubled"]
    rows = [
        [
            f"{w['latency_ms']:.0f} ms",
            w["design"],
            w["writers"],
            w["appends"],
            w["conflicts"],
            f"{w['per_second']:.0f}",
            f"{w['p50_ms']:.0f}",
            f"{w['p99_ms']:.0f}",
            f"{w['attempts_mean']:.2f}",
            w["attempts_max"],
            f"{w['reads_per_append']:.2f}",
            "yes" if _whole(w) else "NO",
        ]
        for w in r["runs"]
    ]
    return {"minutes": r["seconds"] / 60, "table": table(columns, rows)}


def _whole(run: dict[str, Any]) -> bool:
    return bool(run["gapless"] and not run["missing"] and not run["duplicated"] and not run["other_errors"])


def otlp(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """The worst requests to POST /v1/traces: time and peak memory."""
    columns = ["request", "body", "answer", "s", "peak MB above baseline", "peak MB", "AWS requests", "runs stored"]
    rows = [
        [
            q["case"],
            f"{q['body_bytes'] / 1000000.0:.2f} MB",
            q["status"],
            f"{q['seconds']:.2f}",
            f"{q['peak_mb_above_baseline']:.0f}",
            f"{q['peak_mb']:.0f}",
            q["aws_requests"],
            q["runs_stored"],
        ]
        for q in r["rows"]
    ]
    return {"table": table(columns, rows)}


def _recall(row: dict[str, Any]) -> list[Any]:
    return [row[f"R@{k}"] for k in (5, 10, 25, 50)]


def memory_locomo(r: dict[str, Any], results: dict[str, Any]) -> Fields:
    """Retrieval on LoCoMo: recall@k per mode and embedder, at size, and by word buckets."""
    columns = ["embedder", "scope", "mode", "questions", "R@5", "R@10", "R@25", "R@50"]
    rows = [
        [embedder, scope, mode, row["questions"], *_recall(row)]
        for embedder, scopes in r["embedders"].items()
        for scope, modes in scopes.items()
        for mode, row in modes.items()
    ]
    notes = "".join(f"\n\n{note}" for note in r.get("notes", []))
    return {
        "table": table(columns, rows, right=5),
        "notes": notes,
        "at_size": _at_size(r),
        "buckets": _buckets(results),
    }


def context_locomo(r: dict[str, Any], results: dict[str, Any]) -> Fields:
    """Evidence in the context at each budget, against the recent window alone."""
    columns = [
        "budget (tokens)",
        "evidence in context",
        "recent window alone",
        "tokens used (mean)",
        "seconds a context",
    ]
    rows = [
        [
            f"{row['budget']:,}",
            row["context"],
            row["recent window"],
            f"{row['mean tokens used']:,}",
            row["seconds a context"],
        ]
        for row in r["rows"]
    ]
    return {"table": table(columns, rows, right=4)}


def message_index_costs(r: dict[str, Any], results: dict[str, Any]) -> Fields:
    """What a context reads, by the session's length."""
    rows = [[f"{int(size):,}", row["requests"], row["total"]] for size, row in r["context"].items()]
    long = max(int(size) for size in r["context"])
    return {"table": table(["messages in the session", "requests", "in all"], rows, right=1), "long": long}


def _at_size(r: dict[str, Any]) -> str:
    size = r.get("at_size")
    if not size:
        return ""
    columns = ["scope", "questions", "mode", "when", "R@5", "R@10", "R@25", "R@50", "seconds a search (memory backend)"]
    rows = [
        [scope, measured["questions"], mode, when, *_recall(row := measured[when][mode]), row["seconds per search"]]
        for scope, measured in size["scopes"].items()
        for mode in measured["before"]
        for when in ("before", "after")
    ]
    return (
        f"\n\nAt size ({size['embedder']}): the same, then again after {size['unrelated']:,} unrelated memories "
        f"(bench/noise.py) were put among the conversations' {size['memories']:,} (a tenth in each conversation's "
        "namespace). Scope `namespace`: questions asked in their conversation's namespace, the protocol above; "
        "scope `owner`: over the owner's whole prefix (all conversations' turns and all the unrelated memories)."
        f"\n\n{table(columns, rows, right=5)}"
    )


def _buckets(results: dict[str, Any]) -> str:
    """Keyword recall on LoCoMo by the number of word buckets, at size (bench/lexical_buckets.py)."""
    r = results.get("memory_lexical_buckets")
    if not r:
        return ""
    rows = [[row["buckets"], f"{row['memories']:,}", *_recall(row)] for row in r["rows"]]
    return (
        f"\n\nWord buckets, measured {r['date']} by bench/lexical_buckets.py: keyword search in each conversation's "
        "namespace, the 100 candidates by the hashed words then BM25 over them (the store's search by words) with "
        "each bucket count, against exact BM25 over the whole namespace; over the turns alone and with "
        f"{r['unrelated']:,} unrelated memories among them. The store ships {LEXICAL_DIMENSIONS:,} "
        f"(store/core/lexical.py; 512 until 2026-12-06).\n\n{table(['buckets', 'memories', *_R], rows, right=5)}"
    )


_R = ["R@5", "R@10", "R@25", "R@50"]


def memory_extraction(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """Memory extraction's cost per turn at each trigger setting."""
    columns = ["every N messages", "requests", "WCU", "RCU", "model questions", "characters sent", "estimated tokens"]
    counts = ("requests", "wcu", "rcu", "model questions")
    rows = [
        [row["every"], *(t[k] for k in counts), f"{t['characters sent']:,}", f"{t['estimated tokens']:,}"]
        for row in r["rows"]
        if (t := row["per turn"])
    ]
    return {"table": table(columns, rows, right=len(columns))}


def vector_emulator(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """One SearchVectors on the local stack's vector index at each size."""
    columns = ["memories", "first search", "search by meaning", "search by words", "search after one more put"]
    fields = ("first search", "search by meaning", "search by words", "search after a put")
    rows = [[f"{row['memories']:,}", *(ms(row[f]) for f in fields)] for row in r["rows"]]
    return {"table": table(columns, rows, right=len(columns))}


def turn_latency(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """What persisting a turn adds to its latency, per framework, ours and its peer."""
    columns = ["framework", "backend", "requests", "added", "added on DynamoDB", "moto's own work"]
    fields = ("added ms", "added ms on DynamoDB", "moto ms")
    rows = [
        [row["framework"], row["backend"], row["requests"], *(f"{row[f]:.1f} ms" for f in fields)] for row in r["rows"]
    ]
    return {"table": table(columns, rows, right=3)}


def memory_recall(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """Long-term memory's retrieval quality: recall@5 by search mode and backend."""
    modes = [f"recall@5 {mode}" for mode in ("semantic", "keyword", "hybrid")]
    rows = [[b, *(f"{r[b][m]:.2f}" for m in modes), f"{r[b]['put_seconds']:.1f}"] for b in ("memory", "dynamodb")]
    return {"table": table(["backend", "semantic", "keyword", "hybrid", "200 puts (s)"], rows)}


def memory_costs(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    """Long-term memory against langgraph-checkpoint-aws's DynamoDBStore: requests, capacity and bytes per
    operation and size, side by side."""
    (ours, ours_rows), (theirs, their_rows) = list(r["contenders"].items())
    cost = ["requests", "RCU", "WCU", "bytes received", "found"]
    rows = []
    for operation in MEMORY_OPERATIONS:
        for size in r["sizes"]:
            cells = [operation, f"{size:,}"]
            for each in (ours_rows, their_rows):
                c = each.get(str(size), {}).get(operation)
                if c is None or "skipped" in c:
                    cells += ["—" if c is None else c["skipped"], "", "", "", ""]
                else:
                    cells += [f"{c['requests']:g}", f"{c['rcu']:g}", f"{c['wcu']:g}", f"{c['bytes_received']:,.0f}"]
                    cells.append(c["found"])
            rows.append(cells)
    columns = ["operation", "items", f"{ours}: requests", *cost[1:], f"{theirs}: requests", *cost[1:]]
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
    return {
        "table": table(columns, rows, right=len(columns) - 1),
        "stale": stale_buckets(r.get("word_buckets", 512)),
        "put_bytes": f"{ours} {put_bytes[0]:,}, {theirs} {put_bytes[1]:,}",
    }


def stale_buckets(measured: int) -> str:
    """A sentence saying that a memory costs table was measured with another count of word buckets than the
    store ships (its vectors then had another length: a put and a listing cost what docs/decisions.md says)."""
    if measured == LEXICAL_DIMENSIONS:
        return ""
    return (
        f"\n\nMeasured with {measured:,} word buckets in each vector; the store now ships {LEXICAL_DIMENSIONS:,}, "
        'whose items are larger: docs/decisions.md ("1,024 buckets, measured") gives a put and a listing as '
        "they cost now. The requests are the same."
    )


def imports(r: dict[str, Any], results: dict[str, Any]) -> Fields:
    """Import times as multiples of `import boto3`, where the API handler's go, its first turn, the bundle."""
    rows = [
        [f"`{m}`", *(f"{v[k]:.0f} ms" for k in ("median_ms", "min_ms", "max_ms")), f"{v['ratio']:.2f}"]
        for m, v in r["modules"].items()
    ]
    bundle = results.get("bundle")
    return {
        "table": table(["module", "median", "min", "max", "× boto3"], rows),
        "breakdown": table(["package", "ms"], [[f"`{p}`", f"{t:.0f}"] for p, t in r["breakdown"]]),
        "first_turn": first_turn(r),
        "bundle": f"\n\nDeployment bundle (`make bundle`: store, functions and their wheels for python3.12 arm64): "
        f"{bundle['unzipped_bytes'] / 2**20:.1f} MB unzipped, {bundle['zipped_bytes'] / 2**20:.1f} MB zipped "
        "(Lambda's limit: 250 MB unzipped)."
        if bundle
        else "",
    }


def first_turn(imports: dict[str, Any]) -> str:
    """The handler's import and its first requests, when the measurement has them."""
    first = imports.get("first_requests")
    if not first:
        return ""
    return (
        f"\n\nA cold start as its first requests see it (median of {imports['rounds']} fresh interpreters; the "
        f"API handler over the memory backend, so no network): import {first['import_ms']:.0f} ms, then the first "
        f"turn (create, append, read: 3 requests) {first['first_turn_ms']:.0f} ms and the next one "
        f"{first['next_turn_ms']:.0f} ms: what the handler defers to its first requests is the difference of the "
        "two turns."
    )


def artifact_memory(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    columns = ["direction", "baseline RSS", "peak above baseline", "throughput on moto"]
    rows = [
        [d, f"{m['baseline_mb']:.1f} MB", f"{m['peak_above_baseline_mb']:.1f} MB", f"{m['mb_per_s']:.0f} MB/s"]
        for d, m in r["directions"].items()
    ]
    return {"table": table(columns, rows)}


# ---------------------------------------------------------------- the template


Builder = Callable[[Any, dict[str, Any]], Fields]  # (the section's results, all the results) -> its fields


def sections(template: str) -> dict[str, tuple[str, str, str]]:
    """A template's sections by heading: (the results key, the module measuring it or `-`, the text)."""
    out = {}
    for chunk in template.split("\n## ")[1:]:
        heading, comment, text = chunk.split("\n", 2)
        key, module = comment.removeprefix("<!-- ").removesuffix(" -->").split()
        out[heading] = (key, module, text.removeprefix("\n"))
    return out


def render(template: str, results: dict[str, Any], builders: dict[str, Builder]) -> list[str]:
    """`template` filled from `results`: its head by builders[""], each section by builders[heading] given the
    results under the section's key (without them: a line saying which module measures them, or nothing when
    the module is `-`)."""
    head = template.split("\n## ")[0]
    lines = [head.format(**builders[""](results, results))]
    for heading, (key, module, text) in sections(template).items():
        body = _filled(heading, key, module, text, results, builders)
        lines += [f"## {heading}", "", *body] if body else []
    return lines


def section(
    heading: str, results: dict[str, Any], template: str = "", builders: dict[str, Builder] | None = None
) -> list[str]:
    """One section of a report (bench/results.md's unless `template` and `builders` say otherwise), its lines."""
    key, module, text = sections(template or TEMPLATE.read_text())[heading]
    return _filled(heading, key, module, text, results, builders or SECTIONS)


def _filled(
    heading: str, key: str, module: str, text: str, results: dict[str, Any], builders: dict[str, Builder]
) -> list[str]:
    """A section's text filled by its builder, or the line saying which module measures it (none for `-`)."""
    if key not in results:
        return [] if module == "-" else [f"Not measured in this run: `python -m {module}` adds it.", ""]
    fields = builders[heading](results[key], results)
    return text.format(r=results[key], **fields).split("\n")


def head(_: Any, results: dict[str, Any]) -> Fields:
    versions = ", ".join(f"{p} {v}" for p, v in results["machine"]["packages"].items())
    return {"m": results["machine"], "minutes": results["seconds"] / 60, "versions": versions}


SECTIONS: dict[str, Builder] = {
    "": head,
    "Targets": targets,
    "Appends and loads by history length": workloads,
    "A 500 KB tool output": special,
    "LangGraph: SessionStoreSaver against DynamoDBSaver": langgraph,
    "Many writers on one session": contention,
    "The OTLP receiver's worst requests": otlp,
    "Memory retrieval on LoCoMo": memory_locomo,
    "Context for a turn on LoCoMo": context_locomo,
    "The message index: what indexing costs, what a context reads": message_index_costs,
    "Memory extraction: cost per turn": memory_extraction,
    "The local stack's vector index": vector_emulator,
    "Turn latency through each framework": turn_latency,
    "Long-term memory: recall@5": memory_recall,
    "Long-term memory: against langgraph-checkpoint-aws's DynamoDBStore": memory_costs,
    "Cold start": imports,
    "Memory": artifact_memory,
}


def record(key: str, value: dict[str, Any]) -> None:
    """Keep one benchmark's measurement in bench/results.json under `key` and render bench/results.md again."""
    results = json.loads(RESULTS.read_text())
    results[key] = value
    write_results(results, RESULTS)
    write_report(results, RESULTS.parent)


def write_results(results: dict[str, Any], path: Path) -> None:
    """`results` as JSON, each list or object of plain values on one line (a run's samples stay short)."""
    path.write_text(compact_json(results) + "\n")


def compact_json(value: Any, depth: int = 0) -> str:
    """JSON indented by one space a level, where a list or object holding no list or object is one line."""
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    if inner is None or not any(isinstance(v, dict | list) for v in inner):
        return json.dumps(value, default=str)
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        parts = [f"{pad}{json.dumps(k)}: {compact_json(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(parts) + "\n" + " " * depth + "}"
    parts = [pad + compact_json(v, depth + 1) for v in value]
    return "[\n" + ",\n".join(parts) + "\n" + " " * depth + "]"


def write_report(results: dict[str, Any], out: Path) -> None:
    """Write results.md and the plots into `out` from `results` (the output of bench.compare)."""
    builders = {**SECTIONS, "Plots": lambda _, results: plots(results, out)}
    (out / "results.md").write_text("\n".join(render(TEMPLATE.read_text(), results, builders)))


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS
    write_report(json.loads(path.read_text()), path.parent)


if __name__ == "__main__":
    main()
