"""The Google ADK adapters, driven by ADK's own Runner with a scripted model (every backend)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from botocore.config import Config
from google.adk.agents import LlmAgent
from google.adk.artifacts import artifact_util
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from infra.local.aws import create_tables, local_client
from store import AsyncSessionStore, SessionStore, StoreUnavailable
from store.core.validation import new_id
from store.integrations.adk import StoreArtifactService, StoreSessionService, named_store_id, session_store_id
from store.session_store import retry_config
from tests.conftest import Harness

APP = "travel"


class ScriptedLlm(BaseLlm):
    """Calls the `remember` tool on a user's first message, then answers with the next scripted text."""

    replies: list[str]
    seen: list[list[str]] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        texts = [p.text for c in llm_request.contents for p in (c.parts or []) if p.text]
        self.seen.append(texts)
        last = llm_request.contents[-1].parts or []
        if last and last[0].text and last[0].text.startswith("I am "):
            call = types.FunctionCall(name="remember", args={"name": last[0].text.removeprefix("I am ")})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
            return
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=self.replies.pop(0))]))


async def remember(name: str, tool_context: ToolContext) -> dict[str, Any]:
    """Remember the user's name."""
    tool_context.state["user:name"] = name
    tool_context.state["app:greeted"] = tool_context.state.get("app:greeted", 0) + 1
    tool_context.state["temp:scratch"] = "not kept"
    tool_context.state["turns"] = tool_context.state.get("turns", 0) + 1
    await tool_context.save_artifact("note.txt", types.Part.from_text(text=f"{name} wants to travel"))
    return {"remembered": name}


def run(runner: Runner, user: str, session_id: str, text: str) -> list[Event]:
    async def go() -> list[Event]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [e async for e in runner.run_async(user_id=user, session_id=session_id, new_message=message)]

    return asyncio.run(go())


def runner_on(store: Any, replies: list[str]) -> tuple[Runner, ScriptedLlm]:
    model = ScriptedLlm(model="scripted", replies=replies, seen=[])
    agent = LlmAgent(name="planner", model=model, instruction="Plan trips.", tools=[remember])
    runner = Runner(
        app_name=APP,
        agent=agent,
        session_service=StoreSessionService(store),
        artifact_service=StoreArtifactService(store),
    )
    return runner, model


def test_adk_runner_resumes_from_the_store(harness: Harness) -> None:
    runner, _ = runner_on(harness.store, ["Nice to meet you, Ada."])
    session = asyncio.run(runner.session_service.create_session(app_name=APP, user_id="ada", state={"tier": "gold"}))
    events = run(runner, "ada", session.id, "I am Ada")
    assert events[-1].content.parts[0].text == "Nice to meet you, Ada."

    # a new process: new store object, new services, new runner
    runner2, model2 = runner_on(harness.twin(), ["Lisbon, Ada."])
    run(runner2, "ada", session.id, "Where should I go?")
    assert "I am Ada" in model2.seen[0] and "Nice to meet you, Ada." in model2.seen[0]
    stored = asyncio.run(runner2.session_service.get_session(app_name=APP, user_id="ada", session_id=session.id))
    assert stored.state["user:name"] == "Ada"
    assert stored.state["app:greeted"] == 1
    assert stored.state["turns"] == 1 and stored.state["tier"] == "gold"
    assert not any(k.startswith("temp:") for k in stored.state)
    authors = [e.author for e in stored.events]
    assert authors[0] == "user" and authors[-1] == "planner" and len(authors) == 6
    assert [e.id for e in stored.events[1:4]] == [e.id for e in events]  # what the first run yielded, stored
    note = asyncio.run(
        runner2.artifact_service.load_artifact(app_name=APP, user_id="ada", session_id=session.id, filename="note.txt")
    )
    assert note.text == "Ada wants to travel"
    # user state reaches the user's other sessions; app state every user's
    other = asyncio.run(runner2.session_service.create_session(app_name=APP, user_id="ada"))
    assert other.state["user:name"] == "Ada" and other.state["app:greeted"] == 1
    bob = asyncio.run(runner2.session_service.create_session(app_name=APP, user_id="bob"))
    assert "user:name" not in bob.state and bob.state["app:greeted"] == 1
    assert asyncio.run(runner2.session_service.get_user_state(app_name=APP, user_id="ada")) == {"name": "Ada"}
    # the ADK session is a store session of its user, under the id the user chose
    assert harness.store.get_session(named_store_id("ada", session.id)).owner == "ada"


def test_session_service_operations(harness: Harness) -> None:
    service = StoreSessionService(harness.store)

    async def scenario() -> None:
        s = await service.create_session(app_name=APP, user_id="u1", session_id="s1", state={"k": 1, "temp:t": 2})
        assert s.id == "s1" and s.state == {"k": 1} and s.events == []
        with pytest.raises(AlreadyExistsError):
            await service.create_session(app_name=APP, user_id="u1", session_id="s1")
        for i in range(6):
            event = Event(
                author="user" if i % 2 == 0 else "bot",
                invocation_id="inv",
                timestamp=1000.0 + i,
                actions=EventActions(state_delta={"k": i, "temp:x": i}),
                content=types.Content(role="user", parts=[types.Part(text=f"e{i}")]),
            )
            await service.append_event(s, event)
        assert s.state["k"] == 5 and len(s.events) == 6
        partial = Event(author="bot", invocation_id="inv", partial=True)
        await service.append_event(s, partial)
        full = await service.get_session(app_name=APP, user_id="u1", session_id="s1")
        assert [e.content.parts[0].text for e in full.events] == [f"e{i}" for i in range(6)]
        assert full.state == {"k": 5}
        recent = await service.get_session(
            app_name=APP, user_id="u1", session_id="s1", config=GetSessionConfig(num_recent_events=2)
        )
        assert [e.timestamp for e in recent.events] == [1004.0, 1005.0]
        after = await service.get_session(
            app_name=APP, user_id="u1", session_id="s1", config=GetSessionConfig(after_timestamp=1003.0)
        )
        assert [e.timestamp for e in after.events] == [1003.0, 1004.0, 1005.0]
        none = await service.get_session(
            app_name=APP, user_id="u1", session_id="s1", config=GetSessionConfig(num_recent_events=0)
        )
        assert none.events == []
        await service.create_session(app_name=APP, user_id="u1", session_id="s2")
        await service.create_session(app_name=APP, user_id="u2", session_id="s3")
        await service.create_session(app_name="other-app", user_id="u1", session_id="s4")
        mine = await service.list_sessions(app_name=APP, user_id="u1")
        assert sorted(x.id for x in mine.sessions) == ["s1", "s2"] and all(x.events == [] for x in mine.sessions)
        everyone = await service.list_sessions(app_name=APP)
        assert sorted((x.user_id, x.id) for x in everyone.sessions) == [("u1", "s1"), ("u1", "s2"), ("u2", "s3")]
        # another user cannot read it; deleting removes it (twice is fine)
        assert await service.get_session(app_name=APP, user_id="u2", session_id="s1") is None
        await service.delete_session(app_name=APP, user_id="u1", session_id="s1")
        await service.delete_session(app_name=APP, user_id="u1", session_id="s1")
        assert await service.get_session(app_name=APP, user_id="u1", session_id="s1") is None

    asyncio.run(scenario())


@pytest.fixture(params=["memory", "dynamodb-server"])
def shared_store(request: pytest.FixtureRequest) -> Any:
    """A store whose writes really interleave: moto's server (in-process moto restores a whole table
    when a transaction fails, undoing concurrent writers), or the memory backend."""
    if request.param == "memory":
        return SessionStore.memory()
    endpoint = request.getfixturevalue("moto_endpoint")
    client = local_client(endpoint_url=endpoint, config=retry_config(Config(max_pool_connections=16)))
    tables = create_tables(client, prefix=f"adk-{new_id()[:8]}")
    return SessionStore(tables.sessions, tables.messages, client=client)


def test_a_create_that_fails_midway_leaves_nothing(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter calls either store through the async front's typed methods: its save_state fails."""
    service = StoreSessionService(harness.store)

    async def failing(*args: Any, **kwargs: Any) -> Any:
        raise StoreUnavailable("injected")

    with monkeypatch.context() as patched:
        patched.setattr(AsyncSessionStore, "save_state", failing)
        with pytest.raises(StoreUnavailable):
            asyncio.run(service.create_session(app_name=APP, user_id="u5", session_id="half", state={"k": 1}))
    assert asyncio.run(service.get_session(app_name=APP, user_id="u5", session_id="half")) is None
    again = asyncio.run(service.create_session(app_name=APP, user_id="u5", session_id="half", state={"k": 1}))
    assert again.state == {"k": 1}


def test_concurrent_events_keep_every_state_change(shared_store: SessionStore) -> None:
    service = StoreSessionService(shared_store)

    async def scenario() -> dict[str, Any]:
        s = await service.create_session(app_name=APP, user_id="u", session_id="busy")

        async def writer(i: int) -> None:
            mine = await service.get_session(app_name=APP, user_id="u", session_id="busy")
            assert mine is not None
            event = Event(author="w", invocation_id=f"i{i}", actions=EventActions(state_delta={f"key{i}": i}))
            await service.append_event(mine, event)

        await asyncio.gather(*(writer(i) for i in range(6)))
        found = await service.get_session(app_name=APP, user_id="u", session_id=s.id)
        return {"state": found.state, "events": len(found.events)}

    result = asyncio.run(scenario())
    assert result == {"state": {f"key{i}": i for i in range(6)}, "events": 6}


@pytest.mark.parametrize("flush_every", [3])
def test_sixteen_processes_append_to_one_session(flush_every: int | None, request: pytest.FixtureRequest) -> None:
    """Sixteen services, each over a store of its own (sixteen Lambda instances), append six events each
    with state deltas to one ADK session at once, one event a write or three a write: every event is
    stored once and every state change is kept (the store's writer queue serves the read-change-writes)."""
    endpoint = request.getfixturevalue("contended_endpoint")
    client = local_client(endpoint_url=endpoint, config=retry_config(Config(max_pool_connections=40)))
    tables = create_tables(client, prefix=f"adk16-{new_id()[:8]}")
    services = [
        StoreSessionService(SessionStore(tables.sessions, tables.messages, client=client), flush_every=flush_every)
        for _ in range(16)
    ]

    async def scenario() -> tuple[dict[str, Any], list[str]]:
        await services[0].create_session(app_name=APP, user_id="u", session_id="crowded")

        async def writer(i: int) -> None:
            service = services[i]
            mine = await service.get_session(app_name=APP, user_id="u", session_id="crowded")
            assert mine is not None
            for j in range(6):
                delta = {f"w{i}": j, f"w{i}e{j}": True}
                event = Event(author=f"w{i}", invocation_id=f"i{i}-{j}", actions=EventActions(state_delta=delta))
                await service.append_event(mine, event)
            await service.flush()

        await asyncio.gather(*(writer(i) for i in range(16)))
        found = await services[0].get_session(app_name=APP, user_id="u", session_id="crowded")
        assert found is not None
        return found.state, [e.invocation_id for e in found.events]

    state, events = asyncio.run(scenario())
    assert sorted(events) == sorted(f"i{i}-{j}" for i in range(16) for j in range(6))
    assert state == {**{f"w{i}": 5 for i in range(16)}, **{f"w{i}e{j}": True for i in range(16) for j in range(6)}}


def test_artifacts_saved_before_the_session_is_created(harness: Harness) -> None:
    artifacts = StoreArtifactService(harness.store)
    sessions = StoreSessionService(harness.store)

    async def scenario() -> None:
        where: dict[str, Any] = {"app_name": APP, "user_id": "u9", "session_id": "early"}
        await artifacts.save_artifact(filename="a.txt", artifact=types.Part(text="kept"), **where)
        assert (await sessions.list_sessions(app_name=APP, user_id="u9")).sessions == []  # not a session yet
        created = await sessions.create_session(app_name=APP, user_id="u9", session_id="early")
        assert created.id == "early"
        with pytest.raises(AlreadyExistsError):
            await sessions.create_session(app_name=APP, user_id="u9", session_id="early")
        assert [s.id for s in (await sessions.list_sessions(app_name=APP, user_id="u9")).sessions] == ["early"]
        assert (await artifacts.load_artifact(filename="a.txt", **where)).text == "kept"
        await sessions.delete_session(app_name=APP, user_id="u9", session_id="early")
        assert await artifacts.load_artifact(filename="a.txt", **where) is None  # deleted with its session

    asyncio.run(scenario())


def test_artifact_service_operations(harness: Harness) -> None:
    service = StoreArtifactService(harness.store)
    where: dict[str, Any] = {"app_name": APP, "user_id": "u1", "session_id": "s1"}

    async def scenario() -> None:
        png = types.Part.from_bytes(data=b"\x89PNG\x00\x01", mime_type="image/png")
        assert await service.save_artifact(filename="pic.png", artifact=png, **where) == 0
        assert (
            await service.save_artifact(
                filename="pic.png", artifact={"text": "second"}, custom_metadata={"by": "test"}, **where
            )
            == 1
        )
        assert await service.save_artifact(filename="user:profile", artifact=types.Part(text="Ada"), **where) == 0
        first = await service.load_artifact(filename="pic.png", version=0, **where)
        assert first.inline_data.data == b"\x89PNG\x00\x01" and first.inline_data.mime_type == "image/png"
        assert (await service.load_artifact(filename="pic.png", **where)).text == "second"
        assert await service.load_artifact(filename="pic.png", version=5, **where) is None
        assert await service.list_versions(filename="pic.png", **where) == [0, 1]
        versions = await service.list_artifact_versions(filename="pic.png", **where)
        assert [(v.version, v.mime_type, v.custom_metadata) for v in versions] == [
            (0, "image/png", {}),
            (1, "text/plain", {"by": "test"}),
        ]
        latest = await service.get_artifact_version(filename="pic.png", **where)
        assert latest.version == 1
        assert await service.list_artifact_keys(**where) == ["pic.png", "user:profile"]
        # user-scoped artifacts are visible from any session of the user, and without one
        assert await service.list_artifact_keys(app_name=APP, user_id="u1") == ["user:profile"]
        other: dict[str, Any] = {"app_name": APP, "user_id": "u1", "session_id": "s2"}
        assert (await service.load_artifact(filename="user:profile", **other)).text == "Ada"
        assert await service.load_artifact(filename="pic.png", **other) is None
        # another user sees nothing
        assert await service.list_artifact_keys(app_name=APP, user_id="u2", session_id="s1") == []
        # delete, then versions start again from 0
        await service.delete_artifact(filename="pic.png", **where)
        assert await service.load_artifact(filename="pic.png", **where) is None
        assert await service.list_versions(filename="pic.png", **where) == []
        assert await service.save_artifact(filename="pic.png", artifact=types.Part(text="again"), **where) == 0
        with pytest.raises(InputValidationError):
            await service.save_artifact(
                app_name=APP, user_id="u1", filename="x", artifact=types.Part(text="no session")
            )
        with pytest.raises(InputValidationError):
            await service.save_artifact(filename="../escape", artifact=types.Part(text="bad"), **where)
        # a reference to another artifact of the same scope loads the referenced bytes
        uri = artifact_util.get_artifact_uri(app_name=APP, user_id="u1", session_id="s1", filename="pic.png", version=0)
        ref = types.Part(file_data=types.FileData(file_uri=uri, mime_type="text/plain"))
        await service.save_artifact(filename="alias", artifact=ref, **where)
        assert (await service.load_artifact(filename="alias", **where)).text == "again"
        foreign = artifact_util.get_artifact_uri(app_name=APP, user_id="u2", filename="user:x", version=0)
        with pytest.raises(InputValidationError):
            await service.save_artifact(
                filename="bad-ref", artifact=types.Part(file_data=types.FileData(file_uri=foreign)), **where
            )
        # a rewind's tombstone version makes the artifact absent
        tombstone = types.Part(inline_data=types.Blob(mime_type="application/octet-stream", data=b""))
        await service.save_artifact(filename="pic.png", artifact=tombstone, **where)
        assert await service.load_artifact(filename="pic.png", **where) is None
        assert (await service.load_artifact(filename="pic.png", version=0, **where)).text == "again"

    asyncio.run(scenario())


# ---------------------------------------------------------------- against ADK's own session services


def _seen(session: Any) -> Any:
    """What a caller reads from an ADK session: ids, state, events (as ADK compares them) and, once it
    has events, its last update time (before any, each service reports its own creation clock)."""
    if session is None:
        return None
    events = [
        (
            e.id,
            e.author,
            e.invocation_id,
            e.timestamp,
            e.content.model_dump() if e.content else None,
            dict(e.actions.state_delta),
        )
        for e in session.events
    ]
    return (session.id, session.app_name, session.user_id, dict(session.state), events)


async def _service_script(service: Any) -> list[Any]:
    seen: list[Any] = []
    made = await service.create_session(
        app_name=APP, user_id="u1", session_id="s1", state={"k": 0, "user:lang": "pt", "app:v": 1, "temp:t": 1}
    )
    seen.append(_seen(made))
    await service.create_session(app_name=APP, user_id="u1", session_id="s2", state={"other": True})
    await service.create_session(app_name=APP, user_id="u2", session_id="s3")
    for i in range(4):
        delta = {"k": i, "temp:scratch": i} | ({"user:lang": "en"} if i == 2 else {}) | ({"app:v": 2} if i == 3 else {})
        event = Event(
            id=f"e{i}",
            author="user" if i % 2 == 0 else "planner",
            invocation_id="inv-1",
            timestamp=1_700_000_000.0 + i,
            actions=EventActions(state_delta=delta),
            content=types.Content(role="user" if i % 2 == 0 else "model", parts=[types.Part(text=f"t{i}")]),
        )
        await service.append_event(made, event)
        seen.append((dict(made.state), made.last_update_time, dict(event.actions.state_delta)))
    for config in (None, GetSessionConfig(num_recent_events=2), GetSessionConfig(after_timestamp=1_700_000_002.0)):
        got = await service.get_session(app_name=APP, user_id="u1", session_id="s1", config=config)
        seen.append((_seen(got), got.last_update_time))
    for user in ("u1", None):
        listed = await service.list_sessions(app_name=APP, user_id=user)
        seen.append(sorted((x.user_id, x.id, dict(x.state), x.events) for x in listed.sessions))
        seen.append([x.last_update_time for x in listed.sessions if x.id == "s1"])
    seen.append(await service.get_user_state(app_name=APP, user_id="u1"))
    await service.delete_session(app_name=APP, user_id="u1", session_id="s1")
    seen.append(await service.get_session(app_name=APP, user_id="u1", session_id="s1"))
    seen.append(sorted(x.id for x in (await service.list_sessions(app_name=APP, user_id="u1")).sessions))
    return seen


def test_behaves_as_adks_own_session_services(harness: Harness, tmp_path: Any) -> None:
    from google.adk.sessions import DatabaseSessionService, InMemorySessionService

    async def on_database() -> list[Any]:
        database = DatabaseSessionService(f"sqlite+aiosqlite:///{tmp_path / 'adk.db'}")
        try:
            return await _service_script(database)
        finally:
            await database.close()

    in_memory = asyncio.run(_service_script(InMemorySessionService()))
    database = asyncio.run(on_database())
    ours = asyncio.run(_service_script(StoreSessionService(harness.store)))
    assert in_memory == database  # the reference itself is one behaviour
    assert ours == in_memory
    # what the script pins: list_sessions carries each session's own state; times are the events'
    assert ("u1", "s2", {"other": True, "user:lang": "en", "app:v": 2}, []) in ours[8]
    assert ours[9] == [1_700_000_003.0] and ours[5][1] == 1_700_000_003.0


def test_a_redelivered_event_is_stored_once(harness: Harness) -> None:
    """A retried append_event (its answer lost) stores nothing twice, as ADK's in-memory service."""
    service = StoreSessionService(harness.store)

    async def scenario() -> list[str]:
        made = await service.create_session(app_name=APP, user_id="u1", session_id="r1")
        event = Event(id="once", author="user", invocation_id="i", actions=EventActions(state_delta={"n": 1}))
        await service.append_event(made, event)
        stale = await service.get_session(app_name=APP, user_id="u1", session_id="r1")
        assert stale is not None
        await service.append_event(stale, event)  # the same event again
        again = await service.get_session(app_name=APP, user_id="u1", session_id="r1")
        assert again.state == {"n": 1}
        return [e.id for e in again.events]

    assert asyncio.run(scenario()) == ["once"]


# ---------------------------------------------------------------- a turn in one transaction


def test_a_batched_turn_is_written_at_its_final_response(harness: Harness) -> None:
    """A turn is held until its final answer, but an event that changes `user:` or `app:` state, which other
    sessions read, is written at once with those before it (as ADK's own services store it)."""
    service = StoreSessionService(harness.store)  # the default: durability="turn"
    reader = StoreSessionService(harness.twin())  # another process

    def event(i: int, author: str, shared: bool = False, **parts: Any) -> Event:
        part = types.Part(**parts) if parts else types.Part(text=f"t{i}")
        delta: dict[str, Any] = {"step": i, "user:seen": i, "app:calls": i} if shared else {"step": i}
        return Event(
            id=f"b{i}",
            author=author,
            invocation_id="inv",
            timestamp=2_000.0 + i,
            actions=EventActions(state_delta=delta),
            content=types.Content(role="user" if author == "user" else "model", parts=[part]),
        )

    async def scenario() -> None:
        s = await service.create_session(app_name=APP, user_id="u1", session_id="b")
        await service.append_event(s, event(0, "user"))
        call = types.FunctionCall(name="weather", args={"city": "Lisbon"})
        await service.append_event(s, event(1, "planner", function_call=call))
        assert s.state["step"] == 1 and len(s.events) == 2  # applied to the session object at once
        held = await reader.get_session(app_name=APP, user_id="u1", session_id="b")
        assert held is not None and held.events == [] and "step" not in held.state  # not written yet
        await service.append_event(s, event(2, "planner", shared=True, function_call=call))
        mid = await reader.get_session(app_name=APP, user_id="u1", session_id="b")  # written with those before it
        assert mid is not None and [e.id for e in mid.events] == ["b0", "b1", "b2"]
        mine = await reader.create_session(app_name=APP, user_id="u1", session_id="c")  # the user's other session
        theirs = await reader.create_session(app_name=APP, user_id="u2", session_id="d")  # another user's
        assert mine.state == {"user:seen": 2, "app:calls": 2} and theirs.state == {"app:calls": 2}
        await service.append_event(s, event(3, "planner"))  # the final answer: the rest of the turn is written
        done = await reader.get_session(app_name=APP, user_id="u1", session_id="b")
        assert done is not None and [e.id for e in done.events] == ["b0", "b1", "b2", "b3"]
        assert done.state == {"step": 3, "user:seen": 2, "app:calls": 2} and done.last_update_time == 2_003.0

    asyncio.run(scenario())
    assert harness.store.list_messages(named_store_id("u1", "b"), owner="u1").items[-1].role == "planner"


def test_held_events_flush_every_n_on_reads_and_when_the_runner_closes(harness: Harness) -> None:
    service = StoreSessionService(harness.store, flush_every=2)
    reader = StoreSessionService(harness.twin())

    def event(i: int) -> Event:
        return Event(id=f"h{i}", author="user", invocation_id="inv", timestamp=3_000.0 + i)

    async def stored() -> list[str]:
        found = await reader.get_session(app_name=APP, user_id="u1", session_id="h")
        return [e.id for e in found.events] if found else []

    async def scenario() -> None:
        s = await service.create_session(app_name=APP, user_id="u1", session_id="h")
        await service.append_event(s, event(0))
        assert await stored() == []
        await service.append_event(s, event(1))  # two held: written
        assert await stored() == ["h0", "h1"]
        await service.append_event(s, event(2))
        mine = await service.get_session(app_name=APP, user_id="u1", session_id="h")  # reads its own writes
        assert mine is not None and [e.id for e in mine.events] == ["h0", "h1", "h2"]
        await service.append_event(s, event(3))
        runner = Runner(
            app_name=APP, agent=LlmAgent(name="a", model=ScriptedLlm(model="m", replies=[])), session_service=service
        )
        await runner.close()  # ADK's Runner flushes its session service when it closes
        assert await stored() == ["h0", "h1", "h2", "h3"]
        await service.append_event(s, event(4))
        await service.delete_session(app_name=APP, user_id="u1", session_id="h")  # held events go with it
        await service.flush()
        assert await stored() == []

    asyncio.run(scenario())
    for bad in (0, 98, True, 2.0):
        with pytest.raises(InputValidationError):
            StoreSessionService(harness.store, flush_every=bad)  # type: ignore[arg-type]


def test_a_session_takes_the_name_the_user_chose_unless_another_app_has_it(harness: Harness) -> None:
    """A new ADK session is the store session of its own id in the user's namespace; the same id in a second
    app of the user's goes to `adk.<app>.<id>`; a session written before that layout (under
    `adk.<app>.<id>`) is read, appended to and deleted where it is."""

    async def scenario() -> None:
        first, second = StoreSessionService(harness.store), StoreSessionService(harness.store)
        await first.create_session(app_name="travel", user_id="ada", session_id="chat", state={"n": 1})
        await second.create_session(app_name="notes", user_id="ada", session_id="chat", state={"n": 2})
        travel = await first.get_session(app_name="travel", user_id="ada", session_id="chat")
        notes = await second.get_session(app_name="notes", user_id="ada", session_id="chat")
        assert travel is not None and notes is not None and (travel.state, notes.state) == ({"n": 1}, {"n": 2})
        assert harness.store.get_session(named_store_id("ada", "chat")).metadata["adk_app"] == "travel"
        assert harness.store.get_session(session_store_id("notes", "ada", "chat")).metadata["adk_app"] == "notes"
        # as an earlier release wrote it: under adk.<app>.<id>, nothing under the plain id
        old = session_store_id("travel", "ada", "old")
        meta = {"framework": "adk", "adk_app": "travel", "adk_user": "ada", "adk_session": "old"}
        harness.store.create_session("ada", session_id=old, metadata=meta)
        fresh = StoreSessionService(harness.store)
        found = await fresh.get_session(app_name="travel", user_id="ada", session_id="old")
        assert found is not None
        await fresh.append_event(found, Event(author="user", invocation_id="i1"))
        await fresh.flush()  # a turn's events are written when it ends (its final response), or at a flush
        assert len(harness.store.list_messages(old, owner="ada").items) == 1
        assert harness.store.get_session(named_store_id("ada", "old")) is None
        await fresh.delete_session(app_name="travel", user_id="ada", session_id="old")
        assert harness.store.get_session(old) is None

    asyncio.run(scenario())


async def _rewind_script(session_service: Any, artifact_service: Any) -> list[Any]:
    """Three turns (two of them change state and save an artifact), ADK's own `Runner.rewind_async` to
    before the third, and a turn after it: what the session then holds and what the model was shown."""
    model = ScriptedLlm(model="scripted", replies=["Hi Ada.", "Lisbon.", "Hi Bob.", "Porto, then."], seen=[])
    agent = LlmAgent(name="planner", model=model, instruction="Plan trips.", tools=[remember])
    runner = Runner(app_name=APP, agent=agent, session_service=session_service, artifact_service=artifact_service)
    session = await session_service.create_session(app_name=APP, user_id="ada", state={"tier": "gold"})

    async def turn(text: str) -> list[Event]:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return [e async for e in runner.run_async(user_id="ada", session_id=session.id, new_message=message)]

    await turn("I am Ada")
    await turn("Where should I go?")
    third = await turn("I am Bob")
    await runner.rewind_async(user_id="ada", session_id=session.id, rewind_before_invocation_id=third[0].invocation_id)
    rewound = await session_service.get_session(app_name=APP, user_id="ada", session_id=session.id)
    await turn("Where next?")
    after = await session_service.get_session(app_name=APP, user_id="ada", session_id=session.id)
    invocations = list(dict.fromkeys(e.invocation_id for e in after.events))

    def shape(events: list[Event]) -> list[Any]:
        out = []
        for e in events:
            actions = e.actions
            parts = [p.text or (p.function_call and p.function_call.name) or (p.function_response and "result")
                     for p in (e.content.parts if e.content else [])]  # fmt: skip
            rewind = actions.rewind_before_invocation_id
            out.append((
                e.author,
                invocations.index(e.invocation_id),
                parts,
                dict(actions.state_delta),
                dict(actions.artifact_delta),
                invocations.index(rewind) if rewind else None,
            ))  # fmt: skip
        return out

    note = await artifact_service.load_artifact(app_name=APP, user_id="ada", session_id=session.id, filename="note.txt")
    versions = await artifact_service.list_versions(
        app_name=APP, user_id="ada", session_id=session.id, filename="note.txt"
    )
    return [
        shape(rewound.events),
        {k: v for k, v in rewound.state.items() if not k.startswith("app:")},
        shape(after.events),
        {k: v for k, v in after.state.items() if not k.startswith("app:")},
        note.text if note is not None else None,
        versions,
        model.seen[-1],
    ]


def test_adks_rewind_works_as_on_adks_own_services(harness: Harness) -> None:
    """ADK's own `Runner.rewind_async` on this store's services: the events and state after it, and after the
    next turn, and the artifacts, exactly as on ADK's in-memory services (differential)."""
    from google.adk.artifacts import InMemoryArtifactService
    from google.adk.sessions import InMemorySessionService

    reference = asyncio.run(_rewind_script(InMemorySessionService(), InMemoryArtifactService()))
    ours = asyncio.run(_rewind_script(StoreSessionService(harness.store), StoreArtifactService(harness.store)))
    assert ours == reference
    events, state = reference[0], reference[1]
    assert events[-1][0] == "user" and events[-1][5] == 2, "the rewind event, before the third invocation"
    assert state["turns"] == 1, "the session's state as before the third turn"
    assert state["tier"] is None, "ADK undoes what no event set (the state given at create) too: so do we"
    assert "I am Bob" not in reference[6] and "I am Ada" in reference[6], "the model no longer sees the third turn"


def test_a_turn_is_one_write_and_a_new_process_reads_the_session_in_two_requests(
    dyn: Harness, dynamodb_client: Any
) -> None:
    """At the default durability a Runner turn is one transaction (the head and one item for its events when
    the session's state did not change; the state too when it did), and a new service reads the session with
    its state, its events and the app: and user: states (sessions of their own) in 2 requests."""
    assert dyn.requests is not None
    runner, _ = runner_on(dyn.store, ["first", "second"])
    shared = {"app:theme": "dark", "user:name": "Ada", "step": 1}
    asyncio.run(runner.session_service.create_session(app_name=APP, user_id="u", session_id="t", state=shared))
    written: list[int] = []
    event = "provide-client-params.dynamodb.TransactWriteItems"
    dynamodb_client.meta.events.register(event, lambda params, **_: written.append(len(params["TransactItems"])))
    try:
        for text in ("hello", "again"):
            dyn.requests.clear()
            message = types.Content(role="user", parts=[types.Part(text=text)])

            async def turn(message: types.Content = message) -> None:
                async for _ in runner.run_async(user_id="u", session_id="t", new_message=message):
                    pass

            asyncio.run(turn())
            assert dyn.requests.count("TransactWriteItems") == 1
    finally:
        dynamodb_client.meta.events.unregister(event)
    assert written == [2, 2]  # the head and the pack of the turn's two events: no state changed
    dyn.requests.clear()
    fresh = StoreSessionService(dyn.twin())
    found = asyncio.run(fresh.get_session(app_name=APP, user_id="u", session_id="t"))
    assert found is not None and [e.content.parts[0].text for e in found.events if e.content] == [
        "hello",
        "first",
        "again",
        "second",
    ]
    assert found.last_update_time == found.events[-1].timestamp
    assert {k: found.state[k] for k in shared} == shared
    assert dyn.requests.names == ["TransactGetItems", "Query"]


def test_a_durability_the_service_does_not_know_is_refused(dyn: Harness) -> None:
    assert dyn.requests is not None
    dyn.requests.clear()
    for bad in ("per-event", "", None):
        with pytest.raises(InputValidationError, match="durability"):
            StoreSessionService(dyn.store, durability=bad)  # type: ignore[arg-type]
    with pytest.raises(InputValidationError, match="flush_every"):
        StoreSessionService(dyn.store, durability="event", flush_every=4)
    assert dyn.requests.names == []


def test_a_context_callback_adds_what_matters_to_each_calls_instructions(harness: Harness) -> None:
    """`LlmAgent(before_model_callback=context_callback(store))`: the model's instructions carry the old message
    that matters to the question; the session keeps every event."""
    from store.integrations.adk_context import context_callback

    seen: list[str] = []

    class Instructed(ScriptedLlm):
        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> Any:
            seen.append(str(llm_request.config.system_instruction))
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    model = Instructed(model="scripted", replies=[f"ok {i}" for i in range(20)], seen=[])
    agent = LlmAgent(
        name="planner",
        model=model,
        instruction="Plan trips.",
        before_model_callback=context_callback(harness.store, 300),
    )
    runner = Runner(app_name=APP, agent=agent, session_service=StoreSessionService(harness.store))
    asyncio.run(runner.session_service.create_session(app_name=APP, user_id="ada", session_id="trip"))
    run(runner, "ada", "trip", "My daughter Mia is allergic to peanuts.")
    for i in range(12):
        run(runner, "ada", "trip", f"Unrelated note number {i} about the weather.")
    harness.operator().index_messages(named_store_id("ada", "trip"))  # what the stack's cascade does
    run(runner, "ada", "trip", "Which restaurant suits Mia's peanut allergy?")
    assert "Plan trips." in seen[-1] and "My daughter Mia is allergic to peanuts." in seen[-1]
    assert "allergic" not in seen[0]  # a new session: nothing before its first turn
    session = asyncio.run(runner.session_service.get_session(app_name=APP, user_id="ada", session_id="trip"))
    assert session is not None and len(session.events) == 28
