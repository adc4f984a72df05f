"""Retrieval quality of long-term memory: recall@5 of semantic, keyword and hybrid search on bench/memory_set.py,
through the public API on the memory backend and on DynamoDB.

    python -m bench.memory_recall

The method, beside its figures: bench/report_template.md, "Long-term memory: recall@5"."""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from typing import Any

from bench.memory_set import memories, questions
from bench.report import record
from store import SessionStore, Settings
from store.embeddings import WordLlamaEmbedder

MODES = ("semantic", "keyword", "hybrid")
NAMESPACE = ("people",)


def measure(store: SessionStore) -> dict[str, Any]:
    started = time.perf_counter()
    for memory in memories():
        store.put_memory("bench-user", NAMESPACE, memory.key, {"text": memory.text})
    put_seconds = time.perf_counter() - started
    out: dict[str, Any] = {"memories": len(memories()), "questions": len(questions()), "put_seconds": put_seconds}
    for mode in MODES:
        hits = 0
        for question in questions():
            found = store.search_memories("bench-user", NAMESPACE, query=question.text, mode=mode, limit=5).items
            hits += any(h.key == question.answer for h in found)
        out[f"recall@5 {mode}"] = hits / len(questions())
    return out


def on_dynamodb() -> dict[str, Any]:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    from moto import mock_aws

    from infra.local.aws import create_tables, local_client, per_item_transaction_backups

    per_item_transaction_backups()
    with mock_aws():
        client = local_client()
        tables = create_tables(client, prefix="recall")
        store = tables.store(client, settings=Settings(embedder=WordLlamaEmbedder()))
        return measure(store)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    results = {
        "date": datetime.now(UTC).date().isoformat(),
        "memory": measure(SessionStore.memory(Settings(embedder=WordLlamaEmbedder()))),
        "dynamodb": on_dynamodb(),
        "set": "bench/memory_set.py (written for this bench: 25 kinds of fact about 8 people; 4 asked each)",
        "embedder": "wordllama 0.4 (256 dimensions, in its wheel)",
    }
    record("memory_recall", results)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
