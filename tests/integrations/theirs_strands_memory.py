"""The conftest Strands' own memory-store tests run under (tests/integrations/test_frameworks_own_tests.py
puts it in their scratch directory as conftest.py): their `TestMemoryStore(**config)` becomes this store's
`StoreMemory` on the backend named by AGENT_STORE_BACKEND (`reference` leaves theirs alone).

Their config maps onto ours: `name`, `description`, `max_search_results`, `writable` and `extraction` are
`StoreMemory`'s own (Strands' `MemoryStoreConfig`); `path` (their JSON file) names which store a memory lives
in, so that a store made again with the same path (their "restart") reads what the first one wrote, and
`persist=False` is a store of its own each time."""

from __future__ import annotations

from typing import Any

import strands.vended_memory_stores as vended
import strands.vended_memory_stores.test_memory_store as package
from theirs_stores import BACKEND, new_store  # type: ignore[import-not-found]

OWNER = "strands-tests"
_by_path: dict[str, Any] = {}

if BACKEND != "reference":
    from store.integrations.strands_memory import StoreMemory

    class StoreUnderTest(StoreMemory):
        """`TestMemoryStore`'s constructor over this store."""

        __test__ = False

        def __init__(self, **config: Any) -> None:
            persist = config.pop("persist", True)
            where = config.pop("path", None) or f"~/.strands/memory/{config.get('name')}"
            store = _by_path.setdefault(where, new_store()) if persist else new_store()
            super().__init__(store, owner=OWNER, **config)

    package.TestMemoryStore = StoreUnderTest  # type: ignore[misc,assignment]
    vended.TestMemoryStore = StoreUnderTest  # type: ignore[misc,assignment]
