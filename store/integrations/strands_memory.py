"""Strands' cross-session memory (`MemoryStore` under its `MemoryManager`) on the store's memories: what an
agent gets with `Agent(memory_manager=MemoryManager(stores=[StoreMemory(store, owner="user-42")]))`.

    from strands import Agent
    from strands.memory import MemoryManager
    from store.integrations.strands_memory import StoreMemory

    memory = StoreMemory(SessionStore.from_env(), owner="user-42")
    agent = Agent(memory_manager=MemoryManager(stores=[memory], add_tool_config=True))

A fact added (by the `add_memory` tool, by Strands' extraction, or `manager.add`) is one memory of the
owner's namespace (`("strands", name)` by default), keyed by its content's digest: Strands' writes are
at-least-once, and a duplicate lands on the same memory. `search` returns only memories that match the query
(Strands' semantics: no unrelated neighbours): by meaning above a similarity threshold when the store has an
embedder (`memory_search.matching`), by the query's words otherwise."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from strands.memory.types import MemoryEntry, MemoryStore, SearchOptions

from store import SessionStore
from store.integrations.memory_search import THRESHOLD, matching

DEFAULT_RESULTS = 5


class StoreMemory(MemoryStore):
    """One owner's memories as a Strands `MemoryStore` (writable, searchable)."""

    def __init__(
        self,
        store: SessionStore,
        *,
        owner: str,
        name: str = "agent-store",
        description: str | None = "What the user told the agent in earlier sessions",
        namespace: tuple[str, ...] | None = None,
        max_search_results: int = DEFAULT_RESULTS,
        extraction: Any = None,
        threshold: float = THRESHOLD,
    ) -> None:
        self.store = store
        self.owner = owner
        self.name = name
        self.description = description
        self.namespace = namespace or ("strands", name)
        self.max_search_results: int | None = max_search_results
        self.writable = True
        self.extraction = extraction
        self.threshold = threshold

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        limit = (options or {}).get("max_search_results") or self.max_search_results or DEFAULT_RESULTS
        page = await asyncio.to_thread(
            matching, self.store, self.owner, self.namespace, query, min(limit, 100), self.threshold
        )
        return [
            MemoryEntry(
                content=str(hit.value.get("text", "")),
                metadata={"key": hit.key, "score": hit.score, **(hit.value.get("metadata") or {})},
            )
            for hit in page
        ]

    async def add(self, content: str, metadata: dict[str, Any] | None = None) -> str:
        key = hashlib.sha256(content.encode("utf-8")).hexdigest()[:32]
        value: dict[str, Any] = {"text": content}
        if metadata:
            value["metadata"] = dict(metadata)
        await asyncio.to_thread(self.store.put_memory, self.owner, self.namespace, key, value, index=["text"])
        return key
