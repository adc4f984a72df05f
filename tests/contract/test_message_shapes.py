"""Contract: framework message shapes survive the round trip exactly (run on every backend)."""

from __future__ import annotations

from typing import Any

import pytest

from store import SessionStore

OPENAI = [
    {"role": "system", "content": "You are terse."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this image?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "tool_calls": [
            {"id": "call_abc", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "cats"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_abc", "content": '{"result": [1, 2, 3]}'},
    {"role": "assistant", "content": "A cat.", "name": "bot"},
]

ANTHROPIC = [
    {
        "role": "user",
        "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {"type": "text", "text": "Describe", "cache_control": {"type": "ephemeral"}},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig=="},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris", "units": ["c"]}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01",
                "content": [{"type": "text", "text": "12°C"}],
                "is_error": False,
            }
        ],
    },
]

BEDROCK_CONVERSE = [
    {
        "role": "user",
        "content": [
            {"text": "Find the doc"},
            {"document": {"format": "pdf", "name": "spec", "source": {"s3Location": {"uri": "s3://bucket/spec.pdf"}}}},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "tu-1", "name": "search", "input": {"query": "spec", "limit": 5, "ratio": 0.5}}}
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "tu-1",
                    "status": "success",
                    "content": [{"json": {"hits": [{"id": 1, "score": 0.93}]}}],
                }
            }
        ],
    },
]

STRANDS = [
    {"role": "user", "content": [{"text": "hello"}]},
    {
        "role": "assistant",
        "content": [{"text": "hi"}, {"reasoningContent": {"reasoningText": {"text": "..."}}}],
        "metadata": {"usage": {"inputTokens": 3, "outputTokens": 1}},
    },
]

ODDITIES = [
    {"role": "user", "content": "unicode ✓ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u0000 nul and \ud7ff"},
    {"role": "user", "content": {"any": ["json", 1, 2.5, True, None, {"deep": {"er": []}}]}},
    {"role": "user", "content": ""},
    {"role": "custom-role", "content": 42, "x-extension": {"kept": True}, "empty": None},
]


@pytest.mark.parametrize(
    "shape",
    [OPENAI, ANTHROPIC, BEDROCK_CONVERSE, STRANDS, ODDITIES],
    ids=["openai", "anthropic", "bedrock-converse", "strands", "oddities"],
)
def test_shapes_round_trip_exactly(store: SessionStore, session_id: str, shape: list[dict[str, Any]]) -> None:
    store.append_messages(session_id, shape)
    got = store.list_messages(session_id).items
    assert len(got) == len(shape)
    for original, record in zip(shape, got, strict=True):
        dumped = record.model_dump(mode="json", exclude={"seq", "session_id", "created_at", "kind", "id", "usage"})
        for field in ("content", "name", "tool_call_id", "metadata"):
            if field not in original and dumped.get(field) is None:
                dumped.pop(field)
        assert dumped == original
    reloaded = type(got[0]).model_validate_json(got[0].model_dump_json())
    assert reloaded == got[0]
