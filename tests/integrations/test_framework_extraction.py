"""Memory that writes itself, through each framework's own interface (issue 48): a Strands MemoryManager's
server-side extraction (`add_messages`), ADK's `add_session_to_memory`, a LangGraph thread and an OpenAI Agents
session each become facts in their owner's memories, with no agent code calling the memory API (the
stack's stream trigger is tests/api/test_extraction_function.py's). The model answers from a script (the
caller's function); its prompt shows that the framework's conversation reached it as canonical turns."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from strands.memory.extraction.triggers import InvocationTrigger
from strands.memory.extraction.types import ExtractionConfig
from strands.memory.memory_manager import MemoryManager
from strands.memory.types import AddMessagesContext

from store import SessionStore, Settings
from store.integrations.strands_memory import StoreMemory
from tests.extraction_support import Scripted, memories
from tests.integrations.test_strands_memory import fire


def _store(model: Scripted) -> SessionStore:
    return SessionStore.memory(Settings(extraction_model=model))


def test_strands_server_side_extraction_writes_facts_its_search_finds_and_a_retry_writes_nothing() -> None:
    model = Scripted({"record_facts": [memories("The user is allergic to peanuts."), memories("The user is vegan.")]})
    store = _store(model)
    memory = StoreMemory(
        store, owner="ada", name="notes", extraction=ExtractionConfig(trigger=InvocationTrigger()), strategies=["facts"]
    )
    said = [
        {"role": "user", "content": [{"text": "I am allergic to peanuts"}]},
        {"role": "assistant", "content": [{"text": "Noted: no peanuts."}]},
    ]

    async def scenario() -> None:
        manager = MemoryManager(stores=[memory])
        await fire(manager, *said)
        found = await manager.search("peanuts")
        assert [e.content for e in found] == ["The user is allergic to peanuts."]
        vegan = [{"role": "user", "content": [{"text": "Also, I'm vegan now."}]}]
        first = await memory.add_messages(vegan, AddMessagesContext(sequence_numbers=[4]))
        again = await memory.add_messages(vegan, AddMessagesContext(sequence_numbers=[4]))  # a retried batch
        assert [r.id for r in again] == [r.id for r in first] and len(first) == 1  # found done: no model call

    asyncio.run(scenario())
    assert len(model.asked) == 2 and "user: I am allergic to peanuts" in model.asked[0].prompt
    facts = store.search_memories("ada", ("strands", "notes")).items
    assert {f.namespace for f in facts} == {("strands", "notes", "facts")} and len(facts) == 2


def test_adk_add_session_to_memory_generates_memories_as_memory_bank_does() -> None:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session
    from google.genai import types

    from store.integrations.adk_memory import StoreMemoryService

    model = Scripted(
        {
            "record_facts": [memories("The user's daughter is called Ana.")],
            "record_preferences": [memories("The user prefers morning meetings.")],
        }
    )
    store = _store(model)
    service = StoreMemoryService(store)

    def event(author: str, text: str) -> Event:
        return Event(
            author=author,
            content=types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)]),
        )

    session = Session(
        id="s1",
        app_name="planner",
        user_id="ada",
        events=[event("user", "My daughter Ana starts school. Mornings suit me best."), event("planner", "Noted.")],
    )

    async def scenario() -> None:
        await service.add_session_to_memory(session)
        await service.add_session_to_memory(session)  # again: its window is done
        found = await service.search_memory(app_name="planner", user_id="ada", query="daughter Ana")
        assert [m.content.parts[0].text for m in found.memories if m.content.parts] == [
            "The user's daughter is called Ana."
        ]

    asyncio.run(scenario())
    assert model.names() == ["record_facts", "record_preferences"]
    assert "[1] user: My daughter Ana" in model.asked[0].prompt and "[2] assistant: Noted." in model.asked[0].prompt
    namespaces = sorted(h.namespace for h in store.search_memories("ada", ("adk", "planner")).items)
    assert namespaces == [("adk", "planner", "facts"), ("adk", "planner", "preferences")]


def test_a_langgraph_thread_and_an_openai_agents_session_are_extracted_from_their_own_sessions() -> None:
    from store.integrations.langgraph import SessionStoreSaver
    from store.integrations.openai_agents import OpenAIAgentsSession

    model = Scripted({"record_facts": [memories("The user lives in Porto."), memories("The user drives a blue van.")]})
    store = _store(model)
    saver = SessionStoreSaver(store, owner="ada")

    def step(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(content="Got it.")]}

    builder: Any = StateGraph(TypedDict("S", {"messages": Annotated[list[AnyMessage], add_messages]}))  # type: ignore[operator]
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"messages": [HumanMessage("I live in Porto.")]}, {"configurable": {"thread_id": "t1"}})
    (run,) = saver.extract_memories("t1", strategies=["facts"])
    assert run.status == "succeeded" and "user: I live in Porto." in model.asked[0].prompt
    assert "assistant: Got it." in model.asked[0].prompt

    session = OpenAIAgentsSession("chat-1", store, owner="ada")

    async def scenario() -> Any:
        await session.add_items([{"role": "user", "content": "I drive a blue van."}])
        return await session.extract_memories(strategies=["facts"])

    (run,) = asyncio.run(scenario())
    assert run.status == "succeeded", (run.error, model.names(), [r.prompt for r in model.asked])
    assert "user: I drive a blue van." in model.asked[1].prompt
    texts = sorted(h.value["text"] for h in store.search_memories("ada", ("facts",)).items)
    assert texts == ["The user drives a blue van.", "The user lives in Porto."]
