"""LangGraph's long-term memory on ours (`store.integrations.langgraph_store.MemoryStore`): a compiled graph
that stores a fact in one thread and recalls it in another, by meaning, with wordllama; and LangGraph's
`InMemoryStore` as the reference for the `BaseStore` semantics a graph relies on (the same operations on
both, the same answers)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, IndexConfig
from langgraph.store.memory import InMemoryStore

from store import SessionStore
from store.embeddings import WordLlamaEmbedder
from store.integrations.langgraph_store import MemoryStore


class Turn(TypedDict, total=False):
    text: str
    answer: str


def graph(memories: BaseStore) -> Any:
    """A small agent: "remember: ..." stores a fact for the user; anything else is answered with the fact
    that means the closest."""

    def respond(state: Turn, *, store: BaseStore) -> Turn:
        text = state["text"]
        if text.startswith("remember:"):
            fact = text.removeprefix("remember:").strip()
            store.put(("facts",), f"fact-{abs(hash(fact))}", {"text": fact})
            return {"answer": "noted"}
        hits = store.search(("facts",), query=text, limit=1)
        return {"answer": hits[0].value["text"] if hits else "I don't know"}

    builder = StateGraph(Turn)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=InMemorySaver(), store=memories)


def test_a_graph_stores_a_fact_in_one_thread_and_recalls_it_in_another(remembering_store: SessionStore) -> None:
    agent = graph(MemoryStore(remembering_store, owner="user-42"))
    for fact in (
        "I prefer a window seat on long flights",
        "I am vegetarian and allergic to mushrooms",
        "My daughter's name is Ana",
    ):
        agent.invoke({"text": f"remember: {fact}"}, {"configurable": {"thread_id": "monday"}})
    answer = agent.invoke({"text": "where do I like to sit on a plane?"}, {"configurable": {"thread_id": "friday"}})
    assert answer["answer"] == "I prefer a window seat on long flights"
    food = agent.invoke({"text": "what can't I eat?"}, {"configurable": {"thread_id": "saturday"}})
    assert "mushrooms" in food["answer"]
    # another user's graph on the same tables finds nothing of user-42's
    other = graph(MemoryStore(remembering_store, owner="user-7"))
    assert other.invoke({"text": "where do I sit?"}, {"configurable": {"thread_id": "x"}})["answer"] == "I don't know"
    # what the graph wrote is the store's, seen by the store's own search
    assert (
        remembering_store.search_memories("user-42", ("facts",), query="plane seat")
        .items[0]
        .value["text"]
        .startswith("I prefer")
    )


def scenario(memories: BaseStore) -> list[Any]:
    """The same operations on any BaseStore; what each answered (timestamps and scores left out)."""
    out: list[Any] = []
    docs = {
        ("users", "u1"): {"a": {"n": 1, "tag": "x", "nested": {"k": "v"}}, "b": {"n": 5, "tag": "y"}},
        ("users", "u2"): {"c": {"n": 3, "tag": "x"}},
        ("docs",): {"d": {"n": 10, "tag": "z", "list": [1, 2]}},
        ("docs", "deep", "er"): {"e": {"n": 7, "tag": "x"}},
    }
    for ns, items in docs.items():
        for key, value in items.items():
            memories.put(ns, key, value)
    got = memories.get(("users", "u1"), "a")
    out.append(None if got is None else (got.namespace, got.key, got.value))
    out.append(memories.get(("users", "u1"), "nope"))
    for kwargs in (
        {},
        {"filter": {"tag": "x"}},
        {"filter": {"n": {"$gt": 2}}},
        {"filter": {"n": {"$gte": 3, "$lt": 7}}},
        {"filter": {"tag": {"$ne": "x"}}},
        {"filter": {"nested": {"k": "v"}}},
        {"filter": {"list": [1, 2]}},
    ):
        found = memories.search(("users",), **kwargs) + memories.search(("docs",), **kwargs)
        out.append(sorted((h.namespace, h.key) for h in found))
    everything = memories.search((), limit=100)
    out.append(sorted((h.namespace, h.key) for h in everything))
    out.append(len(memories.search((), limit=2, offset=1)))
    out.append(sorted(memories.list_namespaces()))
    out.append(sorted(memories.list_namespaces(prefix=("users",))))
    out.append(sorted(memories.list_namespaces(suffix=("er",))))
    out.append(sorted(memories.list_namespaces(max_depth=1)))
    out.append(sorted(memories.list_namespaces(prefix=("*", "u1"))))
    memories.delete(("users", "u1"), "a")
    out.append(memories.get(("users", "u1"), "a"))
    memories.put(("users", "u1"), "b", {"n": 6, "tag": "y"})
    got = memories.get(("users", "u1"), "b")
    out.append(None if got is None else got.value)
    return out


def test_it_answers_as_langgraphs_own_in_memory_store(remembering_store: SessionStore) -> None:
    mine = MemoryStore(remembering_store, owner="alice")
    ours = scenario(mine)
    theirs = scenario(InMemoryStore())
    assert ours == theirs
    # one difference, on purpose: a namespace whose last item is deleted is no longer listed (as LangGraph's
    # Postgres store lists namespaces from its items); InMemoryStore keeps the emptied namespace's dict
    mine.delete(("users", "u2"), "c")
    assert ("users", "u2") not in mine.list_namespaces()


def test_the_async_methods_and_a_per_view_embedder(remembering_store: SessionStore) -> None:
    """`aput`/`asearch` through `abatch`; an `IndexConfig` embedder (LangGraph's, here a function) replaces
    the store's for this view only."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [WordLlamaEmbedder()([t])[0] for t in texts]

    memories = MemoryStore(remembering_store, owner="bob", index=IndexConfig(dims=256, embed=embed, fields=["text"]))

    async def run() -> list[Any]:
        await memories.aput(("notes",), "n1", {"text": "the boat leaves at noon", "other": "zzz"})
        await memories.aput(("notes",), "n2", {"text": "bring sunscreen"}, index=False)
        return await memories.asearch(("notes",), query="what time is departure?")

    hits = asyncio.run(run())
    assert [h.key for h in hits] == ["n1", "n2"] and hits[0].score is not None and hits[1].score is None
