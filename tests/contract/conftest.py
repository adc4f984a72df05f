"""The conformance suite's backends: every contract test runs on each of them with the same assertions, as
LangGraph's checkpoint conformance suite runs one set of tests over every saver.

- memory: `MemoryBackend` under `SessionStore`;
- async-memory: `AsyncSessionStore.memory()` (the memory backend behind the async front);
- dynamodb, async: the DynamoDB backend under the sync and async fronts (moto in-process, moto's server);
- http: `HttpBackend` through the API function itself (`infra.local.gateway.InProcessApi`: the local
  stack's API Gateway event and token check, no socket), one token per owner, on moto's tables;
- scoped: `ScopedBackend` over the memory backend, one per owner (what the CLI and the API see).

A backend declares what it carries out (`Backend.supports`); a test that needs an operation marks it
(`@pytest.mark.needs("pop_message")`) and is not generated for a backend that lacks it; a test of what
is built on a library store (the API's handlers over it) names the backends it runs on
(`@pytest.mark.backends(...)`). That the gaps are
refused at once, and listed in docs/architecture.md, is tests/contract/test_capabilities.py's."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from functions.api.context import MAX_BODY_BYTES
from infra.local import devtoken
from infra.local.aws import create_tables
from infra.local.gateway import InProcessApi
from store import AsyncSessionStore, SessionStore, Settings
from store.backend import EVERY_OPERATION, Backend
from store.backends.http import HttpBackend
from store.backends.scoped import ScopedBackend
from store.memory import MemoryBackend
from tests.conftest import FakeClock, Harness, Requests, _finish, _scan_all, make_async_harness, make_harness
from tests.leftovers import memory_leftovers, table_leftovers
from tests.tenants import Tenants

CONTRACT_BACKENDS = ["memory", "async-memory", "dynamodb", "async", "http", "scoped"]
SECRET = b"contract-suite-secret"
# what each backend declares it carries out (the class's own declaration, read before any is made)
DECLARED: dict[str, frozenset[str]] = {name: EVERY_OPERATION for name in CONTRACT_BACKENDS}
DECLARED["http"] = frozenset(HttpBackend.supports)
_http_tables = itertools.count()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out each (test, backend) pair whose test needs an operation the backend does not declare."""
    kept, dropped = [], []
    for item in items:
        marker, only = item.get_closest_marker("needs"), item.get_closest_marker("backends")
        spec = getattr(item, "callspec", None)
        name = spec.params.get("harness") if spec is not None else None
        if name in DECLARED and (
            (marker is not None and not set(marker.args) <= DECLARED[name])
            or (only is not None and name not in only.args)
        ):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("settings")
    return dict(marker.kwargs) if marker else {}


def _async_memory(request: pytest.FixtureRequest, clock: FakeClock) -> Harness:
    from tests.async_support import SyncOverAsync

    loop = request.getfixturevalue("event_loop_thread")
    cfg = Settings(clock=clock, **_settings(request))
    backend = MemoryBackend(cfg)
    backend.copies_in_background = False  # copies are driven by `harness.cascade()`, as on DynamoDB

    def twin() -> SessionStore:
        return SyncOverAsync(AsyncSessionStore(backend=backend, settings=cfg), loop)  # type: ignore[return-value]

    harness = Harness(twin(), clock, lambda: repr(memory_leftovers(backend)), None, twin, kind="async-memory")
    harness._held, harness.memory = (lambda: memory_leftovers(backend)), backend
    return harness


def _scoped(clock: FakeClock, settings: dict[str, Any]) -> Harness:
    cfg = Settings(clock=clock, **settings)
    backend = MemoryBackend(cfg)
    backend.copies_in_background = False  # copies are driven by `harness.cascade()`, as on DynamoDB
    owners: dict[str, str] = {}

    def twin() -> SessionStore:
        return SessionStore(
            backend=Tenants("scoped", lambda owner: ScopedBackend(backend, owner), owners), settings=cfg
        )

    def snapshot() -> Any:
        return backend.dump()

    harness = Harness(twin(), clock, snapshot, None, twin, kind="scoped")
    harness.ids_per_owner = True
    harness._held, harness.memory = (lambda: memory_leftovers(backend)), backend
    return harness


def _http(request: pytest.FixtureRequest, clock: FakeClock, settings: dict[str, Any]) -> Harness:
    """Each owner's `HttpBackend` (its own token) sends to the API function in this process, which runs on a
    store over fresh tables; the twin is another API container (another server store) and other clients."""
    from functions.runtime import use_store

    client = request.getfixturevalue("dynamodb_client")
    s3 = request.getfixturevalue("s3_client")
    inspector = request.getfixturevalue("inspector_client")
    inspector_s3 = request.getfixturevalue("inspector_s3")
    tables = create_tables(client, prefix=f"h{next(_http_tables)}", s3=s3)
    cfg = Settings(clock=clock, **settings)
    owners: dict[str, str] = {}

    def server_store() -> SessionStore:
        store: SessionStore = tables.store(client, s3, settings=cfg)
        return store

    def twin() -> SessionStore:
        server = server_store()
        transport = InProcessApi(SECRET, before=lambda: use_store(server))

        def backend_for(owner: str) -> Backend:
            return HttpBackend("http://api.local", devtoken.issue(SECRET, owner), transport=transport)

        return SessionStore(backend=Tenants("http", backend_for, owners), settings=cfg)

    harness = Harness(twin(), clock, lambda: None, None, twin, tables, inspector_s3, kind="http")

    def snapshot() -> Any:
        return (_scan_all(inspector, tables.sessions), _scan_all(inspector, tables.messages), harness.objects())

    def held() -> list[str]:
        sessions, messages, objects = snapshot()
        return table_leftovers({"sessions": sessions, "messages": messages}, objects)

    harness.snapshot = snapshot
    harness._held = held
    harness.ids_per_owner = True
    harness.request_bytes = MAX_BODY_BYTES
    harness.operator = server_store  # the stream function's store, on the tables
    harness.requests = Requests().attach(client, s3)  # the AWS requests the API function makes
    return harness


@pytest.fixture(params=CONTRACT_BACKENDS)
def harness(request: pytest.FixtureRequest, clock: FakeClock) -> Iterator[Harness]:
    settings = _settings(request)
    if request.param == "memory":
        h = make_harness("memory", clock, **settings)
    elif request.param == "async-memory":
        h = _async_memory(request, clock)
    elif request.param == "async":
        h = make_async_harness(request, clock, **settings)
    elif request.param == "dynamodb":
        fixtures = ("dynamodb_client", "inspector_client", "s3_client", "inspector_s3")
        client, inspector, s3, inspector_s3 = (request.getfixturevalue(name) for name in fixtures)
        h = make_harness("dynamodb", clock, client, inspector, s3, inspector_s3, **settings)
    elif request.param == "http":
        h = _http(request, clock, settings)
    else:
        h = _scoped(clock, settings)
    try:
        yield h
    finally:
        if request.param == "http":
            from functions.runtime import use_store

            use_store(None)
    _finish(h)
