"""How the LangGraph saver stores one value (store.integrations.langgraph_values): plain JSON when it reads
back exactly, LangGraph's serde otherwise; either way the value reads back as LangGraph's serde gives it."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from store.core.codec import encode
from store.integrations.langgraph_values import MESSAGES_MAX, dumps_value, loads_value

SERDE = JsonPlusSerializer()


def _through_serde(value: Any) -> Any:
    """The value as LangGraph's serde gives it back (a tuple comes back a list, for one)."""
    return SERDE.loads_typed(SERDE.dumps_typed(value))


def _round_trip(value: Any) -> tuple[list[Any], Any]:
    stored = dumps_value(SERDE, value)
    json.dumps(stored)  # the stored form is JSON the store can hold
    return stored, loads_value(SERDE, json.loads(json.dumps(stored)))


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage("What is the weather in Lisbon?", id="h1"),
        AIMessage(
            "",
            id="a1",
            tool_calls=[{"id": "c1", "name": "weather", "args": {"city": "Lisbon"}, "type": "tool_call"}],
            usage_metadata={"input_tokens": 120, "output_tokens": 11, "total_tokens": 131},
        ),
        ToolMessage("sunny", tool_call_id="c1", name="weather", id="t1"),
    ],
)
def test_a_message_that_reads_back_exactly_is_stored_as_json(message: Any) -> None:
    stored, back = _round_trip(message)
    assert stored[0] == "m" and isinstance(stored[1], dict)
    assert type(back) is type(message) and back == message


@pytest.mark.parametrize(
    "message",
    [
        AIMessage("x", id="a2", additional_kwargs={"pair": (1, 2)}),  # a tuple reads back as a list
        AIMessage("x", id="a3", additional_kwargs={"raw": b"\x00\x01"}),  # bytes are not JSON
        AIMessage("x", id="a4", additional_kwargs={1: "int key"}),  # keys that are not strings
        HumanMessage("\ud800 lone surrogate", id="h2"),
    ],
)
def test_a_message_that_would_not_read_back_exactly_goes_through_the_serde(message: Any) -> None:
    stored, back = _round_trip(message)
    assert isinstance(stored[1], str)  # LangGraph's serde, base64
    assert back == _through_serde(message)


def test_a_list_of_messages_is_json_up_to_a_bound() -> None:
    messages = [HumanMessage(f"q{i}", id=f"h{i}") for i in range(MESSAGES_MAX)]
    stored, back = _round_trip(messages)
    assert stored[0] == "ms" and back == messages
    longer = [*messages, HumanMessage("one more", id="hx")]
    stored, back = _round_trip(longer)
    assert isinstance(stored[1], str) and back == longer
    mixed = [HumanMessage("q", id="h"), AIMessage("x", id="a", additional_kwargs={"pair": (1, 2)})]
    stored, back = _round_trip(mixed)
    assert isinstance(stored[1], str) and back == _through_serde(mixed)


def test_a_checkpoint_keeps_its_fields_as_json_and_each_channel_by_these_rules() -> None:
    checkpoint: Any = empty_checkpoint()
    version = f"{7:032}.{0.4945282802040281:.16f}"
    checkpoint["channel_versions"] = {"messages": version, "branch:to:model": version}
    checkpoint["versions_seen"] = {"model": {"branch:to:model": version}, "__input__": {}}
    checkpoint["channel_values"] = {"messages": [HumanMessage("hi", id="h1")], "count": 3, "when": {1, 2}}
    stored, back = _round_trip(checkpoint)
    assert stored[0] == "c" and stored[1]["s"]["channel_versions"]["messages"] == version
    assert stored[1]["v"]["messages"][0] == "ms"
    assert back == checkpoint and back["channel_values"]["when"] == {1, 2}


def test_json_forms_compress_where_base64_msgpack_does_not() -> None:
    """The reason for the JSON forms: the store compresses a body's text, and a checkpoint's versions repeat."""
    checkpoint: Any = empty_checkpoint()
    versions = {f"channel-{i}": f"{i:032}.{0.1234567890123456:.16f}" for i in range(8)}
    checkpoint["channel_versions"] = versions
    checkpoint["versions_seen"] = {f"node-{i}": dict(versions) for i in range(4)}
    kind, data = SERDE.dumps_typed(checkpoint)
    as_serde = len(encode([kind, base64.b64encode(data).decode()])[1])
    as_json = len(encode(dumps_value(SERDE, checkpoint))[1])
    assert as_json < as_serde * 0.6, (as_json, as_serde)


def test_values_stored_by_the_serde_before_still_read() -> None:
    kind, data = SERDE.dumps_typed([HumanMessage("old", id="h0")])
    assert loads_value(SERDE, [kind, base64.b64encode(data).decode()]) == [HumanMessage("old", id="h0")]
