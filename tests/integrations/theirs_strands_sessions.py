"""The conftest Strands' own session tests run under (tests/integrations/test_frameworks_own_tests.py puts it
in their scratch directory as conftest.py), on the backend named by AGENT_STORE_BACKEND (`reference` leaves
theirs alone):

- tests/strands/session/test_repository_session_manager.py builds its `RepositorySessionManager` over the
  `MockedSessionRepository` of their tests/fixtures: it becomes this store's `StrandsSessionRepository`;
- tests/strands/session/test_snapshot_session_manager.py keeps its snapshots in a `LocalFileStorage(dir)`:
  it becomes this store's `SessionStoreStorage` (Strands' unified `Storage`), one store per directory, so
  that a storage made again on the same directory reads what the first one wrote."""

from __future__ import annotations

from typing import Any

import strands.storage as storage
from theirs_stores import BACKEND, new_store  # type: ignore[import-not-found]

import tests.fixtures.mock_session_repository as fixtures  # type: ignore[import-not-found]

OWNER = "strands-tests"
_by_root: dict[str, Any] = {}

if BACKEND != "reference":
    from store.integrations.strands import StrandsSessionRepository
    from store.integrations.strands_storage import SessionStoreStorage

    class RepositoryUnderTest(StrandsSessionRepository):
        """`MockedSessionRepository()` over a new store."""

        def __init__(self) -> None:
            super().__init__(new_store(), owner=OWNER)

    class StorageUnderTest(SessionStoreStorage):
        """`LocalFileStorage(root)` over the store of that root."""

        def __init__(self, root: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(_by_root.setdefault(str(root), new_store()), owner=OWNER)

    fixtures.MockedSessionRepository = RepositoryUnderTest
    storage.LocalFileStorage = StorageUnderTest  # type: ignore[misc,assignment]
