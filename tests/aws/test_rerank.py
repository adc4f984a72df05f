"""The optional rerank step after a memory search (store/rerank.py): Bedrock's `Rerank` on recorded answers in
the API's shape (botocore's Stubber), a caller's function, and a failing model that leaves the store's order."""

from __future__ import annotations

import logging
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from store import SessionStore, Settings
from store.errors import InvalidInput
from store.rerank import BedrockReranker

ARN = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"
FACTS = {"seat": "I prefer a window seat", "food": "I am vegetarian", "trip": "The Lisbon trip is in May"}


def _store(reranker: Any) -> SessionStore:
    store = SessionStore.memory(Settings(reranker=reranker))
    for key, text in FACTS.items():
        store.put_memory("alice", ("facts",), key, {"text": text})
    return store


def test_bedrock_rerank_reorders_the_page_by_its_answer() -> None:
    client = boto3.client("bedrock-agent-runtime", region_name="us-west-2")
    stub = Stubber(client)
    plain = SessionStore.memory()
    for key, text in FACTS.items():
        plain.put_memory("alice", ("facts",), key, {"text": text})
    before = [h.key for h in plain.search_memories("alice", query="I prefer the trip in May", mode="keyword").items]
    assert len(before) >= 2
    texts = [FACTS[k] for k in before]
    expected = {
        "queries": [{"type": "TEXT", "textQuery": {"text": "I prefer the trip in May"}}],
        "sources": [
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t}}} for t in texts
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {"numberOfResults": len(texts), "modelConfiguration": {"modelArn": ARN}},
        },
    }
    # Bedrock answers the most relevant first, each with the index of its source
    answer = {"results": [{"index": i, "relevanceScore": 0.1 * (i + 1)} for i in reversed(range(len(texts)))]}
    stub.add_response("rerank", answer, expected)
    with stub:
        store = _store(BedrockReranker(ARN, client=client))
        found = store.search_memories("alice", query="I prefer the trip in May", mode="keyword")
    stub.assert_no_pending_responses()
    assert [h.key for h in found.items] == list(reversed(before))


def test_a_failing_reranker_leaves_the_stores_order_and_logs_no_content(caplog: pytest.LogCaptureFixture) -> None:
    client = boto3.client("bedrock-agent-runtime", region_name="us-west-2")
    stub = Stubber(client)
    stub.add_client_error("rerank", service_error_code="ThrottlingException", http_status_code=429)
    plain = [h.key for h in _store(None).search_memories("alice", query="trip seat", mode="keyword").items]
    with stub, caplog.at_level(logging.WARNING, logger="agent_store.rerank"):
        found = _store(BedrockReranker(ARN, client=client)).search_memories("alice", query="trip seat", mode="keyword")
    assert [h.key for h in found.items] == plain
    assert "ThrottlingException" in caplog.text and "trip" not in caplog.text and "Lisbon" not in caplog.text


def test_a_function_reranks_and_a_wrong_answer_is_ignored() -> None:
    def by_length(query: str, texts: list[str]) -> list[float]:
        return [float(len(t)) for t in texts]

    found = _store(by_length).search_memories("alice", query="trip seat vegetarian", mode="keyword").items
    assert [FACTS[h.key] for h in found] == sorted((FACTS[h.key] for h in found), key=len, reverse=True)
    plain = [h.key for h in _store(None).search_memories("alice", query="trip seat", mode="keyword").items]
    wrong = _store(lambda q, t: [1.0])  # one score for several hits
    assert [h.key for h in wrong.search_memories("alice", query="trip seat", mode="keyword").items] == plain
    with pytest.raises(InvalidInput):
        BedrockReranker("amazon.rerank-v1:0")
