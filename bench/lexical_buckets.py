"""How many buckets the words' half of a memory's vector needs: keyword search on LoCoMo with 256, 512 or 1,024
buckets, with and without unrelated memories, against exact BM25 over the whole namespace (the ceiling).

    python -m bench.lexical_buckets --data PATH [--noise 100000] [--buckets 256,512,1024] [--record]

PATH as bench/locomo.py takes it. Each conversation's namespace holds its turns and, with `--noise N`, a tenth of
N unrelated memories (bench/noise.py), as `bench.locomo --noise` puts them. A search by words is what the store
does (store/core/lexical.py): the 100 memories whose hashed words have the greatest dot product with the query's
(ties in key order, as the index and the memory backend break them), ranked by BM25 with those candidates' own
statistics. It is computed here from the same functions rather than through a store, so that bucket counts the
store does not ship can be measured; at the shipped count (LEXICAL_DIMENSIONS) it gives what `bench.locomo`
measures through the store (to a tie).
Exact BM25 scores every memory of the namespace with the namespace's statistics: what no bounded search reaches.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.locomo import KS, Conversation, load
from store.core import lexical

CANDIDATES = 100  # what one search by words asks the index for (store/core/memories.py, MAX_TOP_K)
Namespace = tuple[list[str], list[list[str]]]  # keys (evidence ids first, then n0, n1...) and each one's words


def namespaces(conversations: list[Conversation], noise: list[str]) -> dict[str, Namespace]:
    """Each conversation's memories: its turns, then the i-th unrelated memory where i mod 10 is its place."""
    out: dict[str, Namespace] = {}
    for at, conv in enumerate(conversations):
        mine = noise[at :: len(conversations)]
        keys = [*conv.turns, *(f"n{at + i * len(conversations)}" for i in range(len(mine)))]
        out[conv.name] = (keys, [lexical.terms(t) for t in [*conv.turns.values(), *mine]])
    return out


def hashed_search(keys: list[str], docs: list[list[str]], buckets: int) -> Any:
    """A function from a query to the keys a search by words returns with `buckets` buckets, best first."""
    postings: dict[int, list[tuple[int, float]]] = defaultdict(list)  # the index's dot product, kept sparse
    for i, words in enumerate(docs):
        vector = lexical.document_vector(words, buckets) or ()
        for at, x in enumerate(vector):
            if x:
                postings[at].append((i, x))
    by_key = sorted(range(len(keys)), key=lambda i: keys[i])
    place = {i: p for p, i in enumerate(by_key)}

    def search(question: str) -> list[str]:
        words = lexical.terms(question)
        query = lexical.query_vector(words, buckets)
        if query is None:
            return []
        dots: dict[int, float] = defaultdict(float)
        for at, q in enumerate(query):
            for i, x in postings.get(at, ()) if q else ():
                dots[i] += q * x
        found = sorted((i for i, d in dots.items() if d > 0), key=lambda i: (-dots[i], place[i]))[:CANDIDATES]
        scores = lexical.bm25(words, [docs[i] for i in found])
        ranked = sorted((j for j in range(len(found)) if scores[j] > 0), key=lambda j: (-scores[j], j))
        return [keys[found[j]] for j in ranked]

    return search


def exact_search(keys: list[str], docs: list[list[str]]) -> Any:
    """A function from a query to every memory holding one of its words, by BM25 over the whole namespace
    (`lexical.bm25` given all of it: the namespace's own statistics)."""

    def search(question: str) -> list[str]:
        scores = lexical.bm25(lexical.terms(question), docs)
        return [k for s, k in sorted((-s, k) for s, k in zip(scores, keys, strict=True) if s > 0)]

    return search


def recall(conversations: list[Conversation], searches: dict[str, Any]) -> dict[str, float]:
    """R@k over every question with evidence, each asked in its conversation's namespace."""
    sums, asked = dict.fromkeys(KS, 0.0), 0
    for conv in conversations:
        for question, evidence, _ in conv.questions:
            keys = searches[conv.name](question)
            for k in KS:
                sums[k] += sum(1 for e in evidence if e in keys[:k]) / len(evidence)
            asked += 1
    return {f"R@{k}": round(100 * sums[k] / max(asked, 1), 1) for k in KS}


def measure(conversations: list[Conversation], noise: list[str], buckets: list[int]) -> list[dict[str, Any]]:
    """A row per bucket count and exact BM25, over the turns alone and with the noise."""
    rows = []
    for extra in ([], noise) if noise else ([],):
        spaces = namespaces(conversations, extra)
        memories = sum(len(keys) for keys, _ in spaces.values())
        for count in [*buckets, 0]:
            searches = {
                name: hashed_search(keys, docs, count) if count else exact_search(keys, docs)
                for name, (keys, docs) in spaces.items()
            }
            row = {"buckets": count or "exact BM25", "memories": memories, **recall(conversations, searches)}
            print(row, flush=True)
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--noise", type=int, default=100000)
    parser.add_argument("--buckets", default="256,512,1024")
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    from bench.noise import unrelated

    rows = measure(load(args.data), unrelated(args.noise), [int(b) for b in args.buckets.split(",")])
    if args.record:
        from datetime import UTC, datetime

        from bench.locomo import DATA
        from bench.report import record

        record(
            "memory_lexical_buckets",
            {"date": datetime.now(UTC).date().isoformat(), "data": DATA, "unrelated": args.noise, "rows": rows},
        )


if __name__ == "__main__":
    main()
