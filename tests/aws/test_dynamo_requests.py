"""The access-pattern claims of docs/data-model.md, measured on the DynamoDB backend."""

from __future__ import annotations

from typing import Any

import pytest

from store import InvalidInput, SessionStore
from tests.conftest import Harness


def test_append_is_one_request_when_position_is_known(dyn: Harness) -> None:
    store, req = dyn.store, dyn.requests
    sid = store.create_session("alice").id
    req.clear()
    for i in range(5):
        store.append_messages(sid, [{"role": "user", "content": f"m{i}"}])
    assert req.names == ["TransactWriteItems"] * 5


def test_append_from_a_cold_store_is_two_requests(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    dyn.store.append_messages(sid, [{"role": "user", "content": "a"}])
    cold = dyn.twin()
    dyn.requests.clear()
    cold.append_messages(sid, [{"role": "user", "content": "b"}])
    assert dyn.requests.names == ["GetItem", "TransactWriteItems"]


def test_append_cost_does_not_grow_with_history(dyn: Harness, dynamodb_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    sizes: list[int] = []

    def measure(request: Any, **_: Any) -> None:
        if "TransactWriteItems" in str(request.headers.get("X-Amz-Target", b"")):
            sizes.append(len(request.body or b""))

    dynamodb_client.meta.events.register("before-send.dynamodb.TransactWriteItems", measure)
    try:
        store.append_messages(sid, [{"role": "user", "content": "x" * 200}])
        for start in range(0, 600, 97):
            store.append_messages(sid, [{"role": "user", "content": "filler"}] * min(97, 600 - start))
        dyn.requests.clear()
        store.append_messages(sid, [{"role": "user", "content": "x" * 200}])
    finally:
        dynamodb_client.meta.events.unregister("before-send.dynamodb.TransactWriteItems", measure)
    assert dyn.requests.names == ["TransactWriteItems"]
    first, last = sizes[0], sizes[-1]
    assert abs(last - first) < 64, (first, last)  # a few digits of seq, not the history


def test_list_and_last_messages_are_one_query_per_page(dyn: Harness) -> None:
    store, req = dyn.store, dyn.requests
    sid = store.create_session("alice").id
    for _ in range(3):
        store.append_messages(sid, [{"role": "user", "content": "y" * 100}] * 90)
    req.clear()
    page = store.list_messages(sid, limit=50)
    assert len(page.items) == 50 and req.names == ["GetItem", "Query"]
    req.clear()
    store.list_messages(sid, limit=50, cursor=page.next_cursor)
    assert req.names == ["GetItem", "Query"]
    req.clear()
    assert len(store.last_messages(sid, 20)) == 20
    assert req.names == ["GetItem", "Query"]
    req.clear()
    assert len(store.list_messages(sid).items) == 270  # well under 1 MB: one page
    assert req.names == ["GetItem", "Query"]


def test_large_transcript_pages_by_megabyte(dyn: Harness) -> None:
    store, req = dyn.store, dyn.requests
    sid = store.create_session("alice").id
    import os

    blob = os.urandom(30_000).hex()  # ~60 KB of JSON, ~45 KB stored
    for _ in range(3):
        store.append_messages(sid, [{"role": "tool", "content": blob}] * 16)
    req.clear()
    assert len(store.list_messages(sid).items) == 48
    assert req.count("Query") >= 2  # more than 1 MB: DynamoDB pages, the store follows


def test_state_and_checkpoint_writes_are_one_request_when_warm(dyn: Harness) -> None:
    store, req = dyn.store, dyn.requests
    sid = store.create_session("alice").id
    req.clear()
    store.save_state(sid, {"a": 1})
    store.save_checkpoint("session", sid, {"c": 1})
    store.save_checkpoint("run", "r1", {"c": 1})
    store.save_full(sid, [{"role": "user", "content": "a"}], {"a": 2})
    assert req.names == ["TransactWriteItems", "TransactWriteItems", "PutItem", "TransactWriteItems"]
    req.clear()
    store.load_full(sid)
    assert req.names == ["TransactGetItems", "Query"]
    others = [store.create_session(owner).id for owner in ("alice", "alice", "bob", "carol")]
    store.save_state(others[2], {"b": 1}, owner="bob")
    req.clear()
    full = store.load_full(sid, with_states={others[0]: None, others[1]: "alice", others[2]: "bob", others[3]: None})
    assert req.names == ["TransactGetItems", "Query"]  # four more sessions' heads and states in the same read
    assert [None if s is None else s.state for s in full.states.values()] == [None, None, {"b": 1}, None]


def test_head_item_carries_ttl_for_dynamodb_to_expire(dyn: Harness, inspector_client: Any) -> None:
    s = dyn.store.create_session("alice", retention=3600)
    sessions, _, _ = dyn.snapshot()
    head = next(i for i in sessions if i["sk"]["S"] == "HEAD")
    assert int(head["ttl"]["N"]) == int(s.expires_at.timestamp())


def test_stores_share_one_boto3_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from store import session_store

    monkeypatch.setenv("SESSIONS_TABLE", "s")
    monkeypatch.setenv("MESSAGES_TABLE", "m")
    monkeypatch.setattr(session_store, "_sdk_sessions", {})
    created: list[object] = []
    import boto3

    real = boto3.Session

    def counting_session(*args: Any, **kwargs: Any) -> Any:
        created.append(object())
        return real(*args, **kwargs)

    monkeypatch.setattr(boto3, "Session", counting_session)
    a, b = SessionStore.from_env(), SessionStore.from_env()
    assert a.backend_name == b.backend_name == "dynamodb"
    assert len(created) == 1


def test_from_env_requires_table_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SESSIONS_TABLE", raising=False)
    monkeypatch.setenv("MESSAGES_TABLE", "m")
    with pytest.raises(InvalidInput, match="SESSIONS_TABLE"):
        SessionStore.from_env()


def test_reads_teach_the_store_its_position(dyn: Harness) -> None:
    sid = dyn.store.create_session("alice").id
    dyn.store.append_messages(sid, [{"role": "user", "content": "a"}])
    cold = dyn.twin()
    cold.load_full(sid)
    dyn.requests.clear()
    cold.save_full(sid, [{"role": "assistant", "content": "b"}], {"s": 1})
    assert dyn.requests.names == ["TransactWriteItems"]


def test_missing_region_is_a_store_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    import boto3

    with pytest.raises(InvalidInput, match="region"):
        SessionStore("s", "m", session=boto3.Session())


def test_pop_message_is_two_reads_and_one_transaction(dyn: Harness) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    for i in range(3):
        store.append_messages(sid, [{"role": "user", "content": f"m{i}"}])
    dyn.requests.clear()
    store.pop_message(sid)
    # the head, the last message, then head + state check + delete in one transaction
    assert dyn.requests.names == ["GetItem", "GetItem", "TransactWriteItems"]


def test_popping_a_message_that_shares_an_item_unpacks_it_first(dyn: Harness) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": f"m{i}"} for i in range(3)])
    dyn.requests.clear()
    assert store.pop_message(sid).content == "m2"
    # the head, the pack (keyed at its last message), the pack replaced by its messages' items, the last
    # message's own item, then the pop's transaction
    assert dyn.requests.names == ["GetItem", "GetItem", "TransactWriteItems", "GetItem", "TransactWriteItems"]
    _, messages, _ = dyn.snapshot()
    assert sorted(int(m["seq"]["N"]) for m in messages) == [1, 2] and not any("first" in m for m in messages)
    assert [m.content for m in store.list_messages(sid).items] == ["m0", "m1"]
