"""The message index kept by the stack's cascade function, fed DynamoDB stream records as Lambda delivers them:
a head whose `last_seq` moved has its new messages indexed (forward and after a pop); a session whose head is
removed (deleted, or expired: moto emits no TTL removal, so that record is synthesized) takes its index."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from functions import runtime
from tests.api.test_cascade import handle, remove_like_ttl, ttl_removal
from tests.conftest import Harness
from tests.streams import stream_records


@pytest.fixture
def cascade(dyn: Harness, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    assert dyn.tables is not None and dyn.tables.memories is not None
    monkeypatch.setenv("MEMORIES_TABLE", dyn.tables.memories)
    runtime.use_store(dyn.store)
    yield dyn
    runtime.use_store(None)


def index_entries(dyn: Harness) -> list[str]:
    """The index's items in the memories table (their sort keys)."""
    return sorted(i["sk"]["S"] for i in dyn.memories() or [] if "\x1fmessages" in i["sk"]["S"])


def feed(dyn: Harness, inspector: Any, seen: int) -> int:
    """Hand the cascade the sessions table's stream records it has not seen yet: how many there are now."""
    assert dyn.tables is not None
    records = stream_records(inspector, dyn.tables.sessions)
    assert handle(records[seen:]) == {"batchItemFailures": []}
    return len(records)


def test_the_cascade_indexes_what_a_turn_wrote_and_follows_a_pop(cascade: Harness, inspector_client: Any) -> None:
    store = cascade.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "my passport expires in March"}])
    assert store.search_messages("alice", "passport", mode="keyword").items == []  # not on the write's path
    seen = feed(cascade, inspector_client, 0)
    assert [h.seq for h in store.search_messages("alice", "passport", mode="keyword").items] == [1]
    store.append_messages(sid, [{"role": "assistant", "content": "renew the passport before the trip"}])
    seen = feed(cascade, inspector_client, seen)
    assert sorted(h.seq for h in store.search_messages("alice", "passport", mode="keyword").items) == [1, 2]
    store.pop_message(sid)
    feed(cascade, inspector_client, seen)
    assert [h.seq for h in store.search_messages("alice", "passport", mode="keyword").items] == [1]
    assert len(index_entries(cascade)) == 1


def test_a_removed_head_takes_its_index(cascade: Harness, inspector_client: Any) -> None:
    store = cascade.store
    kept = store.create_session("alice").id
    gone = store.create_session("alice", retention=60).id
    for sid in (kept, gone):
        store.append_messages(sid, [{"role": "user", "content": f"note {os.urandom(4).hex()}"}])
    feed(cascade, inspector_client, 0)
    assert len(index_entries(cascade)) == 2
    cascade.clock.advance(3600)
    head = remove_like_ttl(cascade, inspector_client, f"S#{gone}", "HEAD")
    assert handle([ttl_removal(head, 1)]) == {"batchItemFailures": []}
    assert [f"/{kept}/" in e for e in index_entries(cascade)] == [True]
