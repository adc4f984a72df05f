"""Contract: `load_full`'s live-context windows (the last N messages, or from the latest compaction)
never cut a tool exchange in half, in the OpenAI, Anthropic, Bedrock Converse and Strands shapes (run on
every backend)."""

from __future__ import annotations

from typing import Any

import pytest

from store import InvalidInput, SessionStore
from store.core.windows import WIDEN_MAX, orphans
from tests.conftest import Harness


def openai_chat(call: str) -> list[dict[str, Any]]:
    """An assistant turn that calls two tools in parallel, their two results, and the answer."""
    calls = [{"id": f"{call}-{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in (1, 2)]
    return [
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": f"{call}-1", "content": "one"},
        {"role": "tool", "tool_call_id": f"{call}-2", "content": "two"},
        {"role": "assistant", "content": "done"},
    ]


def openai_responses(call: str) -> list[dict[str, Any]]:
    """OpenAI Agents SDK items, as its session adapter stores them."""
    return [
        {
            "role": "function_call",
            "content": {"type": "function_call", "call_id": call, "name": "f", "arguments": "{}"},
        },
        {"role": "function_call_output", "content": {"type": "function_call_output", "call_id": call, "output": "ok"}},
        {"role": "assistant", "content": {"type": "message", "role": "assistant", "content": "done"}},
    ]


def anthropic(call: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "look"}, {"type": "tool_use", "id": call, "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]


def bedrock(call: str) -> list[dict[str, Any]]:
    """Bedrock Converse, which is also what Strands stores."""
    return [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": call, "name": "f", "input": {}}}]},
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": call, "content": [{"text": "ok"}], "status": "success"}}],
        },
        {"role": "assistant", "content": [{"text": "done"}]},
    ]


SHAPES = {"openai-chat": openai_chat, "openai-responses": openai_responses, "anthropic": anthropic, "bedrock": bedrock}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_window_that_would_start_inside_a_tool_exchange_is_widened_to_its_call(
    store: SessionStore, session_id: str, shape: str
) -> None:
    exchange = SHAPES[shape]("call-7")
    store.append_messages(session_id, [user(f"q{i}") for i in range(5)])
    store.append_messages(session_id, [user("run the tool"), *exchange, user("thanks")])
    total = 5 + 1 + len(exchange) + 1
    # the last 3 messages start at the tool exchange's second half: its call(s) must come along
    full = store.load_full(session_id, last=3)
    first_call = total - len(exchange)  # the seq of the assistant message that makes the calls
    assert [m.seq for m in full.messages] == list(range(first_call, total + 1))
    assert not orphans(full.messages)
    assert full.session.last_seq == total
    # a window that already holds the call is returned exactly
    assert [m.seq for m in store.load_full(session_id, last=len(exchange) + 2).messages] == list(
        range(first_call - 1, total + 1)
    )
    # the whole transcript without a window, and a window that starts on plain messages, are as asked
    assert len(store.load_full(session_id).messages) == total
    assert [m.seq for m in store.load_full(session_id, last=1).messages] == [total]


def test_windows_from_the_latest_compaction_are_widened_too(store: SessionStore, session_id: str) -> None:
    store.append_messages(session_id, [user("a"), *bedrock("c-1")[:1]])  # the call, then the summary
    summary = store.append_messages(session_id, [{"role": "assistant", "content": "summary"}])[0]
    store.append_messages(session_id, [bedrock("c-1")[1], user("b")])  # the result lands after the summary
    store.mark_compaction(session_id, summary.id)
    full = store.load_full(session_id, since_compaction=True)
    assert [m.seq for m in full.messages] == [2, 3, 4, 5]  # widened back to the call at 2
    assert [m.seq for m in store.load_full(session_id, since_compaction=True, last=1).messages] == [5]


def test_a_call_too_far_back_trims_the_window_instead(store: SessionStore, session_id: str) -> None:
    store.append_messages(session_id, [anthropic("late")[0]])  # a call answered very much later
    filler = [user(f"m{i}") for i in range(WIDEN_MAX + 5)]
    for at in range(0, len(filler), 90):
        store.append_messages(session_id, filler[at : at + 90])
    result, answer, after = anthropic("late")[1], user("answered"), user("next")
    store.append_messages(session_id, [result, answer, after])
    last = store.get_session(session_id).last_seq
    full = store.load_full(session_id, last=3)
    # the result's call lies beyond what widening reads: the window starts after the orphan result
    assert [m.seq for m in full.messages] == [last - 1, last]
    assert not orphans(full.messages)


def test_load_full_last_is_checked(harness: Harness, session_id: str) -> None:
    for bad in (0, -1, 10_001, "3", True):
        with pytest.raises(InvalidInput):
            harness.store.load_full(session_id, last=bad)  # type: ignore[arg-type]


def test_a_result_without_any_call_is_the_transcripts_own_and_is_kept(store: SessionStore, session_id: str) -> None:
    store.append_messages(session_id, [{"role": "tool", "tool_call_id": "never-made", "content": "x"}, user("y")])
    assert [m.seq for m in store.load_full(session_id).messages] == [1, 2]
    assert [m.seq for m in store.load_full(session_id, last=2).messages] == [1, 2]
    assert [m.seq for m in store.load_full(session_id, last=1).messages] == [2]


def test_a_result_with_no_call_anywhere_does_not_widen_the_window(store: SessionStore, session_id: str) -> None:
    store.append_messages(session_id, [user(f"m{i}") for i in range(20)])
    store.append_messages(session_id, [{"role": "tool", "tool_call_id": "never-made", "content": "x"}, user("y")])
    store.append_messages(session_id, openai_chat("real"))  # 23..26: a call, its two results, the answer
    assert [m.seq for m in store.load_full(session_id, last=3).messages] == list(range(23, 27))
    assert [m.seq for m in store.load_full(session_id, last=6).messages] == list(range(21, 27))


def test_a_window_the_state_names_starts_after_its_sequence_number(harness: Harness) -> None:
    store = harness.store
    sid = store.create_session("alice").id
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i + 1}"} for i in range(12)]
    store.save_full(sid, messages, {"agent": {"window": {"removed": 7}, "other": "x"}})
    path = "agent.window.removed"
    full = store.load_full(sid, after_seq_at=path)
    assert [m.seq for m in full.messages] == [8, 9, 10, 11, 12] and full.state is not None
    assert full.state.state["agent"]["window"]["removed"] == 7
    assert [m.seq for m in store.load_full(sid, after_seq_at=path, last=3).messages] == [10, 11, 12]
    for ignored in ("agent.window", "agent.other", "agent.missing.removed", "nothing"):  # no integer there
        assert [m.seq for m in store.load_full(sid, after_seq_at=ignored).messages] == list(range(1, 13)), ignored
    store.save_state(sid, {"agent": {"window": {"removed": 12}}})
    assert store.load_full(sid, after_seq_at=path).messages == []
    store.save_state(sid, {"agent": {"window": {"removed": True}}})  # a boolean is not a position
    assert len(store.load_full(sid, after_seq_at=path).messages) == 12
    for bad in ("", "a..b", "a.b c", ".".join(["f"] * 9), "x" * 65, 3):
        with pytest.raises(InvalidInput):
            store.load_full(sid, after_seq_at=bad)  # type: ignore[arg-type]
