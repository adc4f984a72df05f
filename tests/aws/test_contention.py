"""Sixteen writers on one session at the default settings (a supervisor and its parallel workers writing one
transcript): every call succeeds, the transcript ends gapless with every message once, and no append waits
without bound (the session's writer queue, store/aws/plans/turns.py). DynamoDB runs on moto's server in a
process of its own, which serves one request at a time, as one hot item does; sync writers are threads
with a store each (separate Lambda instances), async writers are tasks with a store each."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from botocore.config import Config

from infra.local.aws import REGION, create_tables, local_client
from store import AsyncSessionStore, Conflict, MessageNotFound, SessionStore
from store.memory import MemoryBackend
from store.session_store import retry_config
from tests.async_support import LoopThread

WRITERS = 16
APPENDS = 100
# (backend, calls per writer): every backend at 16 x 100 (the DynamoDB runs, one and a half to two minutes each
# on moto, in `make test-extended`, which CI runs after `make test`); `make test` runs memory at 16 x 100 and
# the sync DynamoDB store at 16 x 20 (async at 16 x 20 too is in `make test-extended`: the suite stays under
# 15 minutes)
CASES = [
    pytest.param("memory", APPENDS, id="memory"),
    pytest.param("sync", 20, id="sync-20"),
    pytest.param("sync", APPENDS, id="sync", marks=pytest.mark.extended),
    pytest.param("async", 20, id="async-20", marks=pytest.mark.extended),
    pytest.param("async", APPENDS, id="async", marks=pytest.mark.extended),
]
MIXED_CASES = [
    pytest.param("memory", APPENDS, id="memory"),
    pytest.param("sync", 20, id="sync-20"),
    pytest.param("async", 20, id="async-20", marks=pytest.mark.extended),
    pytest.param("sync", APPENDS, id="sync", marks=pytest.mark.extended),
    pytest.param("async", APPENDS, id="async", marks=pytest.mark.extended),
]
# write attempts (TransactWriteItems or UpdateItem) one append may make: two losses at once, a ticket, the
# write in its turn; a skip after a lease (a writer late for its turn) may cost a ticket and a turn more
MAX_ATTEMPTS = 6
STATE_SEEN = "the saved state has seen message"

_attempts: ContextVar[Counter[str] | None] = ContextVar("attempts", default=None)


def count_attempt(model: Any, **_: Any) -> None:
    """Count a request against the append running in this thread or task (if one is being counted)."""
    counter = _attempts.get()
    if counter is not None:
        counter[model.name] += 1


def attempts_of(counter: Counter[str]) -> int:
    return counter["TransactWriteItems"] + counter["UpdateItem"]


@pytest.fixture(scope="module")
def endpoint(contended_endpoint: str) -> str:
    return contended_endpoint


@pytest.fixture(scope="module")
def sync_client(endpoint: str) -> Iterator[Any]:
    client = local_client(endpoint_url=endpoint, config=retry_config(Config(max_pool_connections=WRITERS * 2)))
    client.meta.events.register("before-call.dynamodb.*", count_attempt)
    yield client
    client.meta.events.unregister("before-call.dynamodb.*", count_attempt)


@pytest.fixture(scope="module")
def loop() -> Iterator[LoopThread]:
    thread = LoopThread()
    yield thread
    thread.stop()


@pytest.fixture(scope="module")
def async_client(endpoint: str, loop: LoopThread) -> Iterator[Any]:
    import contextlib

    from store.async_session_store import default_async_session

    stack = contextlib.AsyncExitStack()

    async def make() -> Any:
        session = default_async_session()
        config = retry_config(Config(max_pool_connections=WRITERS * 2))
        return await stack.enter_async_context(
            session.create_client("dynamodb", config=config, endpoint_url=endpoint, region_name=REGION)
        )

    client = loop.run(make())
    client.meta.events.register("before-call.dynamodb.*", count_attempt)
    yield client
    loop.run(stack.aclose())


@dataclass
class Run:
    """What the writers did: per-append attempt counts, unexpected errors, refusals the contract names."""

    attempts: list[int] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, counter: Counter[str]) -> None:
        with self.lock:
            self.attempts.append(attempts_of(counter))


Work = Callable[[Any, str, int, Run], Any]  # (store, session id, writer number, run): one writer's work


def run_writers(kind: str, work: Work, request: pytest.FixtureRequest) -> tuple[SessionStore, str, Run]:
    """Run WRITERS writers of `kind` ("memory", "sync", "async") on one new session; returns a sync store
    over the same data, the session id and what happened. `work` is a plain function for threads, a
    coroutine function for async writers."""
    run = Run()
    if kind == "memory":
        store = SessionStore(backend=MemoryBackend())
        stores: list[Any] = [store] * WRITERS
        reader = store
    else:
        inspector = local_client(endpoint_url=request.getfixturevalue("endpoint"))
        tables = create_tables(inspector, prefix=f"c{abs(hash(request.node.name)) % 10**8}")
        if kind == "sync":
            client = request.getfixturevalue("sync_client")
            stores = [SessionStore(tables.sessions, tables.messages, client=client) for _ in range(WRITERS)]
        else:
            client = request.getfixturevalue("async_client")
            stores = [AsyncSessionStore(tables.sessions, tables.messages, client=client) for _ in range(WRITERS)]
        reader = SessionStore(tables.sessions, tables.messages, client=inspector)
    sid = reader.create_session("supervisor").id
    if kind == "async":
        loop: LoopThread = request.getfixturevalue("loop")

        async def everyone() -> None:
            results = await asyncio.gather(
                *(work(stores[i], sid, i, run) for i in range(WRITERS)), return_exceptions=True
            )
            run.errors.extend(r for r in results if isinstance(r, BaseException))

        loop.run(everyone())
    else:
        barrier = threading.Barrier(WRITERS)

        def thread(i: int) -> None:
            barrier.wait()
            try:
                work(stores[i], sid, i, run)
            except BaseException as exc:  # asserted on below
                run.errors.append(exc)

        threads = [threading.Thread(target=thread, args=(i,)) for i in range(WRITERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
    return reader, sid, run


def counted(run: Run, call: Callable[[], Any]) -> Any:
    counter: Counter[str] = Counter()
    token = _attempts.set(counter)
    try:
        return call()
    finally:
        _attempts.reset(token)
        run.record(counter)


async def counted_async(run: Run, call: Callable[[], Any]) -> Any:
    counter: Counter[str] = Counter()
    token = _attempts.set(counter)
    try:
        return await call()
    finally:
        _attempts.reset(token)
        run.record(counter)


def appends_only(kind: str, calls: int) -> Work:
    """Each writer appends `calls` single messages, in order."""
    if kind == "async":

        async def write_async(store: Any, sid: str, i: int, run: Run) -> None:
            for j in range(calls):
                message = [{"role": "user", "content": f"w{i}-{j}"}]
                await counted_async(run, partial(store.append_messages, sid, message))

        return write_async

    def write(store: Any, sid: str, i: int, run: Run) -> None:
        for j in range(calls):
            counted(run, partial(store.append_messages, sid, [{"role": "user", "content": f"w{i}-{j}"}]))

    return write


@pytest.mark.parametrize("kind,calls", CASES)
def test_sixteen_writers_append_to_one_session(kind: str, calls: int, request: pytest.FixtureRequest) -> None:
    reader, sid, run = run_writers(kind, appends_only(kind, calls), request)
    assert run.errors == []
    messages = reader.list_messages(sid).items
    total = WRITERS * calls
    assert [m.seq for m in messages] == list(range(1, total + 1))  # gapless
    assert sorted(str(m.content) for m in messages) == sorted(f"w{i}-{j}" for i in range(WRITERS) for j in range(calls))
    for i in range(WRITERS):  # each writer's messages in its own order
        assert [m.content for m in messages if str(m.content).startswith(f"w{i}-")] == [
            f"w{i}-{j}" for j in range(calls)
        ]
    assert reader.get_session(sid).last_seq == total
    if kind != "memory":
        assert len(run.attempts) == total
        assert max(run.attempts) <= MAX_ATTEMPTS, f"an append took {max(run.attempts)} write attempts"


def mixed(kind: str, calls: int) -> Work:
    """Each writer makes `calls` calls on the one session, in a cycle of ten: six appends (with usage), a
    usage update of the message it appended last, a state save, and an append followed by a pop of the
    latest message (whoever's). What the contract refuses is recorded, not an error: a pop of a message a
    state saved since has seen, a usage update of a message another writer popped first."""

    def plan(i: int) -> list[tuple[str, int]]:
        cycle = ["append"] * 6 + ["usage", "state", "append", "pop"]
        return [(cycle[j % 10], j) for j in range(calls)]

    def message(i: int, j: int) -> dict[str, Any]:
        return {"role": "assistant", "content": f"w{i}-{j}", "usage": {"input_tokens": 1}}

    if kind == "async":

        async def write_async(store: Any, sid: str, i: int, run: Run) -> None:
            mine: list[str] = []
            for op, j in plan(i):
                if op == "append":
                    [rec] = await store.append_messages(sid, [message(i, j)])
                    mine.append(rec.id)
                elif op == "usage":
                    try:
                        await store.update_usage(sid, mine[-1], {"input_tokens": 2})
                    except MessageNotFound:
                        run.refused.append("usage of a popped message")
                elif op == "state":
                    await store.save_state(sid, {"writer": i, "call": j})
                else:
                    try:
                        await store.pop_message(sid)
                    except Conflict as exc:
                        if STATE_SEEN not in str(exc):
                            raise
                        run.refused.append(str(exc))

        return write_async

    def write(store: Any, sid: str, i: int, run: Run) -> None:
        mine: list[str] = []
        for op, j in plan(i):
            if op == "append":
                [rec] = store.append_messages(sid, [message(i, j)])
                mine.append(rec.id)
            elif op == "usage":
                try:
                    store.update_usage(sid, mine[-1], {"input_tokens": 2})
                except MessageNotFound:
                    run.refused.append("usage of a popped message")
            elif op == "state":
                store.save_state(sid, {"writer": i, "call": j})
            else:
                try:
                    store.pop_message(sid)
                except Conflict as exc:
                    if STATE_SEEN not in str(exc):
                        raise
                    run.refused.append(str(exc))

    return write


@pytest.mark.parametrize("kind,calls", MIXED_CASES)
def test_sixteen_writers_mixing_appends_state_usage_and_pops(
    kind: str, calls: int, request: pytest.FixtureRequest
) -> None:
    reader, sid, run = run_writers(kind, mixed(kind, calls), request)
    assert run.errors == []
    session = reader.get_session(sid)
    messages = reader.list_messages(sid).items
    assert [m.seq for m in messages] == list(range(1, session.last_seq + 1))  # gapless
    contents = Counter(str(m.content) for m in messages)
    assert set(contents.values()) <= {1}  # each message at most once
    appended = WRITERS * 7 * (calls // 10)
    pops = WRITERS * (calls // 10)
    refused = sum(1 for r in run.refused if STATE_SEEN in r)
    assert len(messages) == appended - (pops - refused)  # every pop that was not refused removed one message
    assert refused < pops
    # the totals are the usage of what is left: appends added 1, updates moved theirs to 2, pops took theirs away
    assert session.usage.input_tokens == sum(m.usage.input_tokens or 0 for m in messages if m.usage)
    state = reader.load_state(sid)
    assert state is not None and state.version == WRITERS * (calls // 10)
