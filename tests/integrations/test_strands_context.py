"""A Strands agent with `hooks=[context_hook(session_id, store)]` beside its sliding window: each model call's
system prompt carries the old message that matters to the question (the window let it go), the agent's own
prompt comes back after the call, and the session keeps every message. On the memory backend and on DynamoDB
with its message index; a scripted model records what it was given."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from strands import Agent
from strands.agent.conversation_manager import SlidingWindowConversationManager

from store.integrations.strands import session_manager
from store.integrations.strands_context import context_hook
from store.integrations.strands_ids import session_store_id
from tests.conftest import FakeClock, Harness, make_harness
from tests.integrations.test_integration_strands import ScriptedModel


class Prompted(ScriptedModel):
    """The scripted model, keeping each call's system prompt too."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.prompts: list[Any] = []

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        self.prompts.append(system_prompt)
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            yield event


@pytest.fixture(params=["memory", "dynamodb"])
def h(request: pytest.FixtureRequest, clock: FakeClock) -> Harness:
    if request.param == "memory":
        return make_harness("memory", clock)
    client, s3 = request.getfixturevalue("dynamodb_client"), request.getfixturevalue("s3_client")
    return make_harness("dynamodb", clock, client, request.getfixturevalue("inspector_client"), s3)


def test_the_hook_puts_the_sessions_context_in_each_calls_prompt(h: Harness) -> None:
    store = h.store
    model = Prompted([f"ok {i}" for i in range(20)])
    agent = Agent(
        model=model,
        system_prompt="Be brief.",
        session_manager=session_manager("trip", store, owner="ada"),
        hooks=[context_hook("trip", store, owner="ada", budget_tokens=300)],
        conversation_manager=SlidingWindowConversationManager(window_size=10),
        callback_handler=None,
    )
    agent("My daughter Mia is allergic to peanuts.")
    for i in range(12):
        agent(f"Unrelated note number {i} about the weather.")
    store.index_messages(session_store_id("ada", "trip"))  # what the stack's cascade does after the writes
    agent("Which restaurant suits Mia's peanut allergy?")
    assert model.prompts[0] == "Be brief."  # a new session: nothing before its first turn
    assert (
        model.prompts[-1] == "Be brief.\n\nEarlier in this conversation:\nuser: My daughter Mia is allergic to peanuts."
    )
    assert agent.system_prompt == "Be brief."  # the agent's own, after the call
    assert "My daughter Mia is allergic to peanuts." not in str(model.seen[-1])  # the window let it go
    assert len(store.list_messages(session_store_id("ada", "trip")).items) == 28  # every message kept
