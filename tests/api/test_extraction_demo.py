"""Issue 48's "done when", on the local stack: with a model configured (`EXTRACTION_MODEL=demo`, the stand-in
endpoint of infra/local/demo_model.py, asked through the OpenAI-compatible client) and the stack's extraction
function fed by its stream, a Strands, an ADK and a LangGraph conversation, each written by its framework
through the store's session adapter, produce fact and preference memories in their owner's namespaces with no
agent code calling the memory API; a later turn that contradicts a fact supersedes it (the old text in its
history); the CLI shows the same."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest

from infra.local.stack import LocalStack, local_stack
from store import SessionStore


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EXTRACTION_MODEL", "demo")
        env.setenv("EXTRACTION_EVERY", "2")
        with local_stack(port=0, aws_port=0, prefix="x48") as running:
            yield running


def library(stack: LocalStack) -> SessionStore:
    """What an agent's own Lambda holds: the library on the stack's tables (no memory call is made with it)."""
    made: SessionStore = stack.tables.store(stack.dynamodb, stack.s3)
    return made


def memories_of(store: SessionStore, owner: str, namespace: tuple[str, ...], wanted: int) -> list[Any]:
    """The owner's memories under `namespace` once `wanted` are there (the stream function runs each second)."""
    deadline = time.monotonic() + 30
    while True:
        found = store.search_memories(owner, namespace, limit=100).items
        if len(found) >= wanted or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_a_strands_conversation_becomes_memories(stack: LocalStack) -> None:
    from strands import Agent

    from store.integrations.strands import session_manager
    from tests.integrations.test_framework_memory import StrandsScripted

    store = library(stack)
    agent = Agent(
        model=StrandsScripted(),
        session_manager=session_manager("trip", store, owner="ada"),
        callback_handler=None,
    )
    agent("I prefer aisle seats. My sister lives in Oslo.")
    facts = memories_of(store, "ada", ("facts",), 1)
    prefs = memories_of(store, "ada", ("preferences",), 1)
    assert [f.value["text"] for f in facts] == ["The user's sister lives in Oslo."]
    assert [p.value["text"] for p in prefs] == ["The user prefers aisle seats."]
    assert facts[0].value["source"]["strategy"] == "facts" and facts[0].value["source"]["model"] == "demo-rules"


def test_an_adk_conversation_becomes_memories(stack: LocalStack) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.runners import Runner
    from google.genai import types

    from store.integrations.adk import StoreSessionService
    from tests.integrations.test_framework_memory import AdkModel

    store = library(stack)
    runner = Runner(
        app_name="planner",
        agent=LlmAgent(name="assistant", model=AdkModel(model="scripted", seen=[])),
        session_service=StoreSessionService(store),
    )

    async def scenario() -> None:
        session = await runner.session_service.create_session(app_name="planner", user_id="bea")
        message = types.Content(role="user", parts=[types.Part(text="I am vegetarian. I love early meetings.")])
        async for _ in runner.run_async(user_id="bea", session_id=session.id, new_message=message):
            pass

    asyncio.run(scenario())
    assert [f.value["text"] for f in memories_of(store, "bea", ("facts",), 1)] == ["The user is vegetarian."]
    assert [p.value["text"] for p in memories_of(store, "bea", ("preferences",), 1)] == [
        "The user loves early meetings."
    ]


def test_a_langgraph_thread_becomes_memories_and_a_contradiction_supersedes_a_fact(stack: LocalStack) -> None:
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages

    from store.integrations.langgraph import SessionStoreSaver
    from store.tools.cli import main

    store = library(stack)

    def reply(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(content="Noted.")]}

    builder: Any = StateGraph(TypedDict("S", {"messages": Annotated[list[AnyMessage], add_messages]}))  # type: ignore[operator]
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    graph = builder.compile(checkpointer=SessionStoreSaver(store, owner="cy"))
    config: Any = {"configurable": {"thread_id": "home"}}
    graph.invoke({"messages": [HumanMessage("I live in Porto.")]}, config)
    (porto,) = memories_of(store, "cy", ("facts",), 1)
    assert porto.value["text"] == "The user lives in Porto."
    graph.invoke({"messages": [HumanMessage("I live in Lisbon now.")]}, config)
    deadline = time.monotonic() + 30
    while (now := store.get_memory("cy", ("facts",), porto.key)) and not now.value["history"]:
        assert time.monotonic() < deadline, "the contradiction was not consolidated"
        time.sleep(0.5)
    assert now is not None and now.value["text"] == "The user lives in Lisbon now."
    assert (
        now.value["history"][0]["text"] == "The user lives in Porto."
        and now.value["history"][0]["change"] == "supersede"
    )
    assert len(store.search_memories("cy", ("facts",)).items) == 1
    out = io.StringIO()
    assert main(["memories", "show", "facts", porto.key, "--owner", "cy"], store=store, out=out) == 0
    shown = out.getvalue()
    assert "The user lives in Lisbon now." in shown and "was (supersede" in shown and "Porto" in shown
