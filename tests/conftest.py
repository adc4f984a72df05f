"""Fixtures: every contract test runs once per backend (memory, DynamoDB on moto) with the same assertions."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from moto import mock_aws

from infra.local.aws import (
    REGION,
    LocalTables,
    create_tables,
    local_client,
    moto_server,
    moto_server_process,
    per_item_transaction_backups,
    quicker_moto,
)
from store import AsyncSessionStore, SessionStore, Settings
from store.memory import MemoryBackend
from tests.leftovers import memory_leftovers, of_kind, table_leftovers

os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
for _name, _value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
    os.environ.setdefault(_name, _value)

BACKENDS = ["memory", "dynamodb", "async"]
quicker_moto()  # the same answers from moto, without work it repeats on every request
# moto backs up every table of its backend (all the run's tables, with their streams) before each transaction:
# back up the items a transaction names instead (the same outcome; the local stack does the same)
per_item_transaction_backups()
_table_prefixes = itertools.count()


class FakeClock:
    """A clock tests can move. Each reading advances it by 1 ms, so successive writes are ordered."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Requests:
    """Counts the AWS operations the clients it is attached to make (by API name)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._clients: list[tuple[Any, str]] = []

    def __call__(self, model: Any, **_: Any) -> None:
        self.names.append(model.name)

    def attach(self, *clients: Any) -> Requests:
        """Count every call of these clients (sync or async, any service; None is skipped)."""
        for client in clients:
            if client is not None:
                event = f"before-call.{client.meta.service_model.service_name}.*"
                client.meta.events.register(event, self)
                self._clients.append((client, event))
        return self

    def detach(self) -> None:
        """Stop counting (the clients are shared by the whole run)."""
        for client, event in self._clients:
            client.meta.events.unregister(event, self)
        self._clients.clear()

    def clear(self) -> None:
        self.names.clear()

    def count(self, name: str | None = None) -> int:
        return len(self.names) if name is None else self.names.count(name)


class Harness:
    """A store under test plus what a test needs to look behind it."""

    def __init__(
        self,
        store: SessionStore,
        clock: FakeClock,
        snapshot: Callable[[], Any],
        requests: Requests | None,
        twin: Callable[[], SessionStore],
        tables: LocalTables | None = None,
        s3: Any = None,
        kind: str = "",
        held: Callable[[], list[str]] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.snapshot = snapshot
        self.requests = requests
        self.twin = twin  # another store object over the same data (another process, in effect)
        self.tables = tables  # the DynamoDB tables and bucket (None for the memory backends)
        self.s3 = s3  # an S3 client for looking into the bucket (None for the memory backends)
        self.kind = kind
        self._held = held
        self.memory: MemoryBackend | None = None  # the memory backend behind the store, if it is one
        self.operator: Callable[[], SessionStore] = lambda: self.store  # what the stack's own functions run on
        self.request_bytes: int | None = None  # the most one request to the store carries (the HTTP API's)
        self.ids_per_owner = False  # each owner names sessions in a space of its own (the API, ScopedBackend)
        self.stream_clients: tuple[Any, Any] | None = None  # (dynamodb, dynamodbstreams) where the tables are
        self.memories: Callable[[], Any] = lambda: self.memory.memory_inventory() if self.memory else None

    def leftovers(self, kind: str | None = None) -> list[str]:
        """Everything the store holds (tests/leftovers.py names it alike on every backend), of `kind` only
        when given: what deleting everything must bring to []."""
        if self._held is not None:
            found = self._held()
        else:
            assert self.tables is not None, "a harness says what it holds"
            items = self.snapshot()
            found = table_leftovers({"sessions": items[0], "messages": items[1]}, self.objects())
        return found if kind is None else of_kind(found, kind)

    def cascade(self, jobs: tuple[str, ...] | None = None) -> None:
        """What the stack's stream functions do with the tables' stream records so far (run by the operator's
        store, the stream function's). The memory backends have no stream: every delete
        finishes before it returns, and `reclaim` takes a step of each copy going on."""
        if self.tables is None:
            self.operator().reclaim([], jobs=jobs)
        else:
            from infra.deploy.template import stream_mappings
            from tests.streams import stream_records

            dynamodb, streams = self.stream_clients or (local_client("dynamodb"), None)
            records = stream_records(dynamodb, self.tables.sessions, streams)
            chosen = [r for r in records if r["eventName"] in ("REMOVE", "MODIFY")]
            if self.tables.memories is not None:  # its stream's forget markers, as the template's mapping selects
                wanted = [m for m in stream_mappings() if m.table == "MemoriesTable"]
                marked = stream_records(dynamodb, self.tables.memories, streams)
                chosen += [r for r in marked if any(m.wants(r) for m in wanted)]
            self.operator().reclaim(chosen, jobs=jobs)

    def supports(self, operation: str) -> bool:
        return bool(self.store.supports(operation))

    def objects(self, prefix: str = "") -> list[str]:
        """Keys of every object in the bucket under `prefix` (empty for the memory backend)."""
        if self.s3 is None or self.tables is None:
            return []
        found: list[str] = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.tables.bucket, Prefix=prefix):
            found.extend(o["Key"] for o in page.get("Contents", []))
        return sorted(found)


@pytest.fixture(scope="session")
def aws() -> Iterator[None]:
    """moto's in-process AWS for the whole run (tables are created per test under fresh names)."""
    with mock_aws():
        yield


@pytest.fixture(scope="session")
def dynamodb_client(aws: None) -> Any:
    client = local_client()
    return client


@pytest.fixture(scope="session")
def s3_client(aws: None) -> Any:
    from store.session_store import s3_config

    return local_client("s3", config=s3_config())


@pytest.fixture(scope="session")
def inspector_s3(aws: None) -> Any:
    """An S3 client for looking into the bucket from the test side (its requests are not counted)."""
    return local_client("s3")


@pytest.fixture(scope="session")
def inspector_client(aws: None) -> Any:
    """A second client for looking at tables from the test side (its requests are not counted)."""
    return local_client()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _scan_all(client: Any, table: str) -> list[dict[str, Any]]:
    """Every item of a table (test-side inspection only; the store itself never scans)."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return sorted(items, key=repr)
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def make_harness(
    kind: str,
    clock: FakeClock,
    client: Any = None,
    inspector: Any = None,
    s3: Any = None,
    inspector_s3: Any = None,
    **settings: Any,
) -> Harness:
    cfg = Settings(clock=clock, **settings)
    if kind == "memory":
        backend = MemoryBackend(cfg)
        backend.copies_in_background = False  # copies are driven by `harness.cascade()`, as on DynamoDB
        store = SessionStore(backend=backend, settings=cfg)

        def memory_snapshot() -> Any:
            return backend.dump()

        def other() -> SessionStore:
            return SessionStore(backend=backend, settings=cfg)

        harness = Harness(
            store, clock, memory_snapshot, None, other, kind="memory", held=lambda: memory_leftovers(backend)
        )
        harness.memory = backend
        return harness
    tables = create_tables(client, prefix=f"t{next(_table_prefixes)}", s3=s3)

    def twin() -> SessionStore:
        store: SessionStore = tables.store(client, s3, settings=cfg)
        return store

    store = twin()
    requests = Requests().attach(client, s3)
    harness = Harness(store, clock, lambda: None, requests, twin, tables, inspector_s3 or s3, kind=kind)

    def snapshot() -> Any:
        return (_scan_all(inspector, tables.sessions), _scan_all(inspector, tables.messages), harness.objects())

    harness.snapshot = snapshot
    harness.memories = lambda: _scan_all(inspector, tables.memories) if tables.memories else None
    return harness


@pytest.fixture(scope="session")
def event_loop_thread() -> Iterator[Any]:
    from tests.async_support import LoopThread

    loop = LoopThread()
    yield loop
    loop.stop()


@pytest.fixture(scope="session")
def server_inspectors(moto_endpoint: str) -> tuple[Any, Any]:
    """Sync DynamoDB and S3 clients on moto's server, for creating tables and looking into them."""
    from store.session_store import s3_config

    return local_client(endpoint_url=moto_endpoint), local_client(
        "s3", endpoint_url=moto_endpoint, config=s3_config(path_style=True)
    )


@pytest.fixture(scope="session")
def async_clients(moto_endpoint: str, event_loop_thread: Any) -> Iterator[tuple[Any, Any]]:
    """aiobotocore clients on moto's server, shared by every async store of the run (made once)."""
    import contextlib

    from store.async_session_store import default_async_session
    from store.session_store import retry_config, s3_config

    stack = contextlib.AsyncExitStack()

    async def make() -> tuple[Any, Any]:
        session = default_async_session()
        where = {"endpoint_url": moto_endpoint, "region_name": REGION}
        dynamodb = await stack.enter_async_context(session.create_client("dynamodb", config=retry_config(), **where))
        s3 = await stack.enter_async_context(session.create_client("s3", config=s3_config(path_style=True), **where))
        return dynamodb, s3

    clients = event_loop_thread.run(make())
    yield clients
    event_loop_thread.run(stack.aclose())


def make_async_harness(request: pytest.FixtureRequest, clock: FakeClock, **settings: Any) -> Harness:
    from store import AsyncSessionStore
    from tests.async_support import SyncOverAsync

    loop = request.getfixturevalue("event_loop_thread")
    dynamodb, s3 = request.getfixturevalue("async_clients")
    inspect_dynamodb, inspect_s3 = request.getfixturevalue("server_inspectors")
    tables = create_tables(inspect_dynamodb, prefix=f"a{next(_table_prefixes)}", s3=inspect_s3)
    cfg = Settings(clock=clock, **settings)

    def twin() -> SessionStore:
        made = tables.store(dynamodb, s3, settings=cfg, front=AsyncSessionStore)
        return SyncOverAsync(made, loop)  # type: ignore[return-value]

    requests = Requests().attach(dynamodb, s3)
    harness = Harness(twin(), clock, lambda: None, requests, twin, tables, inspect_s3, kind="async")
    streams = local_client("dynamodbstreams", endpoint_url=request.getfixturevalue("moto_endpoint"))
    harness.stream_clients = (inspect_dynamodb, streams)

    def snapshot() -> Any:
        return (
            _scan_all(inspect_dynamodb, tables.sessions),
            _scan_all(inspect_dynamodb, tables.messages),
            harness.objects(),
        )

    harness.snapshot = snapshot
    harness.memories = lambda: _scan_all(inspect_dynamodb, tables.memories) if tables.memories else None
    return harness


@pytest.fixture(params=BACKENDS)
def harness(request: pytest.FixtureRequest, clock: FakeClock) -> Iterator[Harness]:
    if request.param == "async":
        marker = request.node.get_closest_marker("settings")
        h = make_async_harness(request, clock, **(marker.kwargs if marker else {}))
        yield h
        _finish(h)
        return
    client = inspector = s3 = None
    if request.param == "dynamodb":
        client = request.getfixturevalue("dynamodb_client")
        inspector = request.getfixturevalue("inspector_client")
        s3 = request.getfixturevalue("s3_client")
    marker = request.node.get_closest_marker("settings")
    inspector_s3 = request.getfixturevalue("inspector_s3") if s3 is not None else None
    h = make_harness(request.param, clock, client, inspector, s3, inspector_s3, **(marker.kwargs if marker else {}))
    yield h
    _finish(h)


def _finish(h: Harness) -> None:
    """After a contract test: stop counting requests, and check the store never scanned."""
    if h.requests is not None:
        h.requests.detach()
        assert h.requests.count("Scan") == 0, "the store must never scan"


@pytest.fixture
def dyn(
    dynamodb_client: Any,
    inspector_client: Any,
    s3_client: Any,
    inspector_s3: Any,
    clock: FakeClock,
    request: pytest.FixtureRequest,
) -> Iterator[Harness]:
    """The DynamoDB + S3 harness alone, for tests of what only it has (requests, keys, the bucket)."""
    marker = request.node.get_closest_marker("settings")
    settings = marker.kwargs if marker else {}
    h = make_harness("dynamodb", clock, dynamodb_client, inspector_client, s3_client, inspector_s3, **settings)
    yield h
    assert h.requests is not None
    h.requests.detach()


@pytest.fixture
def store(harness: Harness) -> SessionStore:
    return harness.store


@pytest.fixture
def session_id(store: SessionStore) -> str:
    return store.create_session("alice", title="Test session").id


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's server on 127.0.0.1, for tests whose requests must really interleave (stopped at the end)."""
    with moto_server() as url:
        yield url


@pytest.fixture(scope="session")
def contended_endpoint() -> Iterator[str]:
    """moto's server in a process of its own (its CPU not the writers'), with per-item transaction backups:
    for many writers on one session, whose transcripts grow to thousands of messages."""
    with moto_server_process() as url:
        yield url


for _name, _value in (
    ("POWERTOOLS_TRACE_DISABLED", "true"),
    ("POWERTOOLS_METRICS_DISABLED", "true"),
    ("POWERTOOLS_LOG_LEVEL", "ERROR"),
    ("POWERTOOLS_DEV", "false"),
):
    os.environ.setdefault(_name, _value)


_backend_tables = itertools.count()


@dataclass
class Backend:
    """Stores of one kind over fresh tables, and how to run a coroutine where they can serve it."""

    name: str
    make: Callable[[], Any]  # a new store over fresh tables
    twin: Callable[[Any], Any]  # another store object over the same tables (another process, in effect)
    run: Callable[[Any], Any]
    loop: Any = None  # the loop an AsyncSessionStore's clients belong to

    @property
    def runner(self) -> Any:
        """What runs an AsyncSessionStore's coroutines for a sync caller (None for a sync store)."""
        return self.loop.run if self.loop is not None else None

    def call(self, store: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        """`store.method(...)` from the test's own (sync) code, awaited on the right loop when needed."""
        result = getattr(store, method)(*args, **kwargs)
        return self.loop.run(result) if self.loop is not None else result


@pytest.fixture(params=["memory", "dynamodb", "async"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """moto's server for DynamoDB (LangGraph calls a saver from several threads or tasks at once, and
    in-process moto does not isolate concurrent requests), fresh tables for each store made (moto copies
    every table a transaction touches, so small tables keep the suite fast)."""
    if request.param == "memory":
        return Backend("memory", SessionStore.memory, lambda store: store, asyncio.run)
    inspect_dynamodb, inspect_s3 = request.getfixturevalue("server_inspectors")
    if request.param == "dynamodb":

        def sync_store(tables: Any = None) -> SessionStore:
            tables = tables or create_tables(inspect_dynamodb, prefix=f"lg{next(_backend_tables)}", s3=inspect_s3)
            store = SessionStore(
                tables.sessions, tables.messages, bucket=tables.bucket, client=inspect_dynamodb, s3_client=inspect_s3
            )
            store.tables = tables  # type: ignore[attr-defined]
            return store

        return Backend("dynamodb", sync_store, lambda store: sync_store(store.tables), asyncio.run)
    loop = request.getfixturevalue("event_loop_thread")
    dynamodb, s3 = request.getfixturevalue("async_clients")

    def async_store(tables: Any = None) -> AsyncSessionStore:
        tables = tables or create_tables(inspect_dynamodb, prefix=f"alg{next(_backend_tables)}", s3=inspect_s3)
        store = AsyncSessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
        store.tables = tables  # type: ignore[attr-defined]
        return store

    return Backend("async", async_store, lambda store: async_store(store.tables), loop.run, loop)


_memory_tables = itertools.count()


@pytest.fixture(params=["memory", "dynamodb"])
def memories_store(request: pytest.FixtureRequest) -> SessionStore:
    """A library store at its defaults (no embedder: memories are searched by their words): the memory
    backend, or DynamoDB on moto's server over fresh tables."""
    if request.param == "memory":
        return SessionStore.memory()
    client, s3 = request.getfixturevalue("server_inspectors")
    tables = create_tables(client, prefix=f"mem{next(_memory_tables)}", s3=s3)
    store: SessionStore = tables.store(client, s3)
    return store


@pytest.fixture(params=["memory", "dynamodb"])
def remembering_store(request: pytest.FixtureRequest) -> SessionStore:
    """A library store with long-term memory and wordllama's model (the local stack's): the memory backend, or
    DynamoDB on moto's server (the vector search in infra/local/vectors.py) over fresh tables."""
    from store.embeddings import WordLlamaEmbedder

    settings = Settings(embedder=WordLlamaEmbedder())
    if request.param == "memory":
        return SessionStore.memory(settings)
    client, s3 = request.getfixturevalue("server_inspectors")
    tables = create_tables(client, prefix=f"mem{next(_memory_tables)}", s3=s3)
    store: SessionStore = tables.store(client, s3, settings=settings)
    return store


# Cases moved to `make test-extended` (see the `extended` marker), which CI runs after `make test`: the slowest
# variants of tests whose quicker variants stay in `make test` (a contract test's async and HTTP backends where
# its memory and DynamoDB ones stay), and the slowest scenarios of their own (many writers on moto, the
# 100,000-message fork, fault injection that waits out retries, the bench's and the static checks' full runs),
# so that `make test` stays near 4 minutes on 2 cores. Nothing is dropped: each runs in CI.
EXTENDED_CASES = (
    # 1,201 memories put through moto (each with its 1,280-number vector): about 90 s a backend; in memory, 3 s
    "test_words_find_a_memory_behind_more_than_a_thousand_others[dynamodb]",
    "test_words_find_a_memory_behind_more_than_a_thousand_others[async]",
    "test_words_find_a_memory_behind_more_than_a_thousand_others[http]",
    "test_the_conformance_suite_passes_every_capability[dynamodb]",
    "test_the_conformance_suite_passes_every_capability[async]",
    "test_small_load[100-sessions-threads-library]",
    "test_small_load[100-sessions-threads-http]",
    "test_small_load[100-sessions-processes-library]",
    "test_small_load[100-sessions-processes-http]",
    "test_contention.py::test_sixteen_writers_append_to_one_session[sync-20]",
    "test_contention.py::test_sixteen_writers_mixing_appends_state_usage_and_pops[sync-20]",
    "test_fork_scale_on_aws.py::test_a_fork_of_100000_messages_stays_within_one_requests_budget",
    "test_concurrency.py::test_forks_racing_writers[3]",
    "test_s3_failures.py::test_failed_reads_are_store_errors",
    "test_integration_adk.py::test_sixteen_processes_append_to_one_session[3]",
    "test_memories_on_aws.py::test_forgetting_more_than_a_call_deletes_is_finished_by_the_cascade",
    "test_bench_scale.py::test_a_small_scale_run_measures_every_call",
    "test_integration_langgraph.py::test_a_checkpoint_does_not_grow_with_the_conversation[dynamodb]",
    "test_integration_langgraph.py::test_a_checkpoint_does_not_grow_with_the_conversation[async]",
    "test_forks_on_aws.py::test_a_cascade_invocation_ends_within_its_timeout_whatever_its_batch_holds",
    "test_dynamo_failures.py::test_persistent_throttling_becomes_store_unavailable",
    "test_static_checks.py::test_checkov_passes_with_every_skip_justified",
    "test_schemathesis.py::test_every_operation",
    "test_turn_costs.py::test_the_documented_turn_costs_are_what_a_turn_costs",
    # the benches' small runs that start servers or meter a whole run (their shape checks stay in `make test`)
    "test_bench.py::test_the_index_cost_bench_meters_indexing_and_a_context_at_two_lengths",
    "test_bench.py::test_the_turn_latency_bench_times_ours_and_the_peer_against_the_in_memory_baseline",
    "test_bench.py::test_the_vector_emulator_bench_times_each_kind_of_search_at_each_size",
    "test_bench.py::test_the_extraction_bench_counts_a_run_per_trigger_and_what_the_model_is_sent",
    "test_small_load[one-session-processes-library]",
)
# contract tests whose async and HTTP variants are in `make test-extended` (their other backends in `make test`)
EXTENDED_BACKENDS = ("async", "http")
EXTENDED_ON_SOME_BACKENDS = (
    "test_fork_copies.py::test_a_long_fork_is_copying_then_readable_and_its_source_pinned_meanwhile",
    "test_fork_copies.py::test_deleting_either_side_of_a_copy_leaves_the_other_whole",
    "test_fork_copies.py::test_a_long_rewind_is_copying_then_continues",
    "test_hostile_properties.py::test_hostile_values_raise_only_store_errors_and_write_nothing",
    "test_bad_input.py::test_bad_ids_are_rejected_everywhere",
    "test_bad_input.py::test_wrong_types_and_ranges",
    "test_bad_input.py::test_bad_owners_are_rejected",
    "test_artifacts.py::test_part_boundaries",
    "test_artifacts.py::test_large_artifact_streams_in_parts",
    "test_artifacts.py::test_bad_artifact_names_write_nothing",
    "test_hostile_input.py::test_json_that_cannot_be_encoded_is_refused_everywhere",
    "test_memories.py::test_a_filter_keeps_equal_fields_and_pages_follow_the_cursor",
    "test_memories.py::test_owners_never_see_or_rank_against_each_other",
    "test_memories.py::test_a_value_too_large_for_an_item_round_trips_and_its_object_goes_with_it",
    "test_forks.py::test_forks_and_rewinds_go_with_their_sessions",
    "test_extraction.py::test_a_merge_and_an_add_in_one_run",
)


def _extended(item: pytest.Item) -> bool:
    where = item.nodeid.rpartition("/")[2]
    if item.name in EXTENDED_CASES or where in EXTENDED_CASES:
        return True
    spec = getattr(item, "callspec", None)
    backend = spec.params.get("harness") if spec is not None else None
    return where.partition("[")[0] in EXTENDED_ON_SOME_BACKENDS and backend in EXTENDED_BACKENDS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _extended(item):
            item.add_marker(pytest.mark.extended)
