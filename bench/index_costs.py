"""What the message index costs (issue 58): indexing a session's messages (requests, write capacity, bytes
stored, embedding calls per message), and what `context` reads at 100 messages and at many more.

    python -m bench.index_costs [--turns 50] [--long 5000] [--record]

On DynamoDB (moto's server, in a process of its own, template.yaml's tables with a 384-dimension index, as for
e5-small), a session of `--turns` turns (a user message and an answer each) appended as a framework does, then
indexed as the stack's cascade indexes it (`index_messages`, metered); the index's items are read back to weigh
them (the write capacity computed from their sizes, bench/meter.py). The embedder is a function of the same
dimensions that counts its calls (the model's cost is its own: one call a page of 100 messages). Then a session
of `--long` messages is indexed, and a turn's indexing metered at its end as at the short one's; and `context` is
metered on both sessions: the same requests whatever the length. The local vector index builds its matrix of a
partition's rows on the first search after they were written (infra/local/vector_rows.py), which at 100,000 rows
outlasts the client's read timeout (a retried request): one context is asked unmetered first, so that what is
metered is the store's requests and not the emulator's warm-up (DynamoDB has none)."""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
from typing import Any

from bench.harness import our_tables, store_on
from bench.meter import metered, timed, write_units
from infra.local.aws import local_client, moto_server_process
from store import SessionStore, Settings
from store.aws.attrs import item_size
from store.embeddings import FunctionEmbedder

DIMENSIONS = 384


class Counting:
    """A deterministic embedder of DIMENSIONS that counts its calls and the texts it embedded."""

    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0
        self.embedder = FunctionEmbedder(self._vectors, DIMENSIONS, "bench-hash")

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += len(texts)
        out = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            out.append([(digest[i % 32] - 127.5) / 127.5 + 0.01 for i in range(DIMENSIONS)])
        return out


def conversation(store: SessionStore, sid: str, turns: int) -> None:
    store.create_session("bench", session_id=sid)
    for start in range(0, turns, 45):
        batch = []
        for i in range(start, min(turns, start + 45)):
            batch.append({"role": "user", "content": f"Question {i}: what should I pack for day {i} of the trip?"})
            batch.append({"role": "assistant", "content": f"For day {i}, a light jacket and walking shoes."})
        store.append_messages(sid, batch)


def a_turn(store: SessionStore, meter: Any, counting: Counting, sid: str) -> dict[str, Any]:
    """A turn of two messages appended to `sid`, then its indexing metered."""
    store.append_messages(
        sid, [{"role": "user", "content": "And for the last day?"}, {"role": "assistant", "content": "Rain gear."}]
    )
    calls = counting.calls
    turn, _ = timed(meter, lambda: store.index_messages(sid))
    return {
        "messages": 2,
        "requests": turn["calls"],
        "in all": turn["requests"],
        "embedding calls": counting.calls - calls,
    }


def measure(url: str, turns: int, long: int) -> dict[str, Any]:
    tables = our_tables(url, "ix", parameters={"MemoryEmbeddingDimensions": DIMENSIONS})
    session, meter = metered(url)
    counting = Counting()
    store = store_on(
        url, tables, session, memories_table=tables.memories, settings=Settings(embedder=counting.embedder)
    )
    conversation(store, "short", turns)
    messages = 2 * turns
    sample, _ = timed(meter, lambda: store.index_messages("short"))
    reader = local_client(endpoint_url=url)
    items = [i for i in reader.scan(TableName=tables.memories)["Items"] if "\x1fmessages" in i["sk"]["S"]]
    sizes = [item_size(i) for i in items]
    indexing = {
        "messages": messages,
        "requests": sample["calls"],
        "requests per message": round(sample["requests"] / messages, 2),
        "wcu per message": round(sum(write_units(0, s) for s in sizes) / messages, 2),
        "wcu of the run": round(sample["wcu"], 1),
        "bytes per message stored": round(sum(sizes) / len(sizes)),
        "embedding calls": counting.calls,
        "texts embedded": counting.texts,
    }
    indexing["a turn"] = a_turn(store, meter, counting, "short")
    print(json.dumps(indexing), flush=True)
    conversation(store, "long", long // 2)
    store.index_messages("long")
    while store.get_message_index_state("long").indexed_seq < long:
        store.index_messages("long")
    indexing["a turn at the long session's end"] = a_turn(store, meter, counting, "long")
    store.context("long", budget_tokens=2000)  # the emulator's warm-up (see above), not metered
    contexts = {}
    for sid, size in (("short", messages), ("long", long)):
        sample, context = timed(meter, functools.partial(store.context, sid, budget_tokens=2000))
        contexts[str(size)] = {"requests": sample["calls"], "total": sample["requests"]}
        contexts[str(size)]["recalled"] = len(context.recalled)
        print(size, json.dumps(contexts[str(size)]), flush=True)
    return {"indexing": indexing, "context": contexts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--long", type=int, default=5000, help="messages of the long session")
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    with moto_server_process(lean=True) as url:
        result = measure(url, args.turns, args.long)
    print(json.dumps(result, indent=2))
    if args.record:
        from datetime import UTC, datetime

        from bench.report import record

        record("message_index_costs", {**result, "date": str(datetime.now(UTC).date())})


if __name__ == "__main__":
    main()
