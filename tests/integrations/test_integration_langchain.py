"""LangChain: `SessionStoreChatMessageHistory` round-trips LangChain's message types exactly, works under
`RunnableWithMessageHistory`, sync and async on every backend; `migrate_langchain_table` copies a
`DynamoDBChatMessageHistory` table once, however often it runs."""

from __future__ import annotations

import asyncio
import io
from contextlib import redirect_stdout
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from store import SessionStore
from store.core.scoped_ids import scoped_id
from store.integrations.langchain import SessionStoreChatMessageHistory, migrate_langchain_table, scan_table
from tests.conftest import Harness


def conversation() -> list[BaseMessage]:
    """Every kind of message an agent keeps, with the fields LangChain adds."""
    return [
        SystemMessage(content="You book flights.", id="sys-1"),
        HumanMessage(content="Lisbon, please", name="ada", additional_kwargs={"locale": "pt-PT"}),
        AIMessage(
            content="",
            id="run-1",
            tool_calls=[
                {"id": "call-1", "name": "book_flight", "args": {"to": "LIS", "seats": 2}, "type": "tool_call"}
            ],
            response_metadata={"model_name": "scripted", "stop_reason": "tool_use"},
            usage_metadata={"input_tokens": 12, "output_tokens": 7, "total_tokens": 19},
            additional_kwargs={"reasoning": "the user asked"},
        ),
        ToolMessage(content="booked seat 12A", tool_call_id="call-1", name="book_flight", artifact={"pnr": "X1"}),
        AIMessage(content=[{"type": "text", "text": "Done: seat 12A."}], response_metadata={"stop_reason": "end_turn"}),
    ]


def history(harness: Harness, session_id: str = "chat-1", **kwargs: Any) -> SessionStoreChatMessageHistory:
    store = getattr(harness.store, "async_store", harness.store)
    runner = harness.store._loop.run if hasattr(harness.store, "async_store") else None  # type: ignore[attr-defined]
    return SessionStoreChatMessageHistory(session_id, store, runner=runner, **kwargs)


def test_messages_round_trip_exactly_in_one_append(harness: Harness) -> None:
    h = history(harness, owner="ada")
    assert h.messages == []
    sent = conversation()
    if harness.requests is not None:
        h.add_messages(sent[:1])  # the first add creates the session
        harness.requests.clear()
        h.add_messages(sent[1:])
        assert harness.requests.count("TransactWriteItems") == 1 and harness.requests.count() == 1
    else:
        h.add_messages(sent)
    assert h.messages == sent
    assert [m.type for m in h.messages] == ["system", "human", "ai", "tool", "ai"]
    assert history(harness, owner="ada", history_size=1).messages == sent[-1:]
    # the last 2 would start with the ToolMessage: the AIMessage that made its call comes along
    assert history(harness, owner="ada", history_size=2).messages == sent[-3:]
    assert history(harness, owner="mallory").messages == []  # another owner's chat-1 is another history
    h.clear()
    assert h.messages == []


def test_the_async_methods(harness: Harness) -> None:
    h = history(harness, "chat-async", owner="ada")
    run = harness.store._loop.run if hasattr(harness.store, "async_store") else asyncio.run  # type: ignore[attr-defined]
    sent = conversation()
    run(h.aadd_messages(sent[:2]))
    run(h.aadd_messages(sent[2:]))
    assert run(h.aget_messages()) == sent
    assert h.messages == sent  # the sync view of the same history
    run(h.aclear())
    assert run(h.aget_messages()) == []


def test_under_runnable_with_message_history(harness: Harness) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content="Hello Ada."), AIMessage(content="You are Ada.")]))
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    seen: list[list[BaseMessage]] = []

    def remember(value: Any) -> Any:
        seen.append(value.to_messages())
        return value

    chain = RunnableWithMessageHistory(
        prompt | remember | model,
        lambda session_id: history(harness, session_id, owner="ada"),
        input_messages_key="question",
        history_messages_key="history",
    )
    config: Any = {"configurable": {"session_id": "chat-7"}}
    chain.invoke({"question": "I am Ada."}, config)
    chain.invoke({"question": "Who am I?"}, config)
    assert [m.content for m in seen[1]] == ["I am Ada.", "Hello Ada.", "Who am I?"]
    stored = history(harness, "chat-7", owner="ada").messages
    assert [(m.type, m.content) for m in stored] == [
        ("human", "I am Ada."),
        ("ai", "Hello Ada."),
        ("human", "Who am I?"),
        ("ai", "You are Ada."),
    ]


@pytest.fixture
def langchain_table(dyn: Harness, dynamodb_client: Any) -> str:
    """A DynamoDBChatMessageHistory table, as LangChain's documentation creates it, with three histories."""
    import boto3
    from langchain_community.chat_message_histories import DynamoDBChatMessageHistory

    name = f"lc-{dyn.tables.sessions if dyn.tables else 'x'}"[:200]
    dynamodb_client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "SessionId", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "SessionId", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    session = boto3.Session(region_name="us-east-1")
    for i, sid in enumerate(["s-1", "s-2", "user@example.com/chat"]):
        DynamoDBChatMessageHistory(table_name=name, session_id=sid, boto3_session=session).add_messages(
            conversation()[: 2 + i]
        )
    return name


def test_a_langchain_table_is_migrated_once(dyn: Harness, dynamodb_client: Any, langchain_table: str) -> None:
    import boto3
    from langchain_community.chat_message_histories import DynamoDBChatMessageHistory

    first = migrate_langchain_table(dyn.store, scan_table(dynamodb_client, langchain_table))
    assert (first.sessions, first.messages_copied, first.sessions_already_done) == (3, 2 + 3 + 4, 0)
    for i, sid in enumerate(["s-1", "s-2", "user@example.com/chat"]):
        assert SessionStoreChatMessageHistory(sid, dyn.store).messages == conversation()[: 2 + i]
    again = migrate_langchain_table(dyn.store, scan_table(dynamodb_client, langchain_table))
    assert (again.messages_copied, again.sessions_already_done) == (0, 3)
    # the source grew: a rerun copies only what is new
    source = DynamoDBChatMessageHistory(
        table_name=langchain_table, session_id="s-1", boto3_session=boto3.Session(region_name="us-east-1")
    )
    source.add_messages([AIMessage(content="later")])
    resumed = migrate_langchain_table(dyn.store, scan_table(dynamodb_client, langchain_table))
    assert resumed.messages_copied == 1
    assert SessionStoreChatMessageHistory("s-1", dyn.store).messages == [
        *conversation()[:2],
        AIMessage(content="later"),
    ]


def test_the_migrate_command(dyn: Harness, langchain_table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.tools.cli import main

    assert dyn.tables is not None and dyn.tables.bucket is not None
    monkeypatch.setenv("SESSIONS_TABLE", dyn.tables.sessions)
    monkeypatch.setenv("MESSAGES_TABLE", dyn.tables.messages)
    monkeypatch.setenv("ARTIFACTS_BUCKET", dyn.tables.bucket)
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["migrate", "langchain", "--table", langchain_table, "--owner", "team-a"]) == 0
        assert main(["migrate", "langchain", "--table", langchain_table, "--owner", "team-a"]) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("3 sessions migrated") and "9 messages copied" in lines[0]
    assert "0 messages copied, 3 sessions already complete" in lines[1]
    store = SessionStore.from_env()
    assert SessionStoreChatMessageHistory("s-2", store, owner="team-a").messages == conversation()[:3]


def test_a_context_history_hands_the_chain_what_matters_within_the_budget(harness: Harness) -> None:
    """`SessionStoreChatMessageHistory(..., context_tokens=N)` under `RunnableWithMessageHistory`: the prompt
    holds a system message with the old message that matters to the latest question, then the recent history
    that fits, then the question; the history keeps every message (sync and async reads alike)."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content=f"ok {i}") for i in range(30)]))
    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    seen: list[list[BaseMessage]] = []

    def remember(value: Any) -> Any:
        seen.append(value.to_messages())
        return value

    chain = RunnableWithMessageHistory(
        prompt | remember | model,
        lambda session_id: history(harness, session_id, owner="ada", context_tokens=200),
        input_messages_key="question",
        history_messages_key="history",
    )
    config: Any = {"configurable": {"session_id": "chat-7"}}
    chain.invoke({"question": "My daughter Mia is allergic to peanuts."}, config)
    for i in range(15):
        chain.invoke({"question": f"Unrelated note number {i} about the weather."}, config)
    chain.invoke({"question": "Which restaurant suits Mia's peanut allergy?"}, config)
    harness.operator().index_messages(scoped_id("ada", "chat-7"))  # what the stack's cascade does
    chain.invoke({"question": "And Mia's peanut allergy at breakfast?"}, config)
    last = seen[-1]
    assert last[0].type == "system" and "user: My daughter Mia is allergic to peanuts." in str(last[0].content)
    assert last[-1].content == "And Mia's peanut allergy at breakfast?" and 3 < len(last) < 20
    full = history(harness, "chat-7", owner="ada")
    assert len(full.messages) == 36  # 18 turns of two, all kept
    run = harness.store._loop.run if hasattr(harness.store, "async_store") else asyncio.run  # type: ignore[attr-defined]
    assert run(history(harness, "chat-7", owner="ada", context_tokens=200).aget_messages())[0].type == "system"
