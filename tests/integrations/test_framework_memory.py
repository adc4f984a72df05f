"""Long-term memory behind each framework's own memory interface, driven by that framework with a scripted
model: an agent keeps a fact in one session and recalls it in a new session, by meaning (wordllama), on the
memory backend and on DynamoDB. The facts and questions are also the measurements behind
`store.integrations.memory_search.THRESHOLD`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from agents import Agent as OpenAIAgent
from agents import ModelResponse, Runner, Usage
from agents.models.interface import Model
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner as AdkRunner
from google.adk.tools.preload_memory_tool import preload_memory_tool as preload_memory
from google.genai import types
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from strands import Agent as StrandsAgent
from strands.memory import MemoryManager

from bench.strands_models import ScriptModel
from store import SessionStore
from store.integrations.adk import StoreSessionService
from store.integrations.adk_memory import StoreMemoryService
from store.integrations.openai_memory import memory_tools
from store.integrations.strands_memory import StoreMemory

FACTS = [
    "I prefer a window seat on long flights",
    "I am vegetarian and allergic to mushrooms",
    "My daughter's name is Ana",
]


# ---------------------------------------------------------------- Google ADK


class AdkModel(BaseLlm):
    """Answers "ok" and keeps what each request carries, as text (`preload_memory` adds memories to it)."""

    seen: list[str] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        texts = [p.text for c in llm_request.contents for p in (c.parts or []) if p.text]
        self.seen.append("\n".join([str(llm_request.config.system_instruction or ""), *texts]))
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))


def test_an_adk_agent_recalls_in_a_new_session_what_an_earlier_one_was_told(remembering_store: SessionStore) -> None:
    model = AdkModel(model="scripted", seen=[])
    agent = LlmAgent(name="assistant", model=model, instruction="Help the user.", tools=[preload_memory])
    memory = StoreMemoryService(remembering_store)
    runner = AdkRunner(
        app_name="travel", agent=agent, session_service=StoreSessionService(remembering_store), memory_service=memory
    )

    async def say(session_id: str, text: str, user: str = "ada") -> None:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id=user, session_id=session_id, new_message=message):
            pass

    async def scenario() -> None:
        first = await runner.session_service.create_session(app_name="travel", user_id="ada")
        for fact in FACTS:
            await say(first.id, fact)
        done = await runner.session_service.get_session(app_name="travel", user_id="ada", session_id=first.id)
        assert done is not None
        await memory.add_session_to_memory(done)
        await memory.add_session_to_memory(done)  # again: nothing twice
        later = await runner.session_service.create_session(app_name="travel", user_id="ada")
        await say(later.id, "where do I like to sit on a plane?")
        bob = await runner.session_service.create_session(app_name="travel", user_id="bob")
        await say(bob.id, "where do I like to sit on a plane?", user="bob")

    asyncio.run(scenario())
    recalled = model.seen[-2]
    assert "window seat" in recalled and "mushrooms" not in recalled  # only what matches, by meaning
    assert "window seat" not in model.seen[-1]  # bob's agent finds nothing of ada's
    found = asyncio.run(memory.search_memory(app_name="travel", user_id="ada", query="what can't I eat?"))
    said = [m.content.parts[0].text for m in found.memories if m.content.parts]
    assert said[0] == FACTS[1] and not {FACTS[0], FACTS[2]} & set(said)  # the answer first, no other fact
    assert len(remembering_store.search_memories("ada", ("adk", "travel"), limit=100).items) == 2 * len(FACTS)


# ---------------------------------------------------------------- Strands


class StrandsScripted(ScriptModel):
    """Calls `add_memory` with the fact in a user's "remember:" turn; otherwise answers "ok". Keeps what it
    was given (messages and system prompt) each call."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.calls = 0

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        self.seen.append(json.dumps(messages, default=str) + str(system_prompt))
        last = messages[-1]
        text = "".join(block.get("text", "") for block in last["content"])
        self.calls += 1
        if last["role"] == "user" and text.startswith("remember:"):
            fact = text.removeprefix("remember:").strip()
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"t{self.calls}", "name": "add_memory"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"entries": [fact]})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": "ok"}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def strands_agent(store: SessionStore, owner: str, *, adds: bool = False) -> tuple[Any, StrandsScripted]:
    """A Strands agent with `owner`'s memories (their add tool too when `adds`), and its scripted model."""
    model = StrandsScripted()
    tools: dict[str, Any] = {"add_tool_config": True} if adds else {}
    manager = MemoryManager(stores=[StoreMemory(store, owner=owner)], **tools)
    return StrandsAgent(model=model, memory_manager=manager, callback_handler=None), model


def test_a_strands_agent_remembers_with_its_add_tool_and_a_new_agent_is_given_it(
    remembering_store: SessionStore,
) -> None:
    first, _ = strands_agent(remembering_store, "ada", adds=True)
    for fact in FACTS:
        first(f"remember: {fact}")
    assert len(remembering_store.search_memories("ada", ("strands", "agent-store"), limit=100).items) == len(FACTS)
    later, later_model = strands_agent(remembering_store, "ada")
    later("where do I like to sit on a plane?")
    assert "window seat" in later_model.seen[0] and "mushrooms" not in later_model.seen[0]
    stranger, stranger_model = strands_agent(remembering_store, "bob")
    stranger("where do I like to sit on a plane?")
    assert "window seat" not in stranger_model.seen[0]


# ---------------------------------------------------------------- OpenAI Agents SDK


class OpenAIScripted(Model):
    """Calls the scripted tool first, then answers with what the tool returned."""

    def __init__(self, tool: str, arguments: dict[str, str]) -> None:
        self.tool, self.arguments = tool, arguments
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        outputs = [i for i in (input if isinstance(input, list) else []) if i.get("type") == "function_call_output"]
        if not outputs:
            call = ResponseFunctionToolCall(
                type="function_call", call_id="c1", name=self.tool, arguments=json.dumps(self.arguments)
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(type="output_text", text=str(outputs[-1]["output"]), annotations=[])
        message = ResponseOutputMessage(id="m1", type="message", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


def test_an_openai_agent_remembers_and_recalls_with_its_tools(remembering_store: SessionStore) -> None:
    tools = memory_tools(remembering_store, owner="ada")
    for fact in FACTS:
        teller = OpenAIAgent(name="assistant", model=OpenAIScripted("remember", {"fact": fact}), tools=tools)
        assert asyncio.run(Runner.run(teller, f"please remember: {fact}")).final_output == "remembered"
    asker = OpenAIAgent(
        name="assistant", model=OpenAIScripted("recall", {"query": "where do I like to sit on a plane?"}), tools=tools
    )
    answer = asyncio.run(Runner.run(asker, "where do I like to sit?")).final_output
    assert answer.splitlines()[0] == FACTS[0]
    other = memory_tools(remembering_store, owner="bob")
    stranger = OpenAIAgent(name="assistant", model=OpenAIScripted("recall", {"query": "window seat"}), tools=other)
    assert asyncio.run(Runner.run(stranger, "where do I sit?")).final_output == "nothing remembered about that"


# ---------------------------------------------------------------- ADK's memory service, by its own semantics


def test_adks_memory_service_keeps_each_event_with_text_once(memories_store: SessionStore) -> None:
    """What ADK's own tests read from InMemoryMemoryService's private lists, through search_memory (the
    differences in test_frameworks_own_tests.py): events without text are left out, an event added again is
    stored once, later events are added beside the earlier ones, a session without events adds nothing, and
    events come in without a session id too; equal scores keep the order they were added in."""
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

    def said(event_id: str, text: str | None, at: float) -> Event:
        content = types.Content(parts=[types.Part(text=text)]) if text is not None else None
        return Event(id=event_id, invocation_id="inv", author="user", timestamp=at, content=content)

    memory = StoreMemoryService(memories_store)

    async def texts(query: str) -> list[str]:
        found = await memory.search_memory(app_name="app", user_id="ada", query=query)
        return [m.content.parts[0].text or "" for m in found.memories if m.content.parts]

    async def scenario() -> None:
        events = [said("e1", "The ADK is a great toolkit.", 1), said("e2", None, 2), said("e3", "ADK rocks!", 3)]
        session = Session(app_name="app", user_id="ada", id="s1", last_update_time=3, events=events)
        await memory.add_session_to_memory(session)
        await memory.add_session_to_memory(Session(app_name="app", user_id="ada", id="s2", last_update_time=4))
        assert await texts("ADK") == ["The ADK is a great toolkit.", "ADK rocks!"]  # a tie: the order added
        again = [said("e1", "The ADK is a great toolkit, again.", 5), said("e4", "A new ADK fact.", 6)]
        await memory.add_events_to_memory(app_name="app", user_id="ada", events=again, session_id="s1")
        await memory.add_events_to_memory(app_name="app", user_id="ada", events=[said("e5", "No session, ADK.", 7)])
        assert len(await texts("ADK")) == 4
        assert await texts("new fact") == ["A new ADK fact."]

    asyncio.run(scenario())
    assert len(memories_store.search_memories("ada", ("adk", "app"), limit=100).items) == 4
