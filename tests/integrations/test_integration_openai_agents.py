"""The OpenAI Agents SDK adapter, driven by the SDK's own Runner with a scripted model (every backend)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, Runner, Usage, set_tracing_disabled
from agents.memory import Session, SessionSettings
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from store import AsyncSessionStore, SessionStore
from store.core.scoped_ids import scoped_id
from store.integrations.openai_agents import OpenAIAgentsSession
from tests.conftest import Harness

set_tracing_disabled(True)


class ScriptedModel(Model):
    """Answers with the next scripted reply and records the input it was given."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.inputs: list[list[Any]] = []
        self.instructions: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(list(input) if isinstance(input, list) else [input])
        self.instructions.append(system_instructions)
        text = ResponseOutputText(type="output_text", text=self.replies.pop(0), annotations=[])
        message = ResponseOutputMessage(
            id=f"msg_{len(self.inputs)}", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def said(items: list[Any]) -> list[tuple[str, str]]:
    """(role, text) of the message items."""
    out = []
    for item in items:
        content = item.get("content")
        text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
        out.append((item["role"], text))
    return out


def test_runner_keeps_the_history_across_runs(harness: Harness) -> None:
    model = ScriptedModel(["Hello Ada.", "Your name is Ada."])
    agent = Agent(name="assistant", instructions="Be brief.", model=model)
    first = OpenAIAgentsSession("chat-1", harness.store, owner="ada")
    assert isinstance(first, Session)  # the SDK's runtime-checkable protocol

    asyncio.run(Runner.run(agent, "Hi, I am Ada.", session=first))
    # a new process: another store object and another session object with the same id
    second = OpenAIAgentsSession("chat-1", harness.twin(), owner="ada")
    result = asyncio.run(Runner.run(agent, "What is my name?", session=second))

    assert result.final_output == "Your name is Ada."
    assert said(model.inputs[1]) == [
        ("user", "Hi, I am Ada."),
        ("assistant", "Hello Ada."),
        ("user", "What is my name?"),
    ]
    stored = asyncio.run(second.get_items())
    assert said(stored) == [*said(model.inputs[1]), ("assistant", "Your name is Ada.")]
    # one store message per item, in the owner's session
    records = harness.store.list_messages(scoped_id("ada", "chat-1"), owner="ada").items
    assert [r.role for r in records] == ["user", "assistant", "user", "assistant"]
    assert harness.store.get_session(first.store_session_id).owner == "ada"


def test_session_protocol_operations(harness: Harness) -> None:
    session = OpenAIAgentsSession("s-2", harness.store, owner="bob", session_settings={"limit": 2})

    async def scenario() -> None:
        assert await session.get_items() == []
        assert await session.pop_item() is None
        items = [
            {"role": "user", "content": "one"},
            {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": 1}'},
            {"type": "function_call_output", "call_id": "c1", "output": "found"},
            {"role": "assistant", "content": "three"},
        ]
        await session.add_items(items)
        # the settings' limit (2): exactly the latest 2, the function call's output first (the SDK prunes it)
        assert await session.get_items() == items[-2:]
        assert await session.get_items(limit=1) == items[-1:]
        assert await session.get_items(limit=3) == items[-3:]
        assert await session.get_items(limit=-1) == items
        assert await session.get_items(limit=0) == []
        assert await session.pop_item() == items[-1]
        assert await session.pop_item() == items[-2]
        assert await session.get_items(limit=10) == items[:2]
        await session.clear_session()
        assert await session.get_items(limit=10) == []
        await session.add_items([{"role": "user", "content": "again"}])
        assert await session.get_items(limit=10) == [{"role": "user", "content": "again"}]

    asyncio.run(scenario())
    roles = [r.role for r in harness.store.list_messages(session.store_session_id).items]
    assert roles == ["user"]


def test_items_beyond_one_transaction_and_other_owners(harness: Harness) -> None:
    session = OpenAIAgentsSession("s-3", harness.store, owner="carol")
    items = [{"role": "user", "content": f"m{i}"} for i in range(250)]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == items
    # another owner's "s-3" is another session: it neither sees carol's items nor is blocked by them
    other = OpenAIAgentsSession("s-3", harness.store, owner="mallory")
    assert asyncio.run(other.get_items()) == []
    assert asyncio.run(other.pop_item()) is None
    asyncio.run(other.add_items([{"role": "user", "content": "mallory's own"}]))
    assert asyncio.run(other.get_items()) == [{"role": "user", "content": "mallory's own"}]
    assert other.store_session_id != session.store_session_id
    assert len(asyncio.run(session.get_items())) == 250


def test_concurrent_pops_through_the_sdk_session() -> None:
    store = SessionStore.memory()
    session = OpenAIAgentsSession("s-4", store)
    asyncio.run(session.add_items([{"role": "user", "content": str(i)} for i in range(20)]))

    async def pops() -> list[Any]:
        return list(await asyncio.gather(*(session.pop_item() for _ in range(25))))

    popped = [p["content"] for p in asyncio.run(pops()) if p is not None]
    assert sorted(popped, key=int) == [str(i) for i in range(20)]


def test_with_an_async_store() -> None:
    async def scenario() -> list[Any]:
        store = AsyncSessionStore.memory()
        session = OpenAIAgentsSession("s-5", store, session_settings=SessionSettings(limit=1))
        await session.add_items([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
        assert await session.pop_item() == {"role": "assistant", "content": "b"}
        return await session.get_items()

    assert asyncio.run(scenario()) == [{"role": "user", "content": "a"}]


# ---------------------------------------------------------------- against the SDK's own SQLiteSession


async def _protocol_script(session: Any) -> list[Any]:
    """Every Session operation in the order the SDK's tests use them, with what each returned."""
    seen: list[Any] = [await session.get_items(), await session.pop_item()]
    await session.add_items([])
    seen.append(await session.get_items())
    tool_call = {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city": "Lisbon"}'}
    output = {"type": "function_call_output", "call_id": "c1", "output": "sunny"}
    await session.add_items([{"role": "user", "content": "hi"}, tool_call, output])
    await session.add_items([{"role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]}])
    for limit in (None, 0, 2, 10, -1):
        seen.append(await session.get_items(limit))
    seen += [await session.pop_item(), await session.get_items()]
    await session.clear_session()
    await session.clear_session()  # clearing an empty session is not an error
    seen += [await session.get_items(), await session.pop_item()]
    await session.add_items([{"role": "user", "content": "again"}])
    seen.append(await session.get_items())
    return seen


def test_behaves_as_the_sdks_sqlite_session(harness: Harness) -> None:
    from agents import SQLiteSession

    reference = asyncio.run(_protocol_script(SQLiteSession("s1")))
    ours = asyncio.run(_protocol_script(OpenAIAgentsSession("s1", harness.store)))
    assert ours == reference  # get_items(2) starts at the function call's output in both: exactly 2 items
    assert [i.get("type") for i in reference[5]] == ["function_call_output", None]
    assert len(reference) == 13 and reference[-1] == [{"role": "user", "content": "again"}]


def test_session_settings_as_the_sdks_sessions(harness: Harness) -> None:
    from agents import SQLiteSession

    for made in (OpenAIAgentsSession("s2", harness.store), SQLiteSession("s2")):
        assert made.session_settings == SessionSettings()
    limited = OpenAIAgentsSession("s2", harness.store, session_settings={"limit": 2})
    assert limited.session_settings == SessionSettings(limit=2)
    asyncio.run(limited.add_items([{"role": "user", "content": str(i)} for i in range(4)]))
    assert [i["content"] for i in asyncio.run(limited.get_items())] == ["2", "3"]
    assert len(asyncio.run(limited.get_items(3))) == 3  # an explicit limit wins
    for bad in ({"limit": 2, "max_items": 5}, {"limtit": 2}):
        with pytest.raises(TypeError, match="Unknown session settings"):
            OpenAIAgentsSession("s2", harness.store, session_settings=bad)
        with pytest.raises(TypeError, match="Unknown session settings"):
            SQLiteSession("s2", session_settings=bad)


def test_a_cancelled_caller_does_not_cut_a_write_off(harness: Harness) -> None:
    """As in the SDK's sessions: add_items completes, then the cancellation is raised."""
    session = OpenAIAgentsSession("s3", harness.store)

    async def cancel_mid_write() -> None:
        task = asyncio.create_task(session.add_items([{"role": "user", "content": "kept"}]))
        await asyncio.sleep(0)  # the write has started (in its worker thread)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_mid_write())
    assert asyncio.run(session.get_items()) == [{"role": "user", "content": "kept"}]


@pytest.mark.parametrize("runner_method", ["run", "run_sync"])
def test_a_limited_history_starting_at_a_tool_output_reaches_the_model_as_with_sqlite_session(
    harness: Harness, runner_method: str
) -> None:
    """`get_items(limit=N)` is exactly the latest N items, as `SQLiteSession`'s: a window that starts at a
    function call's output is the SDK's to prune (it drops the orphan), and the model sees the same input."""
    from agents import RunConfig, SQLiteSession

    history = [
        {"role": "user", "content": "Weather in Lisbon?"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city": "Lisbon"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]},
    ]

    def model_input(session: Any) -> list[Any]:
        asyncio.run(session.add_items(history))
        assert asyncio.run(session.get_items(2))[0]["type"] == "function_call_output"
        model = ScriptedModel(["Again sunny."])
        agent = Agent(name="assistant", model=model)
        config = RunConfig(session_settings=SessionSettings(limit=2))
        if runner_method == "run":
            asyncio.run(Runner.run(agent, "And tomorrow?", session=session, run_config=config))
        else:
            Runner.run_sync(agent, "And tomorrow?", session=session, run_config=config)
        return model.inputs[0]

    reference = model_input(SQLiteSession("limit"))
    ours = model_input(OpenAIAgentsSession("limit", harness.store))
    assert ours == reference
    assert not any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in ours)


async def _branch_script(session: Any, agent: Agent[Any]) -> list[Any]:
    """Three turns under the SDK's Runner, a branch from the second turn with a turn of its own, a switch
    back to main and to the branch again, and the branch deleted: what the session shows at each step."""
    seen: list[Any] = []
    for text in ("Hi, I am Ada.", "Plan Lisbon.", "Plan Porto."):
        await Runner.run(agent, text, session=session)
    turns = await session.get_conversation_turns()
    seen.append([(t["turn"], t["content"], t["can_branch"]) for t in turns])
    name = await session.create_branch_from_turn(2, "rethink")
    seen.append(name)
    seen.append(said(await session.get_items()))
    await Runner.run(agent, "Plan Madrid.", session=session)
    seen.append(said(await session.get_items()))
    branches = await session.list_branches()
    seen.append(sorted((b["branch_id"], b["message_count"], b["user_turns"], b["is_current"]) for b in branches))
    await session.switch_to_branch("main")
    seen.append(said(await session.get_items()))
    await session.switch_to_branch("rethink")
    seen.append(said(await session.get_items(limit=2)))
    refusals: list[Awaitable[Any]] = [
        session.create_branch_from_turn(9),
        session.switch_to_branch("nowhere"),
        session.create_branch_from_turn(1, "rethink"),
    ]
    for refused in refusals:
        try:
            await refused
            seen.append("no error")
        except ValueError:
            seen.append("ValueError")
    await session.delete_branch("rethink", force=True)
    seen.append(said(await session.get_items()))
    seen.append([b["branch_id"] for b in await session.list_branches()])
    return seen


def test_branches_from_a_turn_as_the_sdks_advanced_session(harness: Harness, tmp_path: Any) -> None:
    """`create_branch_from_turn`, `switch_to_branch`, `list_branches`, `delete_branch` on the store, under the
    SDK's Runner, against the SDK's own `AdvancedSQLiteSession` (differential)."""
    from agents.extensions.memory import AdvancedSQLiteSession

    def agent() -> Agent[Any]:
        replies = ["Hello Ada.", "Lisbon it is.", "Porto it is.", "Madrid it is."]
        return Agent(name="assistant", instructions="Be brief.", model=ScriptedModel(replies))

    reference = AdvancedSQLiteSession(session_id="trip", db_path=str(tmp_path / "sdk.db"), create_tables=True)
    try:
        theirs = asyncio.run(_branch_script(reference, agent()))
    finally:
        reference.close()
    ours = asyncio.run(_branch_script(OpenAIAgentsSession("trip", harness.store, owner="ada"), agent()))
    assert ours == theirs
    assert theirs[2] == [("user", "Hi, I am Ada."), ("assistant", "Hello Ada.")], "before the second turn"
    assert theirs[4] == [("main", 6, 3, False), ("rethink", 4, 2, True)] and theirs[5][-1] == (
        "assistant",
        "Porto it is.",
    )
    stored = harness.store.list_branches(scoped_id("ada", "trip"), owner="ada")
    assert [b.id for b in stored] == [], "the deleted branch is gone from the store too"


def test_the_context_filter_hands_the_model_what_matters_within_the_budget(harness: Harness) -> None:
    """`RunConfig(call_model_input_filter=session.context_filter(...))`: the model's instructions carry the old
    message that matters to the new input, its input the recent items that fit and the input; not the whole
    history. The session keeps every item, and nothing of the context."""
    from agents import RunConfig

    session: Any = OpenAIAgentsSession("long", harness.store, owner="ada")
    items: list[Any] = [{"role": "user", "content": "My daughter Mia is allergic to peanuts."}]
    items += [{"role": "user", "content": f"Unrelated note number {i} about the weather."} for i in range(60)]
    asyncio.run(session.add_items(items))
    harness.operator().index_messages(session.store_session_id)  # what the stack's cascade does
    model = ScriptedModel(["The Lotus has a peanut-free kitchen."])
    agent = Agent(name="assistant", instructions="Be brief.", model=model)
    config = RunConfig(call_model_input_filter=session.context_filter(300))
    asyncio.run(Runner.run(agent, "Which restaurant suits Mia's peanut allergy?", session=session, run_config=config))
    assert model.instructions[0].startswith("Be brief.\n\nEarlier in this conversation:\nuser: My daughter Mia")
    seen = said(model.inputs[0])
    assert seen[-1] == ("user", "Which restaurant suits Mia's peanut allergy?")
    assert 2 < len(seen) < 40 and ("user", "Unrelated note number 59 about the weather.") in seen
    assert ("user", "My daughter Mia is allergic to peanuts.") not in seen  # in the instructions, once
    stored = said(asyncio.run(session.get_items()))
    assert len(stored) == 63 and stored[-1] == ("assistant", "The Lotus has a peanut-free kitchen.")
