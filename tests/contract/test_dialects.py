"""Sessions as each adapter stored them before the conversation model existed (the payloads written by the
earlier release, verbatim) read as the same conversation on every backend: no migration."""

from __future__ import annotations

from typing import Any

import pytest

from store.conversation import canonical
from tests.conftest import Harness

STRANDS = [
    {"role": "user", "content": [{"text": "Weather in Lisbon?"}], "metadata": {"strands": {"message_id": 0}}},
    {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Lisbon"}}}],
        "metadata": {
            "strands": {
                "message_id": 1,
                "message": {"metadata": {"usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}}},
            }
        },
    },
    {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "sunny"}]}}],
        "metadata": {"strands": {"message_id": 2}},
    },
    {"role": "assistant", "content": [{"text": "It is sunny."}], "metadata": {"strands": {"message_id": 3}}},
]
OPENAI = [
    {"role": "user", "content": {"role": "user", "content": "Weather in Lisbon?"}},
    {
        "role": "function_call",
        "content": {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city": "Lisbon"}'},
    },
    {"role": "function_call_output", "content": {"type": "function_call_output", "call_id": "c1", "output": "sunny"}},
    {
        "role": "assistant",
        "content": {
            "id": "msg",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}],
        },
    },
]
ADK = [
    {
        "role": "user",
        "content": {
            "author": "user",
            "invocation_id": "e-1",
            "id": "a",
            "content": {"role": "user", "parts": [{"text": "Weather in Lisbon?"}]},
            "actions": {"state_delta": {}, "requested_auth_configs": {}},
        },
    },
    {
        "role": "assistant",
        "content": {
            "author": "assistant",
            "invocation_id": "e-1",
            "id": "b",
            "content": {
                "role": "model",
                "parts": [{"function_call": {"id": "f1", "name": "weather", "args": {"city": "Lisbon"}}}],
            },
            "usage_metadata": {"prompt_token_count": 5, "candidates_token_count": 2, "total_token_count": 7},
        },
    },
    {
        "role": "assistant",
        "content": {
            "author": "assistant",
            "invocation_id": "e-1",
            "id": "c",
            "content": {
                "role": "user",
                "parts": [{"function_response": {"id": "f1", "name": "weather", "response": {"result": "sunny"}}}],
            },
        },
    },
    {
        "role": "assistant",
        "content": {
            "author": "assistant",
            "invocation_id": "e-1",
            "id": "d",
            "content": {"role": "model", "parts": [{"text": "It is sunny."}]},
        },
    },
]
LANGCHAIN = [
    {
        "role": "human",
        "content": {
            "type": "human",
            "data": {"content": "Weather in Lisbon?", "additional_kwargs": {}, "type": "human"},
        },
    },
    {
        "role": "ai",
        "content": {
            "type": "ai",
            "data": {
                "content": "",
                "tool_calls": [{"name": "weather", "args": {"city": "Lisbon"}, "id": "c1", "type": "tool_call"}],
                "usage_metadata": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
                "type": "ai",
            },
        },
    },
    {
        "role": "tool",
        "content": {
            "type": "tool",
            "data": {"content": "sunny", "tool_call_id": "c1", "status": "success", "type": "tool"},
        },
    },
    {"role": "ai", "content": {"type": "ai", "data": {"content": "It is sunny.", "type": "ai"}}},
]


@pytest.mark.parametrize("stored", [STRANDS, OPENAI, ADK, LANGCHAIN], ids=["strands", "openai", "adk", "langchain"])
def test_sessions_written_before_read_as_the_same_conversation(harness: Harness, stored: list[dict[str, Any]]) -> None:
    store = harness.store
    sid = store.create_session("alice").id
    store.append_messages(sid, stored)
    views = [canonical(m) for m in store.list_messages(sid).items]
    assert [v.role for v in views] == ["user", "assistant", "tool", "assistant"]
    assert [p.text for p in views[0].parts] == ["Weather in Lisbon?"]
    (call,) = views[1].parts
    assert (call.type, call.name, call.arguments) == ("tool_call", "weather", {"city": "Lisbon"})
    (result,) = views[2].parts
    assert result.type == "tool_result" and "sunny" in (result.content or "") and not result.is_error
    assert [p.text for p in views[3].parts] == ["It is sunny."]
    if stored is not OPENAI:
        assert views[1].usage is not None and views[1].usage.total_tokens == 7  # what the payload reports
    assert store.get_session(sid).preview == "Weather in Lisbon?"
    assert {h.seq for h in store.search("alice", "lisbon")} == {1, 2}
