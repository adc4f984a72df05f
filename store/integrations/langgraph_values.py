"""LangGraph: how the checkpoint saver stores one value (a channel's value, a write, a checkpoint's fields).

A value is stored as a pair `[kind, data]`:
- `["m", dict]`: a LangChain message as `message_to_dict` gives it, when that JSON reads back through
  `messages_from_dict` as an equal message of the same class (otherwise it goes through the serde);
- `["ms", [dict, ...]]`: a list of at most MESSAGES_MAX such messages (a node's write to a messages channel);
- `["c", {"s": fields, "v": {channel: stored value}}]`: a checkpoint, its fields other than `channel_values`
  as JSON when they read back equal, each channel's value stored by these same rules;
- `[kind, base64]`: anything else, through LangGraph's serde (`dumps_typed`), as every earlier record was.

Plain JSON rather than the serde's msgpack in base64 lets the store's compression see the text: a checkpoint's
versions repeat the same long strings, and a message in a write and the same message inline in a checkpoint
of one record are written once. That keeps a record of a typical super-step under one write unit (1 KB).
A JSON form is used only when it reads back exactly, so what LangGraph gets back is what it put."""

from __future__ import annotations

import base64
import json
from typing import Any

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict
from langgraph.checkpoint.serde.base import SerializerProtocol

from store.core import codec
from store.errors import InvalidInput

MESSAGE = "m"
MESSAGES = "ms"
MESSAGES_MAX = 64  # a longer list of messages goes through the serde (each JSON form is checked by reading it back)
CHECKPOINT = "c"
CHECKPOINT_FIELDS = frozenset({"channel_values", "channel_versions", "versions_seen", "id"})


def _json_copy(value: Any) -> Any:
    """`value` written as the store writes JSON and read back (InvalidInput when it cannot be)."""
    return json.loads(codec.dumps(value))


def _message_form(message: BaseMessage) -> list[Any] | None:
    try:
        data = _json_copy(message_to_dict(message))
        back = messages_from_dict([data])[0]
    except (InvalidInput, KeyError, TypeError, ValueError):
        return None
    return [MESSAGE, data] if type(back) is type(message) and back == message else None


def dumps_value(serde: SerializerProtocol, value: Any) -> list[Any]:
    """`value` in its stored form (the module's rules); `loads_value` gives back an equal value."""
    form = _messages_form(value)
    if form is None:
        form = _checkpoint_form(serde, value)
    if form is not None:
        return form
    kind, data = serde.dumps_typed(value)
    return [kind, base64.b64encode(data).decode()]


def _messages_form(value: Any) -> list[Any] | None:
    """A message, or a list of at most MESSAGES_MAX messages, as LangChain's dicts (None: not one, or one
    LangChain cannot write so)."""
    if isinstance(value, BaseMessage):
        return _message_form(value)
    if not isinstance(value, list) or not 0 < len(value) <= MESSAGES_MAX:
        return None
    if not all(isinstance(m, BaseMessage) for m in value):
        return None
    forms = [_message_form(m) for m in value]
    return [MESSAGES, [f[1] for f in forms if f is not None]] if all(f is not None for f in forms) else None


def _checkpoint_form(serde: SerializerProtocol, value: Any) -> list[Any] | None:
    """A checkpoint whose fields besides its channels are JSON as they are, and whose channels are named by
    strings: its fields as JSON, each channel's value in its own stored form (None: not such a checkpoint)."""
    if not isinstance(value, dict) or not value.keys() >= CHECKPOINT_FIELDS:
        return None
    channels = value["channel_values"]
    if not isinstance(channels, dict) or not all(isinstance(k, str) for k in channels):
        return None  # it goes whole, through the serde
    fields = {k: v for k, v in value.items() if k != "channel_values"}
    try:
        stored = _json_copy(fields)
    except (InvalidInput, TypeError, ValueError):
        return None
    if stored != fields:
        return None
    return [CHECKPOINT, {"s": stored, "v": {k: dumps_value(serde, v) for k, v in channels.items()}}]


def loads_value(serde: SerializerProtocol, stored: list[Any]) -> Any:
    """The value `dumps_value` stored."""
    kind, data = stored[0], stored[1]
    if kind == MESSAGES and isinstance(data, list):
        return messages_from_dict(data)
    if isinstance(data, dict):
        if kind == MESSAGE:
            return messages_from_dict([data])[0]
        if kind == CHECKPOINT:
            values = {k: loads_value(serde, v) for k, v in data["v"].items()}
            return {**data["s"], "channel_values": values}
    return serde.loads_typed((kind, base64.b64decode(data)))
