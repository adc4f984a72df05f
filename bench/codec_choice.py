"""Measure compression codecs on realistic agent message bodies to pick the store's codec and threshold.

Run: .venv/bin/python bench/codec_choice.py   (prints a table; the decision is in docs/decisions.md)
"""

from __future__ import annotations

import bz2
import json
import lzma
import random
import statistics
import time
import zlib
from collections.abc import Callable
from typing import Any

WORDS = (
    "the agent calls a tool to read the file and then summarises results for user with context "
    "error retry lambda dynamodb session message state checkpoint function returns json value"
).split()


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def bodies(seed: int = 7) -> dict[str, list[bytes]]:
    rng = random.Random(seed)
    out: dict[str, list[bytes]] = {}
    for size in (128, 512, 1024, 4096, 32768):
        items = []
        for _ in range(40):
            kind = rng.random()
            msg: dict[str, Any]
            if kind < 0.4:
                msg = {"role": "assistant", "content": text(rng, max(1, size // 6))}
            elif kind < 0.7:
                rows = [
                    {"id": rng.randint(1, 10**6), "name": text(rng, 3), "ok": rng.random() < 0.5}
                    for _ in range(max(1, size // 60))
                ]
                msg = {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(rows)}
            else:
                msg = {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": text(rng, size // 12)},
                        {"type": "tool_use", "id": "tu_1", "name": "search", "input": {"q": text(rng, 8)}},
                    ],
                }
            items.append(json.dumps(msg, separators=(",", ":")).encode())
        out[str(size)] = items
    return out


CODECS: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "zlib-1": (lambda b: zlib.compress(b, 1), zlib.decompress),
    "zlib-6": (lambda b: zlib.compress(b, 6), zlib.decompress),
    "zlib-9": (lambda b: zlib.compress(b, 9), zlib.decompress),
    "bz2-9": (lambda b: bz2.compress(b, 9), bz2.decompress),
    "lzma-6": (lambda b: lzma.compress(b, preset=6), lzma.decompress),
}


def main() -> None:
    data = bodies()
    print(f"{'size':>6} {'codec':>7} {'ratio':>6} {'comp us':>8} {'decomp us':>9}")
    for size, items in data.items():
        raw = sum(len(b) for b in items)
        for name, (comp, decomp) in CODECS.items():
            t0 = time.perf_counter()
            packed = [comp(b) for b in items]
            t1 = time.perf_counter()
            for p in packed:
                decomp(p)
            t2 = time.perf_counter()
            ratio = sum(len(p) for p in packed) / raw
            print(
                f"{size:>6} {name:>7} {ratio:6.2f} {(t1 - t0) / len(items) * 1e6:8.1f} "
                f"{(t2 - t1) / len(items) * 1e6:9.1f}"
            )
    print("median raw sizes:", {k: statistics.median(len(b) for b in v) for k, v in data.items()})


if __name__ == "__main__":
    main()
