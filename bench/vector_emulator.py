"""The local stack's vector index (infra/local/vectors.py): how long one SearchVectors takes at a size.

    python -m bench.vector_emulator [--sizes 3000 100000] [--searches 20] [--record]

The method, beside its figures: bench/report_template.md, "The local stack's vector index". A size not measured
in this run keeps its recorded row."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from datetime import UTC, datetime
from typing import Any

from bench.report import RESULTS, record
from infra.local.aws import create_tables, local_client, moto_server_process
from store.core.lexical import LEXICAL_DIMENSIONS, LEXICAL_SCHEME

SIZES = (3_000, 100_000)
DENSE = 384
DIMENSIONS = DENSE + LEXICAL_DIMENSIONS
OWNER_PK = "O#bench"
EMBEDDER = "e5-small"
SEARCHES = 20
BATCH = 25


def _dense(rng: random.Random) -> list[float]:
    raw = [rng.gauss(0.0, 1.0) for _ in range(DENSE)]
    norm = sum(x * x for x in raw) ** 0.5
    return [round(x / norm, 3) for x in raw]


def _words(rng: random.Random) -> list[float]:
    out = [0.0] * LEXICAL_DIMENSIONS
    for _ in range(rng.randrange(3, 15)):
        out[rng.randrange(LEXICAL_DIMENSIONS)] = rng.choice((-1, 1)) * round(rng.uniform(0.5, 1.6), 2)
    return out


def _item(i: int, rng: random.Random) -> dict[str, Any]:
    return {
        "pk": {"S": OWNER_PK},
        "sk": {"S": f"M#topic-{i % 10}/|m{i:07d}"},
        "ns": {"S": f"topic-{i % 10}/"},
        "emb": {"S": EMBEDDER},
        "lex": {"S": LEXICAL_SCHEME},
        "exp": {"N": "99999999999"},
        "txt": {"S": f"memory {i}"},
        "vec": {"L": [{"N": str(x)} for x in _dense(rng) + _words(rng)]},
    }


def _search(client: Any, table: str, vector: list[float], kind: tuple[str, str]) -> float:
    """One SearchVectors as the store sends one; its seconds."""
    started = time.perf_counter()
    client.search_vectors(
        TableName=table,
        IndexName="by_meaning",
        SearchVector=[{"N": str(x)} for x in vector],
        TopK=100,
        SearchConditionExpression="#pk = :pk AND #k = :k AND #exp >= :now",
        ExpressionAttributeNames={"#pk": "pk", "#k": kind[0], "#exp": "exp"},
        ExpressionAttributeValues={":pk": {"S": OWNER_PK}, ":k": {"S": kind[1]}, ":now": {"N": str(int(time.time()))}},
    )
    return time.perf_counter() - started


def measure(sizes: list[int], searches: int) -> list[dict[str, Any]]:
    """Each size's search times (seconds), on one server: the table grows from one size to the next."""
    rng = random.Random(56)
    rows = []
    with moto_server_process(lean=True) as url:
        client = local_client(endpoint_url=url)
        table = str(create_tables(client, prefix="vx", parameters={"MemoryEmbeddingDimensions": 384}).memories)
        have = 0
        for size in sizes:
            started = time.perf_counter()
            while have < size:
                chunk = [_item(i, rng) for i in range(have, min(size, have + BATCH))]
                client.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": i}} for i in chunk]})
                have += len(chunk)
            written = time.perf_counter() - started
            meaning = ("emb", EMBEDDER)
            words = ("lex", LEXICAL_SCHEME)
            first = _search(client, table, _dense(rng) + [0.0] * LEXICAL_DIMENSIONS, meaning)
            by_meaning = [
                _search(client, table, _dense(rng) + [0.0] * LEXICAL_DIMENSIONS, meaning) for _ in range(searches)
            ]
            by_words = [_search(client, table, [0.0] * DENSE + _words(rng), words) for _ in range(searches)]
            client.put_item(TableName=table, Item=_item(have, rng))
            have += 1
            after_put = _search(client, table, _dense(rng) + [0.0] * LEXICAL_DIMENSIONS, meaning)
            rows.append(
                {
                    "memories": size,
                    "dimensions": DIMENSIONS,
                    "seconds to write": round(written, 1),
                    "first search": round(first, 4),
                    "search by meaning": round(statistics.median(by_meaning), 4),
                    "search by words": round(statistics.median(by_words), 4),
                    "search after a put": round(after_put, 4),
                }
            )
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--searches", type=int, default=SEARCHES)
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    rows = measure(sorted(args.sizes), args.searches)
    if args.record:
        record("vector_emulator", {"date": datetime.now(UTC).date().isoformat(), "rows": merged(rows)})


def merged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` beside the recorded rows of the sizes this run did not measure (a size is measured alone: 100,000
    memories take over half an hour to write)."""
    recorded = json.loads(RESULTS.read_text()).get("vector_emulator") or {}
    measured = {row["memories"] for row in rows}
    kept = [row for row in recorded.get("rows", []) if row["memories"] not in measured]
    return sorted(kept + rows, key=lambda row: int(row["memories"]))


if __name__ == "__main__":
    main()
