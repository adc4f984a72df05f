"""What the adapters' calls cost on the DynamoDB backend (the table in docs/integrations.md)."""

from __future__ import annotations

import asyncio

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from strands.types.session import Session, SessionAgent, SessionMessage, SessionType

from store.integrations.adk import StoreSessionService
from store.integrations.openai_agents import OpenAIAgentsSession
from store.integrations.strands import StrandsSessionRepository
from tests.conftest import Harness


def test_openai_session_costs(dyn: Harness) -> None:
    session = OpenAIAgentsSession("costs", dyn.store)
    asyncio.run(session.add_items([{"role": "user", "content": "first"}]))
    dyn.requests.clear()
    asyncio.run(session.add_items([{"role": "user", "content": str(i)} for i in range(120)]))
    assert dyn.requests.names == ["TransactWriteItems", "TransactWriteItems"]  # 97 + 23
    dyn.requests.clear()
    asyncio.run(session.get_items(limit=5))
    assert dyn.requests.names == ["GetItem", "Query"]  # last_messages: the head, then the latest page
    dyn.requests.clear()
    asyncio.run(session.pop_item())
    # the latest item shares a DynamoDB item with the others of its call: that item is unpacked first
    # (a transaction and a read), then popped
    assert dyn.requests.names == ["GetItem", "GetItem", "TransactWriteItems", "GetItem", "TransactWriteItems"]
    dyn.requests.clear()
    asyncio.run(session.pop_item())
    assert dyn.requests.names == ["GetItem", "GetItem", "TransactWriteItems"]


def test_strands_repository_costs(dyn: Harness) -> None:
    repo = StrandsSessionRepository(dyn.store)
    repo.create_session(Session(session_id="costs", session_type=SessionType.AGENT))
    repo.create_agent("costs", SessionAgent(agent_id="a", state={}, conversation_manager_state={}))
    repo.create_message("costs", "a", SessionMessage({"role": "user", "content": [{"text": "0"}]}, 0))
    dyn.requests.clear()
    repo.create_message("costs", "a", SessionMessage({"role": "user", "content": [{"text": "1"}]}, 1))
    assert dyn.requests.names == ["TransactWriteItems"]
    dyn.requests.clear()
    repo.list_messages("costs", "a")
    assert dyn.requests.names == ["GetItem", "Query", "BatchGetItem"]


def test_adk_append_event_costs(dyn: Harness) -> None:
    service = StoreSessionService(dyn.store, durability="event")
    session = asyncio.run(service.create_session(app_name="app", user_id="u", session_id="costs"))
    asyncio.run(service.append_event(session, Event(author="user", invocation_id="i0")))
    dyn.requests.clear()
    event = Event(author="user", invocation_id="i", actions=EventActions(state_delta={"k": 1}))
    asyncio.run(service.append_event(session, event))
    # the service knows where the session ends (it wrote the last event): the write alone
    assert dyn.requests.names == ["TransactWriteItems"]
    dyn.requests.clear()
    elsewhere = StoreSessionService(dyn.twin(), durability="event")  # another process
    other = asyncio.run(elsewhere.get_session(app_name="app", user_id="u", session_id="costs"))
    assert other is not None
    asyncio.run(elsewhere.append_event(other, Event(author="u", invocation_id="j")))
    dyn.requests.clear()
    asyncio.run(service.append_event(session, Event(author="user", invocation_id="k")))
    # another process moved the session: the write is refused, then the head, state and latest event are read
    assert dyn.requests.names == ["TransactWriteItems", "TransactGetItems", "Query", "TransactWriteItems"]
    stored = asyncio.run(service.get_session(app_name="app", user_id="u", session_id="costs"))
    assert [e.invocation_id for e in stored.events] == ["i0", "i", "j", "k"] and stored.state == {"k": 1}
