"""LangGraph's prebuilt agent with `pre_model_hook=context_hook(saver)`: the model sees the thread's context (the
old message that matters to the question, the recent messages that fit, the turn's own), the graph's state
keeps every message. On the memory backend (sync and async fronts) and on DynamoDB with its message index; a
scripted chat model records what it was given."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from store import AsyncSessionStore
from store.integrations.langgraph import SessionStoreSaver
from store.integrations.langgraph_context import context_hook
from tests.conftest import FakeClock, make_harness


class Recording(GenericFakeChatModel):
    """Answers "ok" and keeps each list of messages it was given."""

    seen: list[list[BaseMessage]] = []

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@pytest.fixture(params=["memory", "async-memory", "dynamodb"])
def store(request: pytest.FixtureRequest, clock: FakeClock) -> Any:
    if request.param == "async-memory":
        return AsyncSessionStore.memory()
    if request.param == "memory":
        return make_harness("memory", clock).store
    client, s3 = request.getfixturevalue("dynamodb_client"), request.getfixturevalue("s3_client")
    return make_harness("dynamodb", clock, client, request.getfixturevalue("inspector_client"), s3).store


def test_a_context_hook_hands_the_model_the_threads_context_and_the_state_keeps_everything(store: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's move to langchain.agents
        from langgraph.prebuilt import create_react_agent

    saver = SessionStoreSaver(store, owner="ada")
    model = Recording(messages=iter([AIMessage(content=f"ok {i}") for i in range(40)]), seen=[])
    agent = create_react_agent(model, [], checkpointer=saver, pre_model_hook=context_hook(saver, 300))
    config: Any = {"configurable": {"thread_id": "trip"}}
    agent.invoke({"messages": [("user", "My daughter Mia is allergic to peanuts.")]}, config)
    for i in range(25):
        agent.invoke({"messages": [("user", f"Unrelated note number {i} about the weather.")]}, config)
    if not isinstance(store, AsyncSessionStore):  # the memory backends index in-process
        store.index_messages(saver.thread_session_id("trip"))  # what the stack's cascade does
    agent.invoke({"messages": [("user", "Which restaurant suits Mia's peanut allergy?")]}, config)
    seen = model.seen[-1]
    assert isinstance(seen[0], SystemMessage) and "user: My daughter Mia is allergic to peanuts." in seen[0].content
    assert isinstance(seen[-1], HumanMessage) and seen[-1].content == "Which restaurant suits Mia's peanut allergy?"
    assert 3 < len(seen) < 30 and "Unrelated note number 24 about the weather." in [m.content for m in seen]
    assert len(agent.get_state(config).values["messages"]) == 54  # 27 turns of two, all kept
