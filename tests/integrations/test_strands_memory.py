"""Strands' `MemoryStore` protocol on `StoreMemory`, on the memory backend and on DynamoDB at the store's
defaults: what Strands' own store tests check through their JSON file, checked here through the store (the
differences in test_frameworks_own_tests.py), and what their tests do not reach (`add_messages`, the
store's bounds, bad input)."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import MagicMock

import pytest
from strands.hooks.events import AfterInvocationEvent, MessageAddedEvent
from strands.hooks.registry import HookOrder
from strands.memory.extraction.triggers import InvocationTrigger
from strands.memory.extraction.types import ExtractionConfig, ExtractionResult
from strands.memory.memory_manager import MemoryManager
from strands.memory.types import AddMessagesContext

from store import InvalidInput, SessionStore
from store.integrations.strands_memory import StoreMemory

NAMESPACE = ("strands", "notes")


def notes(store: SessionStore, **config: Any) -> StoreMemory:
    return StoreMemory(store, owner="ada", name="notes", **config)


def stored(store: SessionStore) -> list[str]:
    """The texts of every memory of the store's namespace (by listing, not search)."""
    return sorted(h.value["text"] for h in store.search_memories("ada", NAMESPACE, limit=100).items)


def test_the_config_is_strands_own_and_checked_at_once(memories_store: SessionStore) -> None:
    memory = notes(memories_store, description="my notes", max_search_results=7)
    assert (memory.name, memory.description, memory.max_search_results) == ("notes", "my notes", 7)
    assert memory.writable is True and memory.extraction is None
    assert notes(memories_store, writable=False).writable is False
    assert notes(memories_store, max_search_results=500).max_search_results == 100  # one search's bound
    bad_configs: list[dict[str, Any]] = [
        {"name": "  "},
        {"max_search_results": 0},
        {"max_search_results": "3"},
        {"writable": "yes"},
    ]
    for bad in bad_configs:
        with pytest.raises(InvalidInput):
            StoreMemory(memories_store, owner="ada", **{"name": "notes", **bad})
    with pytest.raises(InvalidInput):
        StoreMemory(memories_store, owner="", name="notes")
    assert stored(memories_store) == []


def test_writes_are_refused_when_not_writable_or_empty_and_nothing_is_written(memories_store: SessionStore) -> None:
    async def scenario() -> None:
        read_only = notes(memories_store, writable=False)
        with pytest.raises(ValueError, match="not writable"):
            await read_only.add("a fact")
        with pytest.raises(ValueError, match="not writable"):
            await read_only.add_messages([{"role": "user", "content": [{"text": "hi"}]}])
        memory = notes(memories_store)
        for empty in ("", "   ", None):
            with pytest.raises(ValueError, match="content must not be empty"):
                await memory.add(empty)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            await memory.add("a fact", metadata=["not", "a", "dict"])  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="at least 1"):
            await memory.search("fact", {"max_search_results": 0})
        with pytest.raises(ValueError):
            await memory.add_messages([{"role": "user", "content": "hi"}, "not a message"])  # type: ignore[list-item]

    asyncio.run(scenario())
    assert stored(memories_store) == []


def test_a_duplicate_is_the_same_memory_and_search_returns_only_matches(memories_store: SessionStore) -> None:
    async def scenario() -> None:
        memory = notes(memories_store)
        first = await memory.add("user prefers dark mode", {"source": "user"})
        again = await memory.add("  user prefers dark mode ")
        assert again.id == first.id
        await memory.add("the café in 日本 is naïve")
        for i in range(6):
            await memory.add(f"note {i} about the deploy")
        assert [e.content for e in await memory.search("dark mode preferences")] == ["user prefers dark mode"]
        assert len(await memory.search("日本")) == 1 and len(await memory.search("café")) == 1
        assert await memory.search("   ...  ") == [] and await memory.search("weather in Paris") == []
        found = await memory.search("deploy")
        assert len(found) == 5  # the store's max_search_results, 5 by default
        assert [e.content for e in found] == [f"note {i} about the deploy" for i in (5, 4, 3, 2, 1)]  # newest first
        assert len(await memory.search("deploy", {"max_search_results": 2})) == 2
        assert found[0].metadata is not None and found[0].metadata["score"] > 0 and "key" in found[0].metadata

    asyncio.run(scenario())
    assert len(stored(memories_store)) == 8


def test_concurrent_adds_all_land_and_a_store_serves_separate_event_loops(memories_store: SessionStore) -> None:
    memory = notes(memories_store)

    async def batch(tag: str) -> None:
        await asyncio.gather(*(memory.add(f"{tag} fact number {i}") for i in range(10)))

    asyncio.run(batch("first"))  # a synchronous Strands Agent runs each invocation on a loop of its own
    asyncio.run(batch("second"))
    assert len(stored(memories_store)) == 20


def test_the_managers_add_and_client_side_extraction_write_through_add(memories_store: SessionStore) -> None:
    extractor = MagicMock()

    async def extract(messages: Any, context: Any = None) -> list[ExtractionResult]:
        return [ExtractionResult(content="user prefers dark mode")]

    extractor.extract.side_effect = extract

    async def scenario() -> None:
        manager = MemoryManager(stores=[notes(memories_store)], add_tool_config=True)
        await manager.add("user likes coffee")
        found = await manager.search("coffee")
        assert [(e.content, e.store_name) for e in found] == [("user likes coffee", "notes")]
        extracting = notes(
            memories_store, extraction=ExtractionConfig(trigger=InvocationTrigger(), extractor=extractor)
        )
        await fire(MemoryManager(stores=[extracting]), {"role": "user", "content": [{"text": "I like dark mode"}]})

    asyncio.run(scenario())
    extractor.extract.assert_called_once()
    assert stored(memories_store) == ["user likes coffee", "user prefers dark mode"]


class _Agent:
    """What `MemoryManager.init_agent` registers its hooks on."""

    def __init__(self) -> None:
        self.model = self.aux_model = None
        self.hooks: list[tuple[Any, Any]] = []
        self.add_middleware = MagicMock()

    def add_hook(self, callback: Any, event_type: Any = None, *, order: float = HookOrder.DEFAULT) -> None:
        self.hooks.append((callback, event_type))


async def fire(manager: MemoryManager, *messages: dict[str, Any]) -> None:
    """An invocation that adds `messages`, through the manager's hooks, then its extraction flushed."""
    agent = _Agent()
    await manager.init_agent(agent)  # type: ignore[arg-type]
    events: list[Any] = [MessageAddedEvent(agent=agent, message=m) for m in messages]  # type: ignore[arg-type]
    for event in [*events, AfterInvocationEvent(agent=agent)]:  # type: ignore[arg-type]
        for callback, event_type in list(agent.hooks):
            if event_type is type(event):
                result = callback(event)
                if asyncio.iscoroutine(result):
                    await result
    await manager.flush()


def test_server_side_extraction_hands_the_messages_to_add_messages_once(memories_store: SessionStore) -> None:
    """A store with `add_messages` and extraction without an extractor: Strands hands it the turn's messages;
    each message with text is a memory, and a retried batch, or a message said again, writes no more."""

    async def scenario() -> None:
        memory = notes(memories_store, extraction=ExtractionConfig(trigger=InvocationTrigger()))
        said = [
            {"role": "user", "content": [{"text": "I am allergic to peanuts"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "note", "input": {}}}]},
            {"role": "assistant", "content": [{"text": "Noted: no peanuts."}]},
        ]
        await fire(MemoryManager(stores=[memory]), *said)
        assert stored(memories_store) == ["I am allergic to peanuts", "Noted: no peanuts."]
        await fire(MemoryManager(stores=[memory]), {"role": "assistant", "content": [{"text": "Noted: no peanuts."}]})
        assert stored(memories_store) == ["I am allergic to peanuts", "Noted: no peanuts."]  # said again: the same
        retry = AddMessagesContext(sequence_numbers=[7, 8, 9])
        first = await memory.add_messages(said, retry)
        written = stored(memories_store)
        again = await memory.add_messages(said, retry)  # the same batch delivered again
        assert [r.id for r in again] == [r.id for r in first] and len(first) == 2  # the tool call holds no text
        assert stored(memories_store) == written
        hits = memories_store.search_memories("ada", NAMESPACE, query="peanuts", limit=10).items
        assert {h.value["role"] for h in hits} == {"user", "assistant"}
        assert {h.value["source"] for h in hits} == {"messages"}

    asyncio.run(scenario())
