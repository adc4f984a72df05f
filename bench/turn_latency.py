"""What persisting one agent turn adds to its latency, through each framework's own loop, with this store's
adapter at its defaults and with the framework's DynamoDB backend of choice (bench/framework_backends.py).

    .venv/bin/python -m bench.turn_latency [--rtt-ms 8] [--turns 10] [--rounds 20] [--record]

The method, beside its figures: bench/report_template.md, "Turn latency through each framework"."""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime
from typing import Any

from bench.framework_backends import BASELINE, FRAMEWORKS, Backend
from bench.report import record
from infra.local.aws import SERVED_HEADER, moto_server_process


def timed(session: Any) -> list[float]:
    """The moto times of the answers to requests of `session` (made into clients after this), as they come."""
    served: list[float] = []

    def after(http_response: Any, **_: Any) -> None:
        served.append(float(http_response.headers.get(SERVED_HEADER, 0.0)))

    session.events.register("after-call", after)
    return served


def contenders(backends: list[Backend]) -> list[Backend]:
    """The baseline, ours at its defaults (the first of ours) and the framework's peer (the first of theirs)."""
    ours = next(b for b in backends if b.name.startswith("ours"))
    theirs = next(b for b in backends if b.name != BASELINE and not b.name.startswith("ours"))
    return [backends[0], ours, theirs]


def sample(backend: Backend) -> tuple[float, float, int]:
    """One turn of `backend`: (wall ms, moto's ms, requests)."""
    backend.probe.clear()
    started = time.perf_counter()
    backend.turn()
    return (time.perf_counter() - started) * 1000, sum(backend.probe), len(backend.probe)


def measure(url: str, turns: int, rounds: int, frameworks: list[str]) -> list[dict[str, Any]]:
    """Each framework's variants brought to `turns` turns, then timed for `rounds` rounds, interleaved."""
    rows = []
    for framework in frameworks:
        variants = contenders(FRAMEWORKS[framework](url, f"lat-{framework.lower().replace(' ', '')}", timed))
        for _ in range(turns - 1):
            for variant in variants:
                variant.turn()
        samples: list[list[tuple[float, float, int]]] = [[] for _ in variants]
        for _ in range(rounds):
            for variant, kept in zip(variants, samples, strict=True):
                kept.append(sample(variant))
        base = statistics.median(wall for wall, _, _ in samples[0])
        for variant, kept in zip(variants[1:], samples[1:], strict=True):
            rows.append(
                {
                    "framework": framework,
                    "backend": variant.name,
                    "requests": round(statistics.median(n for _, _, n in kept)),
                    "added ms": round(statistics.median(w for w, _, _ in kept) - base, 1),
                    "added ms on DynamoDB": round(statistics.median(w - m for w, m, _ in kept) - base, 1),
                    "moto ms": round(statistics.median(m for _, m, _ in kept), 1),
                }
            )
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=8.0)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--frameworks", nargs="*", choices=sorted(FRAMEWORKS), default=list(FRAMEWORKS))
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    with moto_server_process(args.rtt_ms / 1000, timed=True) as url:
        rows = measure(url, args.turns, args.rounds, args.frameworks)
    if args.record:
        when = datetime.now(UTC).date().isoformat()
        record(
            "turn_latency",
            {"date": when, "rtt ms": args.rtt_ms, "turns": args.turns, "rounds": args.rounds, "rows": rows},
        )


if __name__ == "__main__":
    main()
