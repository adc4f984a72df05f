"""`AsyncSessionStore`: `SessionStore`'s API, awaitable, on aiobotocore.

Nothing is written twice: each method *is* `SessionStore`'s method (the same argument checks), run
against a backend whose DynamoDB plans are driven by the async driver, so what the sync method returns is
an awaitable that this front awaits. Signatures and documentation are `SessionStore`'s.

    async with AsyncSessionStore.from_env() as store:
        session = await store.create_session("user-42")
        await store.append_messages(session.id, [{"role": "user", "content": "hi"}])

aiobotocore is imported only when a DynamoDB-backed async store is built, so importing `store` (as the
Lambda handlers do) does not load it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from store.artifact_reader import ArtifactReader, AsyncArtifactReader
from store.backend import Backend
from store.lifecycle import AsyncClosing
from store.session_store import SessionStore, StoreFront, shared_sdk_session

P = ParamSpec("P")
R = TypeVar("R")


def default_async_session() -> Any:
    """The process's shared aiobotocore session."""
    return shared_sdk_session("aiobotocore")


def awaited(
    method: Callable[Concatenate[SessionStore, P], R],
) -> Callable[Concatenate[AsyncSessionStore, P], Coroutine[Any, Any, R]]:
    """`SessionStore`'s `method` as a coroutine method: the same checks, then the backend's awaitable."""

    @functools.wraps(method)
    async def call(self: AsyncSessionStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        result: Any = method(cast(SessionStore, self), *args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return cast(R, result)

    return call


class AsyncSessionStore(StoreFront, AsyncClosing):
    """Sessions, transcripts, state, interrupts, checkpoints, records, artifacts and traces, awaitable.

    One per process (or per event loop); it keeps one aiobotocore session and long-lived clients, created on
    first use. Close it with `await store.aclose()` or use `async with`. Built like `SessionStore`
    (`AsyncSessionStore.from_env()`, `AsyncSessionStore(tables..., bucket=...)`, `.memory()`), with an
    aiobotocore session (or an aioboto3 `Session`, which wraps one) or aiobotocore clients in place of
    boto3's."""

    def _dynamo_backend(
        self, context: Any, session: Any, configs: dict[str, dict[str, Any]], given: dict[str, Any]
    ) -> Backend:
        from store.aws.async_driver import AsyncClients, AsyncDriver
        from store.aws.backend import DynamoBackend

        driver = AsyncDriver(AsyncClients(session or default_async_session(), configs, given))
        return DynamoBackend(
            context,
            driver.run,
            driver.aclose,
            reader=lambda version, body: AsyncArtifactReader(version, body.read, body.close),
        )

    async def aclose(self) -> None:
        """Close the store's clients."""
        done = self._backend.close()
        if inspect.isawaitable(done):
            await done

    create_session = awaited(SessionStore.create_session)
    get_session = awaited(SessionStore.get_session)
    list_sessions = awaited(SessionStore.list_sessions)
    update_session = awaited(SessionStore.update_session)
    delete_session = awaited(SessionStore.delete_session)
    append_messages = awaited(SessionStore.append_messages)
    list_messages = awaited(SessionStore.list_messages)
    last_messages = awaited(SessionStore.last_messages)
    get_message = awaited(SessionStore.get_message)
    pop_message = awaited(SessionStore.pop_message)
    update_usage = awaited(SessionStore.update_usage)
    mark_compaction = awaited(SessionStore.mark_compaction)
    get_latest_compaction = awaited(SessionStore.get_latest_compaction)
    save_state = awaited(SessionStore.save_state)
    load_state = awaited(SessionStore.load_state)
    save_full = awaited(SessionStore.save_full)
    load_full = awaited(SessionStore.load_full)
    save_interrupt = awaited(SessionStore.save_interrupt)
    load_interrupt = awaited(SessionStore.load_interrupt)
    clear_interrupt = awaited(SessionStore.clear_interrupt)
    save_checkpoint = awaited(SessionStore.save_checkpoint)
    load_checkpoint = awaited(SessionStore.load_checkpoint)
    delete_checkpoint = awaited(SessionStore.delete_checkpoint)
    save_records = awaited(SessionStore.save_records)
    load_records = awaited(SessionStore.load_records)
    put_artifact = awaited(SessionStore.put_artifact)
    get_artifact = awaited(SessionStore.get_artifact)
    list_artifacts = awaited(SessionStore.list_artifacts)
    list_artifact_versions = awaited(SessionStore.list_artifact_versions)
    delete_artifact = awaited(SessionStore.delete_artifact)
    presign_artifact = awaited(SessionStore.presign_artifact)
    presign_artifact_upload = awaited(SessionStore.presign_artifact_upload)
    confirm_artifact_upload = awaited(SessionStore.confirm_artifact_upload)
    append_trace_events = awaited(SessionStore.append_trace_events)
    load_trace_events = awaited(SessionStore.load_trace_events)
    list_trace_runs = awaited(SessionStore.list_trace_runs)
    reclaim = awaited(SessionStore.reclaim)
    search = awaited(SessionStore.search)
    health_check = awaited(SessionStore.health_check)

    async def open_artifact(
        self, session_id: str, name: str, *, version: int | None = None, owner: str | None = None
    ) -> AsyncArtifactReader | None:
        """A streaming reader of a version (`await read(n)`, `async for`; `reader.version`), or None."""
        reader: Any = await _open_artifact(self, session_id, name, version=version, owner=owner)
        return AsyncArtifactReader.over(reader) if isinstance(reader, ArtifactReader) else reader


_open_artifact = awaited(SessionStore.open_artifact)
