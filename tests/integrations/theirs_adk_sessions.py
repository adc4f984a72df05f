"""The backends ADK's own session-service contract tests run against: this file stands in for their
tests/unittests/sessions/_conformance.py (tests/integrations/test_frameworks_own_tests.py puts it there),
whose `session_service` fixture yields each registered backend in turn. Registered here: ADK's own
`InMemorySessionService` and `DatabaseSessionService` (SQLite in memory), as the references, and this store's
`StoreSessionService` at its defaults on the memory backend and on DynamoDB."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from theirs_stores import new_store  # type: ignore[import-not-found]


@dataclasses.dataclass(frozen=True)
class _Backend:
    """A session service held to their contract (`divergences`: test name -> why it fails there)."""

    name: str
    divergences: Mapping[str, str] = dataclasses.field(default_factory=dict)


BACKENDS = [_Backend("in_memory"), _Backend("database"), _Backend("memory"), _Backend("dynamodb")]


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
async def session_service(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """Each registered backend in turn."""
    name = request.param.name
    if name == "in_memory":
        yield InMemorySessionService()
    elif name == "database":
        service = DatabaseSessionService("sqlite+aiosqlite:///:memory:")
        yield service
        await service.close()
    else:
        from store.integrations.adk import StoreSessionService

        yield StoreSessionService(new_store(name))
