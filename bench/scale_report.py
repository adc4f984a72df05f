"""bench/scale.md from bench/scale.json: what bench/scale.py measured (and bench/startup.py's import times), with
the targets each figure is held to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.report import Builder, Fields, first_turn, render, table

REQUEST_BUDGET = 20.0  # seconds: the template's RequestBudgetSeconds default, what one API request may take
DELETE_BUDGET = 5.0  # seconds: the deadline a delete runs in (the API gives each request REQUEST_BUDGET_SECONDS)
FLAT = 1.5  # a per-call figure is flat when the largest size costs at most this times the smallest


def queries(measured: dict[str, Any]) -> int:
    """How many Query requests a measurement made (from its calls summary, "51 Query + GetItem")."""
    for part in str(measured["calls"]).split(" + "):
        count, _, op = part.rpartition(" ")
        if op == "Query":
            return int(count or 1)
    return 0


def share_of_moto(measured: dict[str, Any], row: dict[str, Any]) -> float:
    """The call's time over moto's own time for as many bare Queries as it made (moto reads the whole
    table for each, and serves one request at a time, so Queries sent at once still queue there): near
    1 or below, the call's time is moto's table reads, not ours."""
    moto = queries(measured) * float(row["moto_query_seconds"])
    return float(measured["seconds"]) / moto if moto else float("nan")


def flat(values: list[float]) -> bool:
    return max(values) <= FLAT * max(min(values), 1e-9)


TEMPLATE = Path(__file__).parent / "scale_template.md"
CALL = ["requests", "bytes received", "RCU"]
PAGE = ["time", "moto's bare Query", "time ÷ (Queries × bare Query)"]


def _cost(m: dict[str, Any], calls: bool = False, rcu: bool = True) -> list[Any]:
    requests = f"{m['requests']} ({m['calls']})" if calls else m["requests"]
    return [requests, f"{m['bytes_received'] / 1024:,.1f} KB", f"{m['rcu']:g}" if rcu else "-"]


def _timed(m: dict[str, Any], row: dict[str, Any], share: bool = True) -> list[str]:
    times = [f"{m['seconds'] * 1000:,.0f} ms", f"{row['moto_query_seconds'] * 1000:,.1f} ms"]
    return [*times, f"{share_of_moto(m, row):.2f}"] if share else times


def head(_: Any, r: dict[str, Any]) -> Fields:
    runs = [f"The long-session part was measured in run {r['sessions_run']}."] if "sessions_run" in r else []
    runs += [f"The fork part was measured in run {r['forks_run']}."] if "forks_run" in r else []
    return {"r": r, "minutes": r["seconds"] / 60, "runs": "".join(f"\n{line}\n" for line in runs)}


def search(r: list[dict[str, Any]], _: dict[str, Any]) -> Fields:
    rows = [
        [
            f"{row['sessions']:,} × {row['messages']}",
            kind,
            *_cost((m := row[kind]), calls=True),
            f"{m['sessions_searched']} / {m['messages_searched']:,}",
            *_timed(m, row),
        ]
        for row in r
        for kind in ("first", "continuation")
    ]
    return {"table": table(["owner's sessions", "call", *CALL, "sessions / messages read", *PAGE], rows)}


def sessions(r: list[dict[str, Any]], _: dict[str, Any]) -> Fields:
    rows = []
    for row in r:
        for kind, label in (("load_full", "load_full"), ("live_context", "load_full(last=50)"), ("delete", "delete")):
            m = row[kind]
            count = m.get("messages_returned", m.get("messages_left_for_the_cascade", 0))
            what = "left for the cascade" if kind == "delete" else "returned"
            rows.append([f"{row['messages']:,}", label, *_cost(m), f"{count:,} {what}", *_timed(m, row)])
    return {"table": table(["messages", "call", *CALL, "returned / left", *PAGE], rows)}


def forks(r: list[dict[str, Any]], _: dict[str, Any]) -> Fields:
    rows = []
    for row in r:
        fork, first, cascade = row["fork"], row["first_read"], row["cascade"]
        n = f"{row['messages']:,}"
        left = "copied by the copy job" if fork["copying"] else "copied within the call"
        copied = (
            f"{cascade['messages_in_the_fork']:,} in the fork{', still copying' if cascade['copying_after'] else ''}"
        )
        copied += f" ({cascade.get('invocations', 1)} invocations)"
        rows += [
            [n, "fork_session", *_cost(fork, calls=True), left, *_timed(fork, row, share=False)],
            [
                n,
                "the copy job's copy",
                *_cost(cascade, calls=True, rcu=False),
                copied,
                *_timed(cascade, row, share=False),
            ],
            [
                n,
                "first read",
                *_cost(first, calls=True),
                f"{first['messages_returned']} returned",
                *_timed(first, row, share=False),
            ],
        ]
    return {"table": table(["messages", "call", *CALL, "what", "time", "moto's bare Query (100)"], rows)}


def imports(r: dict[str, Any], _: dict[str, Any]) -> Fields:
    rows = [[f"`{m}`", f"{v['median_ms']:.0f} ms", f"{v['ratio']:.2f}×"] for m, v in r["modules"].items()]
    return {"table": table(["module", "median", "ratio"], rows), "first_turn": first_turn(r)}


def met(_: Any, results: dict[str, Any]) -> Fields:
    rows = [(name, detail, "yes" if ok else "**no**") for name, ok, detail in targets(results)]
    return {"table": table(["target", "measured", "met"], rows)}


BUILDERS: dict[str, Builder] = {
    "": head,
    "Search, per call": search,
    "A long session, per call": sessions,
    "A fork, per call": forks,
    "Handler import, against `import boto3`": imports,
    "Targets": met,
}


def write_report(results: dict[str, Any], out: Path) -> None:
    """bench/scale.md from the measurements alone."""
    (out / "scale.md").write_text("\n".join(render(TEMPLATE.read_text(), results, BUILDERS)))


def targets(results: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """Each per-call figure flat in the owner's session count and in the session's length."""
    out = [_search_flat(results, kind) for kind in ("first", "continuation")]
    out += [_live_context_flat(results), _delete_within(results)]
    if results.get("forks"):
        out.append(_forks_within(results["forks"]))
    api = results.get("imports", {}).get("modules", {}).get("functions.api.app")
    if api is not None:
        out.append(
            (
                "API handler import ≤ 1.5× `import boto3`",
                api["ratio"] <= FLAT,
                f"{api['ratio']:.2f}× (the floor and the departure: docs/decisions.md, Cold start)",
            )
        )
    return out


def _search_flat(results: dict[str, Any], kind: str) -> tuple[str, bool, str]:
    rows = [r[kind] for r in results["search"]]
    reqs, rcu = [m["requests"] for m in rows], [m["rcu"] for m in rows]
    return (
        f"search ({kind}) flat in the owner's sessions",
        flat([float(r) for r in reqs]) and flat(rcu),
        f"requests {reqs}, RCU {rcu}",
    )


def _live_context_flat(results: dict[str, Any]) -> tuple[str, bool, str]:
    live = [r["live_context"] for r in results["sessions"]]
    return (
        "live-context load flat in the session's length",
        flat([float(m["requests"]) for m in live]) and flat([m["rcu"] for m in live]),
        f"requests {[m['requests'] for m in live]}, RCU {[m['rcu'] for m in live]}",
    )


def _delete_within(results: dict[str, Any]) -> tuple[str, bool, str]:
    deletes = [r["delete"] for r in results["sessions"]]
    worst = max(m["seconds"] for m in deletes)
    return (
        f"delete returns within its {DELETE_BUDGET:g} s deadline (+ 1 page)",
        worst <= DELETE_BUDGET + 2,
        f"longest {worst:.1f} s; left for the cascade {[m['messages_left_for_the_cascade'] for m in deletes]}",
    )


def _forks_within(forks: list[dict[str, Any]]) -> tuple[str, bool, str]:
    calls = [r["fork"] for r in forks]
    longest = max(m["seconds"] for m in calls)
    return (
        f"a fork stays within one request's {REQUEST_BUDGET:g} s budget, however long the session",
        longest <= REQUEST_BUDGET and all(not r["cascade"]["copying_after"] for r in forks),
        f"requests {[m['requests'] for m in calls]}, longest {longest:.1f} s; every fork complete after the "
        f"cascade: {all(not r['cascade']['copying_after'] for r in forks)}",
    )
