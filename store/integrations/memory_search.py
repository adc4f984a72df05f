"""What the frameworks whose memory search returns only matches (ADK's `search_memory`, Strands'
`MemoryStore.search`) ask of the store: the memories that match a query, never merely the nearest of
unrelated ones, in the order each framework's own store gives them."""

from __future__ import annotations

from typing import Any, Literal

from store import SessionStore
from store.core import memories as m
from store.models import MemoryHit

# The least cosine similarity a memory needs to match by meaning. Measured with wordllama's 256-dimension model
# on six facts and a question about each (the framework tests' facts and more): the answers scored 0.20 to 0.63
# against their questions, the unrelated facts -0.17 to 0.09, a related one (a window seat, for a trip) 0.24;
# on the local stack, "what can't I eat?" against "I am allergic to peanuts" scored 0.144. wordllama's margin is
# thin: another embedder (Titan V2 deployed) may want another value, which the adapters take as `threshold=`,
# or the embedder names as its `match_threshold` (multilingual-e5-small's similarities lie closer together:
# store.embeddings.E5SmallEmbedder).
THRESHOLD = 0.12


def threshold_of(store: SessionStore, given: float | None) -> float:
    """The least similarity that matches: `given`, else the store's embedder's `match_threshold`, else
    THRESHOLD."""
    if given is not None:
        return given
    named = getattr(store.settings.embedder, "match_threshold", None)
    return float(named) if isinstance(named, (int, float)) else THRESHOLD


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


def matching(
    store: SessionStore,
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
        found = store.search_memories(owner, namespace, query=query, mode="keyword", limit=m.MAX_SEARCH_LIMIT)
        hits = [h.model_copy(update={"score": share(query, h.value)}) for h in found.items]
    else:  # similarities of unrelated vectors are never equal: the page asked for is enough
        found = store.search_memories(owner, namespace, query=query, mode="semantic", limit=limit)
        hits = [h for h in found.items if h.score is not None and h.score >= least]
    sign = 1 if ties == "oldest" else -1
    ordered = sorted(hits, key=lambda h: (-(h.score or 0.0), sign * h.created_at.timestamp(), h.key))
    return ordered[:limit]
