"""The DynamoDB backend's own side of test_spill.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

from typing import Any

import pytest

from store import PayloadTooLarge, SessionStore
from tests.conftest import Harness
from tests.contract.test_spill import MB, blob


def test_small_bodies_stay_inline(dyn: Harness) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    dyn.requests.clear()
    store.append_messages(sid, [{"role": "user", "content": "x" * 200_000}])  # compresses well
    assert dyn.requests.names == ["TransactWriteItems"] and dyn.objects() == []


def test_spilled_append_costs_and_layout(dyn: Harness) -> None:
    """Intent + upload + commit; the object is named by its SHA-256 under the session's prefix."""
    store = dyn.store
    sid = store.create_session("alice").id
    dyn.requests.clear()
    rec = store.append_messages(sid, [{"role": "tool", "content": blob(MB)}])[0]
    assert dyn.requests.names == ["TransactWriteItems", "PutObject", "TransactWriteItems"]
    (key,) = dyn.objects()
    from store.aws.object_keys import digest

    assert key.startswith(f"sessions/{digest('alice')}/{sid}/payloads/")
    stored = dyn.s3.get_object(Bucket=dyn.tables.bucket, Key=key)["Body"].read()
    import hashlib

    assert key.rsplit("/", 1)[1] == hashlib.sha256(stored).hexdigest()
    sessions, messages, _ = dyn.snapshot()
    assert "ref" in messages[0] and "b" not in messages[0]
    assert not any(i["pk"]["S"].startswith("U#") for i in sessions), "a committed upload leaves no intent"
    dyn.requests.clear()
    assert store.get_message(sid, rec.id).content == rec.content
    assert dyn.requests.count("GetObject") == 1


def test_page_of_spilled_messages_is_fetched_concurrently(dyn: Harness, s3_client: Any) -> None:
    """The first two GetObjects of a page wait for each other (a barrier): fetched one after the other, the
    first would wait alone until the barrier gave up. (Counting threads is not enough: a loaded machine may
    let one pooled thread run every fetch even when they were all handed out at once.)"""
    import threading

    store = dyn.store
    sid = store.create_session("alice").id
    bodies = [blob(600 * 1024) for _ in range(4)]
    store.append_messages(sid, [{"role": "tool", "content": b} for b in bodies])
    together = threading.Barrier(2, timeout=30)
    met: list[bool] = []
    lock = threading.Lock()

    def seen(**_: Any) -> None:
        with lock:
            first_two = len(met) < 2
            if first_two:
                met.append(False)
        if first_two:
            try:
                together.wait()
                met.append(True)
            except threading.BrokenBarrierError:
                pass

    s3_client.meta.events.register("before-call.s3.GetObject", seen)
    try:
        assert [m.content for m in store.list_messages(sid).items] == bodies
    finally:
        s3_client.meta.events.unregister("before-call.s3.GetObject", seen)
    assert met.count(True) == 2, "two fetches of the page were in flight at once"


def test_store_without_bucket_keeps_the_item_limit(dynamodb_client: Any, clock: Any) -> None:
    from infra.local.aws import create_tables

    tables = create_tables(dynamodb_client, prefix="nobucket")
    store = SessionStore(tables.sessions, tables.messages, client=dynamodb_client)
    sid = store.create_session("alice").id
    with pytest.raises(PayloadTooLarge):
        store.append_messages(sid, [{"role": "user", "content": blob(600_000)}])
    assert store.get_session(sid).last_seq == 0
