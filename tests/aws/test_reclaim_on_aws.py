"""The DynamoDB backend's own side of test_reclaim.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

from typing import Any

import pytest

from store import StoreUnavailable
from tests.conftest import Harness
from tests.contract.test_reclaim import MB, blob, fill
from tests.streams import stream_records

TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}


def expire(dyn: Harness, inspector: Any, key: dict[str, Any]) -> dict[str, Any]:
    """Do what DynamoDB's TTL does to an expired item, and return the stream record it produces."""
    assert dyn.tables is not None
    inspector.delete_item(TableName=dyn.tables.sessions, Key=key)
    record = stream_records(inspector, dyn.tables.sessions)[-1]
    assert record["eventName"] == "REMOVE"
    return {**record, "userIdentity": TTL_IDENTITY}


def intents(dyn: Harness) -> list[dict[str, Any]]:
    sessions, _, _ = dyn.snapshot()
    return [i for i in sessions if i["pk"]["S"].startswith("U#")]


def crash_on_commit(client: Any) -> Any:
    """Make the next TransactWriteItems that deletes an intent die without a response (the writer crashed)."""
    from botocore.exceptions import EndpointConnectionError

    def hook(params: dict[str, Any], **_: Any) -> None:
        if any("Delete" in a for a in params.get("TransactItems", [])):
            raise EndpointConnectionError(endpoint_url="https://dynamodb")

    client.meta.events.register("before-parameter-build.dynamodb.TransactWriteItems", hook)
    return hook


def test_an_upload_that_never_commits_is_reclaimed(dyn: Harness, dynamodb_client: Any, inspector_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    hook = crash_on_commit(dynamodb_client)
    try:
        with pytest.raises(StoreUnavailable):  # the writer "dies" here
            store.put_artifact(sid, "a.txt", b"orphan")
        with pytest.raises(StoreUnavailable):
            store.append_messages(sid, [{"role": "tool", "content": blob(MB)}])
    finally:
        dynamodb_client.meta.events.unregister("before-parameter-build.dynamodb.TransactWriteItems", hook)
    pending = intents(dyn)
    assert len(dyn.objects()) == 2 and len(pending) == 2
    assert all(int(i["ttl"]["N"]) > 0 for i in pending)
    assert store.list_artifacts(sid) == [] and store.get_session(sid).last_seq == 0
    # a removal by anyone but DynamoDB's TTL (the writer itself, say) releases nothing
    plain = stream_records(inspector_client, dyn.tables.sessions)
    assert store.reclaim([{**r, "eventName": "REMOVE"} for r in plain if r["eventName"] == "INSERT"]) == 0
    reclaimed = 0
    for intent in pending:
        record = expire(dyn, inspector_client, {"pk": intent["pk"], "sk": intent["sk"]})
        reclaimed += store.reclaim([record])
        assert store.reclaim([record]) == 1  # idempotent: deleting what is gone succeeds
    assert reclaimed == 2 and dyn.objects() == []


def test_replaced_and_deleted_items_release_their_objects(dyn: Harness, inspector_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    store.save_state(sid, {"s": blob(MB)})
    first = set(dyn.objects())
    store.save_state(sid, {"s": blob(MB)})
    second = set(dyn.objects()) - first
    store.save_checkpoint("run", "r1", {"c": blob(MB)})
    store.put_artifact(sid, "a.txt", b"1")
    store.put_artifact(sid, "a.txt", b"2")
    store.delete_checkpoint("run", "r1")
    before = set(dyn.objects())
    # delete_artifact deletes its objects itself; the stream would do it too
    records = stream_records(inspector_client, dyn.tables.sessions)
    assert store.reclaim(records) >= 2
    left = set(dyn.objects())
    assert first.isdisjoint(left), "the replaced state's object goes"
    assert second <= left, "the current state's object stays"
    assert not any(k.startswith("checkpoints/run/r1/") for k in left), "the deleted checkpoint's object goes"
    assert len([k for k in left if "/artifacts/" in k]) == 2, "artifact versions are kept"
    assert left < before
    assert store.load_state(sid).state["s"] and store.get_artifact(sid, "a.txt", version=1) == b"1"


def test_trace_batch_of_a_live_session_is_kept(dyn: Harness, dynamodb_client: Any, inspector_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice").id

    def crash(params: dict[str, Any], **_: Any) -> None:
        from botocore.exceptions import EndpointConnectionError

        raise EndpointConnectionError(endpoint_url="https://dynamodb")

    dynamodb_client.meta.events.register("before-parameter-build.dynamodb.DeleteItem", crash)
    try:
        with pytest.raises(StoreUnavailable):  # the writer dies after writing the batch
            store.append_trace_events(sid, "r", [{"e": 1}])
    finally:
        dynamodb_client.meta.events.unregister("before-parameter-build.dynamodb.DeleteItem", crash)
    (pending,) = intents(dyn)
    record = expire(dyn, inspector_client, {"pk": pending["pk"], "sk": pending["sk"]})
    assert store.reclaim([record]) == 0 and store.load_trace_events(sid, "r") == [{"e": 1}]
    # the same record once the session is gone (an upload that landed after the delete) releases it
    dyn.s3.put_object(Bucket=dyn.tables.bucket, Key=pending["objects"]["L"][0]["S"], Body=b"late")
    store.delete_session(sid)
    dyn.s3.put_object(Bucket=dyn.tables.bucket, Key=pending["objects"]["L"][0]["S"], Body=b"late")
    assert store.reclaim([record]) == 1 and dyn.objects() == []


def test_a_session_removed_by_ttl_is_purged(dyn: Harness, inspector_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice", retention=60).id
    fill(store, sid)
    dyn.clock.advance(120)  # expired: reads as absent; DynamoDB's TTL removes the head some time later
    assert store.get_session(sid) is None
    record = expire(dyn, inspector_client, {"pk": {"S": f"S#{sid}"}, "sk": {"S": "HEAD"}})
    store.reclaim([record])
    assert dyn.snapshot() == ([], [], []), "messages, children, owner entry, objects and the tombstone are gone"
    # the purge's own removal of its tombstone is recognised and left alone
    tomb = [r for r in stream_records(inspector_client, dyn.tables.sessions) if r["eventName"] == "REMOVE"][-1]
    assert tomb["dynamodb"]["OldImage"]["cascade"] == {"BOOL": True}
    assert store.reclaim([tomb]) == 0


def test_an_old_removal_does_not_purge_a_new_session(dyn: Harness, inspector_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    store.delete_session(sid)
    removal = [r for r in stream_records(inspector_client, dyn.tables.sessions) if r["eventName"] == "REMOVE"]
    head_removal = next(r for r in removal if r["dynamodb"]["OldImage"]["sk"]["S"] == "HEAD")
    store.create_session("alice", session_id=sid)
    store.append_messages(sid, [{"role": "user", "content": "new life"}])
    store.put_artifact(sid, "a.txt", b"new")
    store.reclaim([head_removal])  # the cascade processes the old delete late
    assert [m.content for m in store.list_messages(sid).items] == ["new life"]
    assert store.get_artifact(sid, "a.txt") == b"new"


def test_an_explicit_delete_is_backed_up(dyn: Harness, inspector_client: Any) -> None:
    """The cascade repeats the purge after a delete, catching an upload that landed after it."""
    store = dyn.store
    sid = store.create_session("alice").id
    store.put_artifact(sid, "a.txt", b"x")
    store.delete_session(sid)
    from store.aws.object_keys import session_prefix

    late = session_prefix("alice", sid) + "traces/run/0000000001.jsonl.gz"
    dyn.s3.put_object(Bucket=dyn.tables.bucket, Key=late, Body=b"late")
    records = [r for r in stream_records(inspector_client, dyn.tables.sessions) if r["eventName"] == "REMOVE"]
    store.reclaim(records)
    assert dyn.snapshot() == ([], [], [])


def test_a_sessions_objects_are_deleted_in_pages(dyn: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    from store.aws.plans import objects

    monkeypatch.setattr(objects, "DELETE_OBJECTS_MAX", 3)
    sid = dyn.store.create_session("alice").id
    fill(dyn.store, sid)
    assert len(dyn.objects()) == 8
    assert dyn.requests is not None
    dyn.requests.clear()
    dyn.store.delete_session(sid)
    assert dyn.requests.count("ListObjectsV2") >= 3 and dyn.requests.count("DeleteObjects") >= 3
    assert dyn.objects() == []
