"""What the frameworks whose memory search returns only matches (ADK's `search_memory`, Strands'
`MemoryStore.search`) ask of the store: the memories that match a query, never merely the nearest of
unrelated ones."""

from __future__ import annotations

from store import SessionStore
from store.models import MemoryHit

# The least cosine similarity a memory needs to match by meaning. Measured with wordllama's 256-dimension model
# on six facts and a question about each (the framework tests' facts and more): the answers scored 0.20 to 0.63
# against their questions, the unrelated facts -0.17 to 0.09, a related one (a window seat, for a trip) 0.24;
# on the local stack, "what can't I eat?" against "I am allergic to peanuts" scored 0.144. wordllama's margin is
# thin: another embedder (Titan V2 deployed) may want another value, which the adapters take as `threshold=`.
THRESHOLD = 0.12


def matching(
    store: SessionStore, owner: str, namespace: tuple[str, ...], query: str, limit: int, threshold: float
) -> list[MemoryHit]:
    """The owner's memories under `namespace` that match `query`, best first: by meaning, those at least
    `threshold` similar, when the store has an embedder; else those holding the query's words."""
    if store.settings.embedder is None:
        return store.search_memories(owner, namespace, query=query, mode="keyword", limit=limit).items
    hits = store.search_memories(owner, namespace, query=query, mode="semantic", limit=limit).items
    return [h for h in hits if h.score is not None and h.score >= threshold]
