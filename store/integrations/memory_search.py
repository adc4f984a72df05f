"""What the frameworks' memory adapters share: the memories that match a query (ADK's `search_memory`, Strands'
`MemoryStore.search`: never merely the nearest of unrelated ones, in the order each framework's own store gives
them), how a memory's key is made of its content (`memory_key`), and how a batch of a framework's messages is
kept (`keep_messages`: distilled with the store's extraction model, else one memory per message)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Literal

from store import AsyncSessionStore, SessionStore
from store.core import memories as m
from store.embeddings import MATCH_THRESHOLD, match_threshold
from store.models import MemoryHit

THRESHOLD = MATCH_THRESHOLD  # the least similarity that matches when neither the call nor the embedder names one


def threshold_of(store: SessionStore | AsyncSessionStore, given: float | None) -> float:
    """The least similarity that matches: `given`, else the store's embedder's (`store.embeddings.
    match_threshold`, the rule extraction's consolidation follows too)."""
    if given is not None:
        return given
    return match_threshold(store.settings.embedder) or THRESHOLD


def memory_key(*parts: str) -> str:
    """A memory's key made of what it holds (its text; or its role and text; or where a batch came from): the
    same parts give the same key, so a write retried or repeated lands on the same memory (32 hex digits of
    their SHA-256, the parts joined by NUL)."""
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:32]


async def keep_messages(
    store: AsyncSessionStore,
    owner: str,
    namespace: tuple[str, ...],
    messages: list[dict[str, Any]],
    *,
    source: str,
    numbers: list[int] | None,
    strategies: Any,
    one_each: Callable[[], list[tuple[str, dict[str, Any]]]],
) -> list[str]:
    """A framework's batch of messages kept as memories under `namespace`: with the store's extraction model,
    distilled by `extract_from_messages` (`strategies`, the batch named `source`, numbered by `numbers`; a batch
    handed again is found done); without one, `one_each()`'s (key, value) pairs put one by one. The keys of the
    memories written or changed."""
    if store.settings.extraction_model is not None:
        if not messages:
            return []
        runs = await store.extract_from_messages(
            owner,
            messages,
            source=source,
            namespace=namespace,
            sequence_numbers=numbers,
            strategies=strategies,
        )
        return [change.key for run in runs for change in run.changes]
    kept = one_each()
    for key, value in kept:
        await store.put_memory(owner, namespace, key, value, index=["text"])
    return [key for key, _ in kept]


Ties = Literal["oldest", "newest"]


def has_words(query: str) -> bool:
    """Whether a query holds anything to match (a word, a number, a CJK character, other than the stop words
    keyword search leaves out): a query of blanks and punctuation matches nothing, as in ADK's and Strands'
    own stores."""
    return bool(m.words(query))


def share(query: str, value: dict[str, Any]) -> float:
    """The share of the query's distinct words (stemmed, as search matches them) that a memory's text holds:
    how ADK's and Strands' own stores score a match by words, so equal shares are ties that keep their order
    (the store's BM25 decided which memories match)."""
    wanted = set(m.words(query))
    held = set(m.words(m.indexed_text(value, None)))
    return len(wanted & held) / len(wanted) if wanted else 0.0


async def matching(
    store: AsyncSessionStore,
    owner: str,
    namespace: tuple[str, ...],
    query: str,
    limit: int,
    threshold: float | None,
    *,
    ties: Ties = "oldest",
) -> list[MemoryHit]:
    """At most `limit` of the owner's memories under `namespace` that match `query`, best first: by meaning,
    those at least `threshold` similar (`threshold_of`), when the store has an embedder; else those holding
    the query's words. Equal scores go oldest first (ADK's in-memory service: the order they were added in)
    or newest first (Strands' stores: the most recent wins), among the best 100 (one search's bound). `limit`
    is at most 100."""
    if not has_words(query):
        return []
    least = threshold_of(store, threshold)
    if store.settings.embedder is None:  # every match: ranked as the frameworks' own stores rank words
        found = await store.search_memories(owner, namespace, query=query, mode="keyword", limit=m.MAX_SEARCH_LIMIT)
        hits = [h.model_copy(update={"score": share(query, h.value)}) for h in found.items]
    else:  # similarities of unrelated vectors are never equal: the page asked for is enough
        found = await store.search_memories(owner, namespace, query=query, mode="semantic", limit=limit)
        hits = [h for h in found.items if h.score is not None and h.score >= least]
    sign = 1 if ties == "oldest" else -1
    ordered = sorted(hits, key=lambda h: (-(h.score or 0.0), sign * h.created_at.timestamp(), h.key))
    return ordered[:limit]
