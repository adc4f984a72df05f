"""Failures on the DynamoDB backend: retries, error mapping, atomicity, and the unprocessed-items loops."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.stub import Stubber

from infra.local.aws import local_client
from store import SessionNotFound, SessionStore, StoreError, StoreUnavailable
from store.aws.driver import SyncDriver
from store.aws.plans.base import Context, batch_delete, batch_get
from store.session_store import retry_config
from tests.conftest import FakeClock, Harness, make_harness


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


def failing_sends(
    client: Any,
    op: str,
    responses: list[tuple[int, str]],
    *,
    reach_server: bool = False,
    extra: dict[str, Any] | None = None,
) -> list[int]:
    """Make the next sends of `op` answer (status, AWS error code), with the `extra` fields in the error
    body (a cancellation's reasons); count attempts.

    This handler runs before moto's (more specific event). With reach_server=False the request is
    pointed away from moto, so nothing is applied; with True moto applies it and only the response
    is replaced: a write that succeeded but whose response was lost."""
    attempts: list[int] = []

    def before_send(request: Any, **_: Any) -> AWSResponse | None:
        attempts.append(1)
        if not responses:
            return None
        if not reach_server:
            request.url = "https://injected-failure.invalid/"
        status, code = responses.pop(0)
        error = {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "injected", **(extra or {})}
        body = json.dumps(error).encode()
        headers: Any = {"Content-Type": "application/x-amz-json-1.0"}
        return AWSResponse(request.url, status, headers, _Raw(body))

    client.meta.events.register(f"before-send.dynamodb.{op}", before_send)
    return attempts


@pytest.fixture
def fresh_client(aws: None) -> Any:
    """A client of its own (event hooks registered on it die with the test)."""
    return local_client(config=retry_config(Config(retries={"mode": "standard", "max_attempts": 4})))


@pytest.fixture
def dyn(fresh_client: Any, inspector_client: Any, clock: FakeClock) -> Harness:
    return make_harness("dynamodb", clock, fresh_client, inspector_client)


@pytest.mark.parametrize(
    "status,code",
    [
        (400, "ThrottlingException"),
        (400, "ProvisionedThroughputExceededException"),
        (500, "InternalServerError"),
        (503, "ServiceUnavailable"),
    ],
)
def test_throttling_and_5xx_are_retried(dyn: Harness, fresh_client: Any, status: int, code: str) -> None:
    sid = dyn.store.create_session("alice").id
    attempts = failing_sends(fresh_client, "TransactWriteItems", [(status, code), (status, code)])
    records = dyn.store.append_messages(sid, [{"role": "user", "content": "survives"}])
    assert len(attempts) == 3 and records[0].seq == 1
    assert [m.content for m in dyn.store.list_messages(sid).items] == ["survives"]


@pytest.mark.parametrize("op", ["append", "save_full", "save_state"])
def test_lost_response_is_not_applied_twice(dyn: Harness, fresh_client: Any, op: str) -> None:
    """The write reaches DynamoDB, the response is lost (500), botocore resends it: the store must
    recognise its own write instead of applying it again (moto ignores ClientRequestToken)."""
    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "before"}])
    attempts = failing_sends(fresh_client, "TransactWriteItems", [(500, "InternalServerError")], reach_server=True)
    if op == "append":
        records = store.append_messages(sid, [{"role": "user", "content": "once"}])
        assert records[0].seq == 2
    elif op == "save_full":
        snap = store.save_full(sid, [{"role": "user", "content": "once"}], {"v": 1})
        assert snap.seq == 2 and snap.version == 1
    else:
        assert store.save_state(sid, {"v": 1}) == 1
    assert len(attempts) == 2
    contents = [m.content for m in store.list_messages(sid).items]
    assert contents == (["before"] if op == "save_state" else ["before", "once"])
    head = store.get_session(sid)
    assert head.last_seq == len(contents) and head.state_version == (0 if op == "append" else 1)


def test_lost_response_on_create_is_not_a_conflict_with_itself(dyn: Harness, fresh_client: Any) -> None:
    failing_sends(fresh_client, "TransactWriteItems", [(500, "InternalServerError")], reach_server=True)
    created = dyn.store.create_session("alice", session_id="once", title="t")
    assert dyn.store.get_session("once") == created
    from store import SessionExists

    with pytest.raises(SessionExists):  # a real second create still conflicts
        dyn.store.create_session("alice", session_id="once")


def test_persistent_throttling_becomes_store_unavailable(dyn: Harness, fresh_client: Any) -> None:
    sid = dyn.store.create_session("alice").id
    failing_sends(fresh_client, "TransactWriteItems", [(400, "ThrottlingException")] * 10)
    before = dyn.snapshot()
    with pytest.raises(StoreUnavailable, match="throttled"):
        dyn.store.append_messages(sid, [{"role": "user", "content": "x"}])
    assert dyn.snapshot() == before


def test_unreachable_endpoint_is_store_unavailable() -> None:
    client = local_client(
        endpoint_url="http://127.0.0.1:9",
        config=Config(retries={"mode": "standard", "max_attempts": 1}, connect_timeout=1),
    )
    store = SessionStore("s", "m", client=client)
    with pytest.raises(StoreUnavailable):
        store.get_session("x")
    with pytest.raises(StoreUnavailable, match=r"sessions table 's'.*messages table 'm'"):
        store.health_check()


def test_health_check_names_a_missing_table(dyn: Harness, fresh_client: Any) -> None:
    dyn.store.health_check()
    assert dyn.tables is not None
    broken = SessionStore(dyn.tables.sessions, "no-such-table", client=fresh_client)
    with pytest.raises(StoreUnavailable, match="messages table 'no-such-table'") as info:
        broken.health_check()
    assert "sessions table" not in str(info.value)


def test_no_botocore_error_leaks(fresh_client: Any) -> None:
    store = SessionStore("no-such-sessions", "no-such-messages", client=fresh_client)
    for call in (
        lambda: store.get_session("x"),
        lambda: store.create_session("a"),
        lambda: store.append_messages("x", [{"role": "user", "content": "y"}]),
        lambda: store.search("a", "q"),
    ):
        with pytest.raises(StoreError):
            call()


def test_failed_transaction_leaves_nothing_behind(dyn: Harness, inspector_client: Any) -> None:
    """save_full writes head, state and messages in one transaction: when one action fails, none applies."""
    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "one"}])
    store.save_state(sid, {"v": 1})
    # plant an item where the second new message would go: its Put condition will fail
    assert dyn.tables is not None
    inspector_client.put_item(
        TableName=dyn.tables.messages, Item={"sid": {"S": sid}, "seq": {"N": "3"}, "mid": {"S": "planted"}}
    )
    before = dyn.snapshot()
    with pytest.raises(StoreError):
        store.save_full(sid, [{"role": "user", "content": "two"}, {"role": "user", "content": "three"}], {"v": 2})
    assert dyn.snapshot() == before
    assert store.load_state(sid).state == {"v": 1} and store.get_session(sid).last_seq == 1


def test_deleting_flag_hides_the_session_until_purged(dyn: Harness, inspector_client: Any) -> None:
    """A delete interrupted after marking the head: the session is absent, and the next delete or create
    of that id finishes the purge."""
    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "x"}] * 5)
    assert dyn.tables is not None
    inspector_client.update_item(
        TableName=dyn.tables.sessions,
        Key={"pk": {"S": f"S#{sid}"}, "sk": {"S": "HEAD"}},
        UpdateExpression="SET deleting = :t",
        ExpressionAttributeValues={":t": {"BOOL": True}},
    )
    assert store.get_session(sid) is None
    with pytest.raises(SessionNotFound):
        store.append_messages(sid, [{"role": "user", "content": "late"}])
    again = store.create_session("alice", session_id=sid)
    assert again.last_seq == 0 and store.list_messages(sid).items == []


def _run_with_stub(stubber_setup: Any, plan: Any) -> Any:
    client = local_client()
    with Stubber(client) as stub:
        stubber_setup(stub)
        result = SyncDriver({"dynamodb": client}, sleep=lambda _s: None).run(plan)
        stub.assert_no_pending_responses()
    return result


def test_batch_write_retries_unprocessed_items() -> None:
    """Driven by hand (the plan is sans-IO): 30 keys go out as two requests at once; the one item left
    unprocessed is resubmitted alone after a backoff."""
    from store.aws.calls import Parallel, Sleep

    ctx = Context("sessions", "messages")
    keys = [{"sid": {"S": "s"}, "seq": {"N": str(i)}} for i in range(30)]
    plan = batch_delete(ctx, "messages", keys)
    first = next(plan)
    assert isinstance(first, Parallel)
    assert [len(c.params["RequestItems"]["messages"]) for c in first.calls] == [25, 5]
    leftover = [{"DeleteRequest": {"Key": keys[3]}}]
    assert isinstance(plan.send([{"UnprocessedItems": {"messages": leftover}}, {}]), Sleep)
    retry = plan.send(None)
    assert isinstance(retry, Parallel) and [c.params["RequestItems"]["messages"] for c in retry.calls] == [leftover]
    with pytest.raises(StopIteration):
        plan.send([{"UnprocessedItems": {}}])


def test_batch_get_retries_unprocessed_keys() -> None:
    ctx = Context("sessions", "messages")
    keys = [{"pk": {"S": f"S#{i}"}, "sk": {"S": "HEAD"}} for i in range(2)]

    def setup(stub: Stubber) -> None:
        stub.add_response(
            "batch_get_item",
            {
                "Responses": {"sessions": [keys[0]]},
                "UnprocessedKeys": {"sessions": {"Keys": [keys[1]], "ConsistentRead": True}},
            },
            {"RequestItems": {"sessions": {"Keys": keys, "ConsistentRead": True}}},
        )
        stub.add_response(
            "batch_get_item",
            {"Responses": {"sessions": [keys[1]]}},
            {"RequestItems": {"sessions": {"Keys": [keys[1]], "ConsistentRead": True}}},
        )

    assert _run_with_stub(setup, batch_get(ctx, "sessions", keys)) == keys


def test_a_failures_traceback_names_the_plans_line(fresh_client: Any) -> None:
    """A StoreError from AWS is chained to the failure as the plan met it: its traceback runs through the plan
    that made the call (it showed front, backend and driver only)."""
    import traceback

    from store import SessionStore, StoreError

    store = SessionStore("no-such-table", "no-such-messages", client=fresh_client)
    with pytest.raises(StoreError) as failed:
        store.get_session("s1")
    text = "".join(traceback.format_exception(failed.value))
    assert "store/aws/plans/sessions.py" in text and "in get_session" in text
    assert failed.value.__cause__ is not None and "botocore" not in type(failed.value.__cause__).__module__
