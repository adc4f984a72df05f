"""A fork of a framework's session made by the store (what the API, `agent-store sessions fork` and the
console's "Fork from here" call) is a session that framework resumes with the forked conversation: each
adapter reads the fork's messages 1..k, a new turn continues the fork, and the source is left as it was."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from bench import framework_turns as turns
from store import SessionStore
from store.backends.scoped import ScopedBackend
from tests.conftest import Harness

OWNER = "ada"
Turn = Callable[[SessionStore, str, bool], Callable[[], Any]]


def langchain_history(store: SessionStore, name: str) -> int:
    from store.integrations.langchain import SessionStoreChatMessageHistory

    return len(SessionStoreChatMessageHistory(name, store, owner=OWNER).messages)


def openai_history(store: SessionStore, name: str) -> int:
    from store.integrations.openai_agents import OpenAIAgentsSession

    return len(asyncio.run(OpenAIAgentsSession(name, store, owner=OWNER).get_items()))


def adk_history(store: SessionStore, name: str) -> int:
    from store.integrations.adk import StoreSessionService

    found = asyncio.run(StoreSessionService(store).get_session(app_name="bench", user_id=OWNER, session_id=name))
    assert found is not None and found.id == name and found.state.get("last_city") == turns.CITY
    return len(found.events)


def strands_history(store: SessionStore, name: str) -> int:
    from strands import Agent

    from bench.strands_models import ScriptModel
    from store.integrations.strands import session_manager

    class Silent(ScriptModel):
        async def stream(self, *args: Any, **kwargs: Any) -> Any:
            yield {"messageStop": {"stopReason": "end_turn"}}

    agent = Agent(model=Silent(), session_manager=session_manager(name, store, owner=OWNER), callback_handler=None)
    assert agent.state.get("last_city") == turns.CITY
    return len(agent.messages)


def langgraph_history(store: SessionStore, name: str) -> int:
    from store.integrations.langgraph import SessionStoreSaver

    found = SessionStoreSaver(store, owner=OWNER).get_tuple({"configurable": {"thread_id": name}})
    assert found is not None
    return len(found.checkpoint["channel_values"]["messages"])


FRAMEWORKS: dict[str, tuple[Turn, Callable[[SessionStore, str], int]]] = {
    "langchain": (lambda store, name, _: turns.langchain_turn(store, name=name, owner=OWNER), langchain_history),
    "openai": (lambda store, name, _: turns.openai_turn(store, name=name, owner=OWNER), openai_history),
    "adk": (
        lambda store, name, new: turns.adk_turn(store, batched=False, name=name, owner=OWNER, create=new),
        adk_history,
    ),
    "strands": (
        lambda store, name, _: turns.strands_turn(store, batched=False, name=name, owner=OWNER),
        strands_history,
    ),
    "langgraph": (lambda store, name, _: turns.langgraph_turn(store, name=name, owner=OWNER), langgraph_history),
}


@pytest.mark.parametrize("harness", ["memory", "dynamodb"], indirect=True)
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_a_fork_of_a_frameworks_session_is_resumed_by_that_framework(harness: Harness, framework: str) -> None:
    turn, history = FRAMEWORKS[framework]
    store = harness.store
    turn(store, "trip", True)()
    turn(store, "trip", False)()
    api = SessionStore(backend=ScopedBackend(store.backend, OWNER))  # the owner's view, as the API has it
    source = api.get_session("trip")
    assert history(store, "trip") == source.last_seq == 8  # two turns of four messages
    fork = api.fork_session("trip", at_seq=4, new_session_id="trip-fork")
    assert fork.last_seq == 4
    assert history(store, "trip-fork") == 4  # the framework reads the first turn only
    turn(store, "trip-fork", False)()  # and continues the fork
    assert history(store, "trip-fork") == 8
    assert [m.seq for m in api.list_messages("trip-fork").items] == list(range(1, 9))
    assert api.get_session("trip").last_seq == 8 and history(store, "trip") == 8  # the source is as it was
