"""The conftest ADK's own memory-service tests run under (tests/integrations/test_frameworks_own_tests.py
puts it in their scratch directory as conftest.py): their `InMemoryMemoryService()` becomes this store's
`StoreMemoryService` over a new store of the backend named by AGENT_STORE_BACKEND (`reference` leaves
theirs alone)."""

from __future__ import annotations

import google.adk.memory.in_memory_memory_service as module
from theirs_stores import BACKEND, new_store  # type: ignore[import-not-found]

if BACKEND != "reference":
    from store.integrations.adk_memory import StoreMemoryService

    class ServiceUnderTest(StoreMemoryService):
        """`InMemoryMemoryService()` over a new store."""

        def __init__(self) -> None:
            super().__init__(new_store())

    module.InMemoryMemoryService = ServiceUnderTest  # type: ignore[misc,assignment]
