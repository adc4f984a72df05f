"""The conftest LangGraph's own store tests run under (tests/integrations/test_frameworks_own_tests.py puts it
in their scratch directory as conftest.py): it puts this store's LangGraph `MemoryStore` where their tests
build `InMemoryStore(index=..., ttl=...)`, on the backend named by AGENT_STORE_BACKEND:

- `reference`: LangGraph's own InMemoryStore, untouched (what their tests are written against);
- `memory`: `MemoryStore` over `SessionStore.memory()`;
- `dynamodb`: `MemoryStore` over DynamoDB on moto, fresh tables per store, the memories table's vector index
  made for the test's embedding dimensions (as a deployment with another model sets it: the template's
  `MemoryEmbeddingDimensions`).

Each store holds one owner's memories, as an agent's store does."""

from __future__ import annotations

from typing import Any

import langgraph.store.memory as langgraph_memory
from theirs_stores import BACKEND, new_store  # type: ignore[import-not-found]

OWNER = "langgraph-tests"

if BACKEND != "reference":
    from store.integrations.langgraph_store import MemoryStore

    class StoreUnderTest(MemoryStore):
        """`InMemoryStore`'s constructor over this store."""

        def __init__(self, *, index: Any = None, ttl: Any = None) -> None:
            dims = int(index["dims"]) if index else None
            super().__init__(new_store(dims=dims), owner=OWNER, index=index, ttl=ttl)

    langgraph_memory.InMemoryStore = StoreUnderTest  # type: ignore[misc,assignment]
