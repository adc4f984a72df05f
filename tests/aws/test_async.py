"""What only the async store has: its shape, its event-loop behaviour, async streams, its lifecycle. (The
contract suite itself runs against it through every `harness` test.)"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from infra.local.aws import REGION, create_tables
from store import AsyncArtifactReader, AsyncSessionStore, SessionNotFound, SessionStore
from store.aws.async_driver import AsyncClients
from store.aws.backend import AsyncDynamoBackend

SYNC_ONLY = {"close", "from_env", "memory", "supports"}  # supports reads a declaration: no I/O to await


def test_every_public_method_is_there_awaitable_with_the_same_signature() -> None:
    public = {n for n, f in inspect.getmembers(SessionStore) if not n.startswith("_") and callable(f)}
    for name in sorted(public - SYNC_ONLY):
        method = getattr(AsyncSessionStore, name)
        assert inspect.iscoroutinefunction(method), name
        expected = inspect.signature(getattr(SessionStore, name))
        got = inspect.signature(method)
        assert list(got.parameters) == list(expected.parameters), name
        assert [p.default for p in got.parameters.values()] == [p.default for p in expected.parameters.values()]
    assert callable(AsyncSessionStore.from_env) and callable(AsyncSessionStore.memory)
    assert inspect.iscoroutinefunction(AsyncSessionStore.aclose)


@pytest.fixture
def server_tables(moto_endpoint: str, server_inspectors: tuple[Any, Any], request: pytest.FixtureRequest) -> Any:
    dynamodb, s3 = server_inspectors
    return create_tables(dynamodb, prefix=f"async-{request.node.name[:30]}".lower().replace("_", "-"), s3=s3)


def clients_of(store: AsyncSessionStore) -> AsyncClients:
    """The long-lived clients of a DynamoDB-backed async store."""
    backend = store._backend
    assert isinstance(backend, AsyncDynamoBackend)
    return backend.driver.clients


def new_store(endpoint: str, tables: Any) -> AsyncSessionStore:
    return AsyncSessionStore(
        tables.sessions, tables.messages, bucket=tables.bucket, endpoint_url=endpoint, region_name=REGION
    )


def test_a_slow_call_does_not_block_the_event_loop(moto_endpoint: str, server_tables: Any) -> None:
    """Each GetItem is held 0.3 s before it is sent; two stores reading at once both start before either
    ends, and a ticker on the same loop keeps running meanwhile."""
    log: list[str] = []

    async def slow(request: Any, **_: Any) -> None:
        log.append("start")
        await asyncio.sleep(0.3)
        log.append("end")

    async def main() -> int:
        async with new_store(moto_endpoint, server_tables) as one, new_store(moto_endpoint, server_tables) as two:
            sid = (await one.create_session("alice")).id
            for store in (one, two):
                client = await clients_of(store).get("dynamodb")
                hooks: Any = client.meta.events  # aiobotocore awaits async handlers; its stubs type them as sync
                hooks.register("before-send.dynamodb.GetItem", slow)
            ticks = 0
            done = asyncio.Event()

            async def ticker() -> None:
                nonlocal ticks
                while not done.is_set():
                    ticks += 1
                    await asyncio.sleep(0.01)

            ticking = asyncio.create_task(ticker())
            first, second = await asyncio.gather(one.get_session(sid), two.get_session(sid))
            done.set()
            await ticking
            assert first is not None and first == second
            return ticks

    ticks = asyncio.run(main())
    assert log[:2] == ["start", "start"], log  # the second call started while the first was waiting
    assert ticks >= 10, ticks  # the loop kept running other work during the slow calls


def test_async_streams_in_and_out(moto_endpoint: str, server_tables: Any) -> None:
    data = os.urandom(20 * 1024 * 1024 + 5)

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(data), 3 * 1024 * 1024):
            yield data[i : i + 3 * 1024 * 1024]

    class AsyncFile:
        def __init__(self) -> None:
            self.offset = 0

        async def read(self, n: int) -> bytes:
            out = data[self.offset : self.offset + n]
            self.offset += len(out)
            return out

    async def main() -> None:
        async with new_store(moto_endpoint, server_tables) as store:
            sid = (await store.create_session("alice")).id
            v1 = await store.put_artifact(sid, "big.bin", chunks())
            v2 = await store.put_artifact(sid, "big.bin", AsyncFile())
            assert (v1.version, v2.version) == (1, 2)
            assert v1.sha256 == v2.sha256 == hashlib.sha256(data).hexdigest()
            reader = await store.open_artifact(sid, "big.bin", version=1)
            assert isinstance(reader, AsyncArtifactReader)
            digest = hashlib.sha256()
            async with reader:
                async for chunk in reader:
                    digest.update(chunk)
            assert digest.hexdigest() == v1.sha256
            assert await store.open_artifact(sid, "missing") is None
            with pytest.raises(SessionNotFound):
                await store.open_artifact("no-such-session", "big.bin")

    asyncio.run(main())


def test_memory_store_takes_async_streams_too() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"ab"
        yield b"cd"

    async def main() -> None:
        async with AsyncSessionStore.memory() as store:
            sid = (await store.create_session("alice")).id
            assert (await store.put_artifact(sid, "a", chunks())).size == 4
            reader = await store.open_artifact(sid, "a")
            assert isinstance(reader, AsyncArtifactReader)
            async with reader:
                assert await reader.read() == b"abcd"

    asyncio.run(main())


def test_one_session_and_long_lived_clients(moto_endpoint: str, server_tables: Any) -> None:
    async def main() -> None:
        store = new_store(moto_endpoint, server_tables)
        clients = clients_of(store)
        sid = (await store.create_session("alice")).id
        first = await clients.get("dynamodb")
        for _ in range(3):
            await store.append_messages(sid, [{"role": "user", "content": "x"}])
            await store.put_artifact(sid, "a.txt", b"x")
        assert await clients.get("dynamodb") is first and set(clients._clients) == {"dynamodb", "s3"}
        await store.aclose()
        assert clients._clients == {}

    asyncio.run(main())


def test_lambda_handlers_do_not_load_the_async_stack() -> None:
    """The async SDK adds ~350 ms to a cold start: importing the handlers (and `store`) must not load it."""
    code = (
        "import sys, functions.api.app, functions.cascade.app, store; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('aioboto3', 'aiobotocore', 'aiohttp')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout
