"""`AsyncSessionStore`: `SessionStore`'s API, awaitable, on aiobotocore.

Nothing is written twice: each method runs `SessionStore`'s method (the same argument checks) against a
backend that hands back the request it was given (`Echo`), then awaits that request on this store's
`AsyncBackend` (DynamoDB through the async driver, or the memory backend). Signatures and documentation
are `SessionStore`'s; return types say what is awaited. An operation that embeds (`store.front.observed`)
builds its request in a worker thread when the store has an embedder, so a model never blocks the loop;
a watched one runs inside its span from its checks to its result.

    async with AsyncSessionStore.from_env() as store:
        session = await store.create_session("user-42")
        await store.append_messages(session.id, [{"role": "user", "content": "hi"}])

aiobotocore is imported only when a DynamoDB-backed async store is built, so importing `store` (as the
Lambda handlers do) does not load it."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

from store.artifact_reader import AsyncArtifactReader
from store.backend import AsyncBackend, Awaited, Backend, Echo
from store.core import validation as v
from store.core.lifecycle import AsyncClosing
from store.extraction.choice import CHOICE_KIND, ExtractionChoice, choice_of, choice_records, new_choice
from store.extraction.corrections import correction
from store.extraction.run_records import RUNS_KIND, ExtractionRun, stored_runs
from store.extraction.steps import drive_async
from store.front.observed import opened, watch_of
from store.models import MemoryItem
from store.recall.driving import awaited_flow
from store.requests import Request, operations
from store.session_store import SessionStore, StoreFront, shared_sdk_session

P = ParamSpec("P")
R = TypeVar("R")


def default_async_session() -> Any:
    """The process's shared aiobotocore session."""
    return shared_sdk_session("aiobotocore")


def awaited(
    method: Callable[Concatenate[SessionStore, P], R],
) -> Callable[Concatenate[AsyncSessionStore, P], Coroutine[Any, Any, R]]:
    """`SessionStore`'s `method` as a coroutine method: the same checks build the request (run against the
    `Echo` backend, the method returns the request in place of its result), then this store's backend
    executes it."""

    watch = watch_of(method)
    checks = cast(Callable[..., Any], getattr(method, "__wrapped__", method)) if watch else method

    @functools.wraps(method)
    async def call(self: AsyncSessionStore, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with opened(watch, checks, (self, *args), kwargs) as done:
            if watch is not None and watch.embeds and self.settings.embedder is not None:
                # an embedder (a model, a Bedrock call) blocks: off the event loop
                request = cast(Request[R], await asyncio.to_thread(checks, self._checks, *args, **kwargs))
            else:
                request = cast(Request[R], checks(self._checks, *args, **kwargs))
            result = await self._backend.execute(request)
            done(result)
            return result

    return call


def driven(
    method: Callable[Concatenate[SessionStore, P], list[ExtractionRun]],
) -> Callable[Concatenate[AsyncSessionStore, P], Coroutine[Any, Any, list[ExtractionRun]]]:
    """`SessionStore`'s extraction `method` (`store.extraction.front.flowed`) as a coroutine method: its checks
    build the same steps, which this store's methods perform, awaited (the model asked in a worker thread)."""
    build = cast(Callable[..., Any], method.__wrapped__)  # type: ignore[attr-defined]

    @functools.wraps(method)
    async def call(self: AsyncSessionStore, /, *args: P.args, **kwargs: P.kwargs) -> list[ExtractionRun]:
        model, flow = build(self._checks, *args, **kwargs)
        result: list[ExtractionRun] = await drive_async(self, model, flow)
        return result

    return call


class AsyncSessionStore(StoreFront[AsyncBackend], AsyncClosing):
    """Sessions, transcripts, state, interrupts, checkpoints, records, artifacts and traces, awaitable.

    One per process (or per event loop); it keeps one aiobotocore session and long-lived clients, created on
    first use. Close it with `await store.aclose()` or use `async with`. Built like `SessionStore`
    (`AsyncSessionStore.from_env()`, `AsyncSessionStore(tables..., bucket=...)`, `.memory()`), with an
    aiobotocore session (or an aioboto3 `Session`, which wraps one) or aiobotocore clients in place of
    boto3's."""

    @functools.cached_property
    def _checks(self) -> SessionStore:
        """`SessionStore`'s argument checks, over a backend that returns each request it is handed."""
        return SessionStore(backend=Echo(), settings=self.settings)

    def _adopt(self, backend: Backend | AsyncBackend) -> AsyncBackend:
        return backend if isinstance(backend, AsyncBackend) else Awaited(backend)

    def _dynamo_backend(
        self, tables: Any, session: Any, configs: dict[str, dict[str, Any]], given: dict[str, Any]
    ) -> AsyncBackend:
        from store.aws.async_driver import AsyncClients, AsyncDriver
        from store.aws.backend import AsyncDynamoBackend

        return AsyncDynamoBackend(tables, AsyncDriver(AsyncClients(session or default_async_session(), configs, given)))

    async def aclose(self) -> None:
        """Close the store's clients."""
        await self._backend.aclose()

    if TYPE_CHECKING:  # what type checkers see; at run time each is made from the operations (below)
        create_session = awaited(SessionStore.create_session)
        get_session = awaited(SessionStore.get_session)
        list_sessions = awaited(SessionStore.list_sessions)
        update_session = awaited(SessionStore.update_session)
        delete_session = awaited(SessionStore.delete_session)
        fork_session = awaited(SessionStore.fork_session)
        rewind_session = awaited(SessionStore.rewind_session)
        list_branches = awaited(SessionStore.list_branches)
        restore_branch = awaited(SessionStore.restore_branch)
        delete_branch = awaited(SessionStore.delete_branch)
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
        append_trace_runs = awaited(SessionStore.append_trace_runs)
        load_trace_events = awaited(SessionStore.load_trace_events)
        list_trace_runs = awaited(SessionStore.list_trace_runs)
        reclaim = awaited(SessionStore.reclaim)
        search = awaited(SessionStore.search)
        health_check = awaited(SessionStore.health_check)
        put_memory = awaited(SessionStore.put_memory)
        get_memory = awaited(SessionStore.get_memory)
        delete_memory = awaited(SessionStore.delete_memory)
        search_memories = awaited(SessionStore.search_memories)
        write_message_index = awaited(SessionStore.write_message_index)
        drop_message_index = awaited(SessionStore.drop_message_index)
        search_messages = awaited(SessionStore.search_messages)
        search_session_messages = awaited(SessionStore.search_session_messages)
        list_namespaces = awaited(SessionStore.list_namespaces)
        forget_owner = awaited(SessionStore.forget_owner)
        save_owner_records = awaited(SessionStore.save_owner_records)
        load_owner_records = awaited(SessionStore.load_owner_records)

    index_messages = awaited_flow(SessionStore.index_messages)
    set_message_index = awaited_flow(SessionStore.set_message_index)
    message_index_enabled = awaited_flow(SessionStore.message_index_enabled)
    get_message_index_state = awaited_flow(SessionStore.get_message_index_state)
    context = awaited_flow(SessionStore.context)
    extract_memories = driven(SessionStore.extract_memories)  # composed of the operations, not one of them
    extract_from_messages = driven(SessionStore.extract_from_messages)

    async def correct_memory(
        self, owner: str, namespace: tuple[str, ...] | list[str], key: str, text: str
    ) -> MemoryItem:
        """`SessionStore.correct_memory`, awaitable (the same steps)."""
        corrected: MemoryItem = await drive_async(self, None, correction(owner, namespace, key, text))
        return corrected

    async def set_extraction(
        self, owner: str, *, enabled: bool = True, strategies: list[str] | None = None
    ) -> ExtractionChoice:
        """`SessionStore.set_extraction`, awaitable."""
        who = v.owner(owner)
        choice = new_choice(enabled, strategies, self.settings.clock())
        await self.save_owner_records(who, CHOICE_KIND, choice_records(choice))
        return choice

    async def get_extraction(self, owner: str) -> ExtractionChoice:
        """`SessionStore.get_extraction`, awaitable."""
        return choice_of(await self.load_owner_records(v.owner(owner), CHOICE_KIND))

    async def list_extraction_runs(self, session_id: str, *, owner: str | None = None) -> list[ExtractionRun]:
        """`SessionStore.list_extraction_runs`, awaitable."""
        return stored_runs(await self.load_records(session_id, RUNS_KIND, owner=owner))

    async def open_artifact(
        self, session_id: str, name: str, *, version: int | None = None, owner: str | None = None
    ) -> AsyncArtifactReader | None:
        """A streaming reader of a version (`await read(n)`, `async for`; `reader.version`), or None."""
        reader = await _open_artifact(self, session_id, name, version=version, owner=owner)
        return None if reader is None else AsyncArtifactReader.over(reader)


_open_artifact = awaited(SessionStore.open_artifact)


def _derive_operations() -> None:
    """Give `AsyncSessionStore` an awaitable method for every operation `SessionStore` offers (those it
    writes itself aside): the operations are declared once, by their request records."""
    for name in operations():
        if name not in vars(AsyncSessionStore):
            setattr(AsyncSessionStore, name, awaited(getattr(SessionStore, name)))


_derive_operations()
