"""The conversation model on every backend: a session's preview, search over the canonical words."""

from __future__ import annotations

from typing import Any

from tests.conftest import Harness

TOOL_TURN: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "What is the   weather\nin Lisbon?"}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Lisbon"}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]},
    {"role": "assistant", "content": "It is sunny."},
]


def test_a_session_without_a_title_shows_its_first_user_message(harness: Harness) -> None:
    store = harness.store
    sid = store.create_session("alice").id
    assert store.get_session(sid).preview is None
    store.append_messages(sid, [{"role": "system", "content": "no user yet"}])
    assert store.get_session(sid).preview is None  # a system message is nobody's question
    store.append_messages(sid, TOOL_TURN[1:])
    assert store.get_session(sid).preview == "What is the weather in Lisbon?"
    store.append_messages(sid, [{"role": "user", "content": "And tomorrow?"}])
    assert store.get_session(sid).preview == "What is the weather in Lisbon?"  # set once
    listed = store.list_sessions("alice").items
    assert [s.preview for s in listed] == ["What is the weather in Lisbon?"]
    other = store.create_session("alice").id
    store.save_full(other, [{"role": "user", "content": "x" * 500}], {"k": 1})
    preview = store.get_session(other).preview
    assert preview is not None and len(preview) == 120 and preview.endswith("…")


def test_search_matches_the_words_of_a_conversation_not_its_keys(harness: Harness) -> None:
    store = harness.store
    sid = store.create_session("alice").id
    store.append_messages(sid, TOOL_TURN)
    found = {h.seq for h in store.search("alice", "lisbon")}
    assert found == {2, 3}  # the question and the tool call's arguments
    assert {h.seq for h in store.search("alice", "sunny")} == {4, 5}  # the tool result and the answer
    assert {h.seq for h in store.search("alice", "weather")} >= {2, 3}  # the tool's name
    for key in ("tool_use", "tool_use_id", "input", "city", "type"):
        assert store.search("alice", key) == [], key


def test_conversations_only_leaves_out_what_adapters_keep_for_themselves(harness: Harness) -> None:
    store = harness.store
    chat = store.create_session("alice", metadata={"framework": "langgraph", "langgraph": "thread"}).id
    log = store.create_session("alice", metadata={"framework": "langgraph", "langgraph": "log"}).id
    shared = store.create_session("alice", metadata={"strands_storage": "strands-storage"}).id
    app = store.create_session("alice", metadata={"adk_scope": "user", "n": 1}).id
    plain = store.create_session("alice").id
    everything = {s.id for s in store.list_sessions("alice").items}
    assert everything == {chat, log, shared, app, plain}
    conversations = store.list_sessions("alice", conversations_only=True, limit=2)
    seen = [s.id for s in conversations.items]
    while conversations.next_cursor:
        conversations = store.list_sessions("alice", conversations_only=True, limit=2, cursor=conversations.next_cursor)
        seen += [s.id for s in conversations.items]
    assert sorted(seen) == sorted([chat, plain])
