"""An optional step after a memory search: a reranking model reorders the page of hits by the query
(`Settings(reranker=...)`; off by default, never needed: the store's own ranking is docs/decisions.md,
"Hybrid retrieval").

- `BedrockReranker`: Amazon Bedrock's rerank models (Amazon Rerank 1.0, Cohere Rerank 3.5) through
  bedrock-agent-runtime's `Rerank`, with a boto3 client of the caller's or one made on first use.
- Any callable `(query, texts) -> one relevance per text` (higher is more relevant) is a reranker too.

A reranker that fails leaves the page as the store ranked it: the search still answers (a warning is logged,
naming the error's code, never the query or a memory)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from store.errors import InvalidInput

LOG = logging.getLogger("agent_store.rerank")
MAX_TEXT = 8192  # characters of a hit's text sent to the model (the store indexes no more)


class Reranker(Protocol):
    """What reorders a search's hits: the relevance of each text to the query, higher is more relevant."""

    def __call__(self, query: str, texts: list[str]) -> Sequence[float]: ...


class BedrockReranker:
    """Bedrock's `Rerank` with the model `model_arn` (for example
    arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0): one request per search's page."""

    def __init__(self, model_arn: str, client: Any = None) -> None:
        if not isinstance(model_arn, str) or not model_arn.startswith("arn:"):
            raise InvalidInput("model_arn must be the ARN of a Bedrock rerank model")
        self.model_arn = model_arn
        self._client = client

    def _runtime(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("bedrock-agent-runtime")
        return self._client

    def __call__(self, query: str, texts: list[str]) -> list[float]:
        answer = self._runtime().rerank(
            queries=[{"type": "TEXT", "textQuery": {"text": query}}],
            sources=[
                {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": t[:MAX_TEXT]}}}
                for t in texts
            ],
            rerankingConfiguration={
                "type": "BEDROCK_RERANKING_MODEL",
                "bedrockRerankingConfiguration": {
                    "numberOfResults": len(texts),
                    "modelConfiguration": {"modelArn": self.model_arn},
                },
            },
        )
        relevance = [0.0] * len(texts)
        for result in answer.get("results", []):
            at = result.get("index")
            if isinstance(at, int) and 0 <= at < len(texts):
                relevance[at] = float(result.get("relevanceScore", 0.0))
        return relevance


def reranked(reranker: Reranker, query: str, texts: list[str]) -> list[int] | None:
    """The order (indexes into `texts`) the reranker gives them, most relevant first, ties in their order; None
    when it failed or answered otherwise than one number per text (the caller keeps its own order)."""
    try:
        scores = list(reranker(query, texts))
    except Exception as exc:  # a model or a caller's function: the search still answers
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", "") if hasattr(exc, "response") else ""
        LOG.warning("memory rerank failed: %s %s; the store's ranking is kept", type(exc).__name__, code)
        return None
    if len(scores) != len(texts) or not all(isinstance(s, (int, float)) for s in scores):
        LOG.warning(
            "memory rerank returned %d scores for %d hits; the store's ranking is kept", len(scores), len(texts)
        )
        return None
    return sorted(range(len(texts)), key=lambda i: (-float(scores[i]), i))
