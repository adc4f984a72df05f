"""The DynamoDB backend's own side of forks and rewinds: what one costs in requests, and a fork whose
transcript is too long to copy within the call (more than `Settings.fork_inline_messages`, at its default):
the call returns at once with the fork `copying`, the source's copied range is pinned meanwhile, the copy
job (`harness.cascade()`) brings it to an exact copy, and the copy leaves nothing borrowed behind."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from infra.local.apigw import LambdaContext
from infra.local.aws import local_client
from store import Conflict, InvalidInput, SessionStore, StoreError, TokenUsage, deadline
from store.aws import keys, object_keys
from store.session_store import s3_config
from tests.conftest import FakeClock, Harness, make_harness

LONG = 1_050  # more than the 1,000 messages a fork copies within its call (Settings.fork_inline_messages)
BIG = secrets.token_hex(450_000)  # a body too large for an item, even compressed: it is kept in S3


def long_session(store: SessionStore, sid: str, *, big_at: int | None = None) -> None:
    """`LONG` messages with usage; message `big_at` (if given) is too large for an item."""
    sent = 0
    while sent < LONG:
        batch = []
        for i in range(sent, min(LONG, sent + 97)):
            content = BIG if i + 1 == big_at else f"message {i + 1}"
            batch.append(
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": content,
                    "id": f"m{i + 1}",
                    "usage": {"input_tokens": 1, "output_tokens": i % 3},
                }
            )
        store.append_messages(sid, batch)
        sent += len(batch)


@pytest.fixture(scope="module")
def far_clients(contended_endpoint: str) -> tuple[Any, Any, Any]:
    """DynamoDB, S3 and DynamoDB Streams clients on moto's server in a process of its own (with per-item
    transaction backups: in-process moto copies a whole table for each transaction, and a long transcript
    makes that minutes)."""
    return (
        local_client(endpoint_url=contended_endpoint),
        local_client("s3", endpoint_url=contended_endpoint, config=s3_config(path_style=True)),
        local_client("dynamodbstreams", endpoint_url=contended_endpoint),
    )


@pytest.fixture
def far(far_clients: tuple[Any, Any, Any], clock: FakeClock) -> Iterator[Harness]:
    """The DynamoDB harness on that server."""
    dynamodb, s3, streams = far_clients
    harness = make_harness("dynamodb", clock, dynamodb, dynamodb, s3, s3)
    harness.stream_clients = (dynamodb, streams)
    yield harness
    assert harness.requests is not None
    harness.requests.detach()


def client_of(dyn: Harness) -> Any:
    return dyn.stream_clients[0] if dyn.stream_clients is not None else local_client()


def head(dyn: Harness, sid: str) -> dict[str, Any]:
    assert dyn.tables is not None
    found = client_of(dyn).get_item(TableName=dyn.tables.sessions, Key=keys.head_key(sid), ConsistentRead=True)
    return dict(found["Item"])


def inspector_delete(dyn: Harness, key: dict[str, Any]) -> None:
    assert dyn.tables is not None
    client_of(dyn).delete_item(TableName=dyn.tables.sessions, Key=key)


def test_a_short_fork_is_copied_within_the_call_in_a_few_requests(dyn: Harness) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": f"m{i}"} for i in range(10)])
    store.save_state(sid, {"s": 1})
    dyn.requests.clear()
    fork = store.fork_session(sid, new_session_id="copy")
    names = dyn.requests.names
    assert not fork.copying and fork.last_seq == 10
    # head, claim, records/kept states/artifacts, state, preview, the children, the fork's transaction,
    # then the copy (head, the source's range, own keys, one transaction), its publication (the source's head
    # for its pin, one transaction) and the fork's head
    assert names.count("TransactWriteItems") == 5, names
    assert "Scan" not in names and len(names) <= 16, names
    dyn.requests.clear()
    store.list_messages("copy")
    assert dyn.requests.names == ["GetItem", "Query"], "a finished fork reads as any session"


def test_a_long_fork_returns_at_once_and_is_readable_once_its_copy_is_done(far: Harness) -> None:
    dyn = far
    store = dyn.store
    sid = store.create_session("alice", title="long").id
    store.save_state(sid, {"s": 1})
    long_session(store, sid, big_at=7)
    store.put_artifact(sid, "a.txt", b"one")
    store.put_artifact(sid, "a.txt", b"two")
    wanted = store.list_messages(sid).items
    dyn.requests.clear()
    with deadline(10):
        fork = store.fork_session(sid, new_session_id="fork")
    assert fork.copying and fork.last_seq == LONG and fork.copied == 0
    # the claim of its id, what goes along (state, artifacts), the fork itself: no message copied
    assert dyn.requests.count("TransactWriteItems") == 3 and dyn.requests.count("Query") <= 5
    names = dyn.requests.names
    assert all(dyn.tables is not None and dyn.tables.messages not in repr(w) for w in names)
    # the fork is visible, copying, and refuses what needs its transcript (a retryable Conflict)
    assert store.get_session("fork").copying
    with pytest.raises(Conflict, match="still being copied"):
        store.list_messages("fork", limit=3)
    with pytest.raises(Conflict, match="still being copied"):
        store.append_messages("fork", [{"role": "user", "content": "too soon"}])
    # the source: the copied range is pinned; what follows it lives on
    with pytest.raises(Conflict, match="being copied into a fork"):
        store.update_usage(sid, "m2", {"input_tokens": 500})
    with pytest.raises(Conflict, match="being copied into a fork"):
        store.mark_compaction(sid, "m4")
    with pytest.raises(Conflict, match="being copied into a fork"):
        store.pop_message(sid)
    later = store.append_messages(sid, [{"role": "user", "content": "after"}])[0]
    store.update_usage(sid, later.id, {"input_tokens": 5})
    assert store.pop_message(sid).id == later.id
    # the cascade copies the rest; then the fork is an ordinary session, exactly the source as it was
    dyn.cascade()
    done = store.get_session("fork")
    assert not done.copying and done.last_seq == LONG and done.copied is None
    copied = store.list_messages("fork").items
    assert [m.id for m in copied] == [w.id for w in wanted]
    assert [m.content for m in copied] == [w.content for w in wanted]
    assert all(m.session_id == "fork" for m in copied)
    expected = TokenUsage()
    for m in copied:
        expected = expected.plus(m.usage)
    assert done.usage == expected and done.usage.input_tokens == LONG
    assert not any(k.startswith("pin:") for k in head(dyn, sid)), "the source's pin is gone"
    store.update_usage(sid, "m2", {"input_tokens": 500})  # no longer pinned
    assert store.get_message("fork", "m2").usage == TokenUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    dyn.requests.clear()
    store.list_messages("fork", after_seq=10, limit=10)
    assert dyn.requests.names == ["GetItem", "Query"]
    fork_prefix = object_keys.session_prefix("alice", "fork")
    assert [k for k in dyn.objects(fork_prefix) if "/payloads/" in k], "the big body is the fork's own copy"
    assert len([k for k in dyn.objects(fork_prefix) if "/artifacts/" in k]) == 2, "the fork's own objects"
    store.delete_session(sid)
    dyn.cascade()
    assert store.get_message("fork", "m7").content == BIG
    assert store.get_artifact("fork", "a.txt", version=1) == b"one"


def test_deleting_the_source_finishes_its_forks_copies_first(far: Harness) -> None:
    dyn = far
    store = dyn.store
    sid = store.create_session("alice").id
    long_session(store, sid)
    store.put_artifact(sid, "a.txt", b"kept")
    store.fork_session(sid, at_seq=1_020, new_session_id="fork")
    assert store.get_session("fork").copying
    store.delete_session(sid)  # no deadline: the fork's copy is finished, then the source goes
    assert store.get_session(sid) is None
    fork = store.get_session("fork")
    assert not fork.copying and fork.last_seq == 1_020
    assert [m.id for m in store.list_messages("fork", after_seq=1_015).items] == [f"m{i}" for i in range(1_016, 1_021)]
    assert store.get_artifact("fork", "a.txt") == b"kept"
    dyn.cascade()
    store.delete_session("fork")
    dyn.cascade()
    assert dyn.leftovers() == []


def test_a_long_rewind_is_copying_then_continues_and_its_branch_is_whole(far: Harness) -> None:
    dyn = far
    store = dyn.store
    sid = store.create_session("alice").id
    long_session(store, sid)
    rewound = store.rewind_session(sid, 1_040, branch="before")
    assert rewound.copying and rewound.last_seq == 1_040
    with pytest.raises(Conflict, match="still being copied"):
        store.append_messages(sid, [{"role": "user", "content": "too soon"}])
    dyn.cascade()
    assert store.list_messages(sid, branch="before", after_seq=1_048).items[-1].id == "m1050"
    done = store.get_session(sid)
    assert not done.copying and done.usage.input_tokens == 1_040
    assert store.append_messages(sid, [{"role": "user", "content": "new"}])[0].seq == 1_041
    assert [m.id for m in store.list_messages(sid, after_seq=1_038).items] == ["m1039", "m1040", done_id(store, sid)]
    restored = store.restore_branch(sid, "before")
    assert restored.last_seq == LONG and not restored.copying


def done_id(store: SessionStore, sid: str) -> str:
    return store.last_messages(sid, 1)[0].id


def test_a_fork_that_fails_or_dies_part_way_leaves_nothing(dyn: Harness, monkeypatch: Any) -> None:
    """A fork whose last write fails removes what it made; one whose process dies part-way leaves only its
    invisible head (deleting, with an hour's TTL), and the head's removal makes the cascade purge the rest."""
    from store.aws.plans import forks

    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": BIG}])  # a spilled body the fork copies along
    store.save_state(sid, {"big": BIG})
    store.put_artifact(sid, "a.txt", b"bytes")
    before = dyn.leftovers()
    real = forks._fork_actions

    def failing(*args: Any) -> Any:
        actions = real(*args)
        missing = {"TableName": "no-such-table", "Key": {"pk": {"S": "x"}, "sk": {"S": "y"}}}
        return actions.add("boom", {"ConditionCheck": {**missing, "ConditionExpression": "attribute_exists(pk)"}})

    monkeypatch.setattr(forks, "_fork_actions", failing)
    with pytest.raises(StoreError):
        store.fork_session(sid, new_session_id="fork")
    assert dyn.leftovers() == before, "the failed fork removed what it made"
    # the process dies after its copies: nothing undoes them, but the head is invisible and expires
    monkeypatch.setattr(forks, "_undo", lambda *args: iter(()))
    with pytest.raises(StoreError):
        store.fork_session(sid, new_session_id="fork")
    assert store.get_session("fork") is None and dyn.leftovers() != before
    item = head(dyn, "fork")
    assert item["deleting"] == {"BOOL": True} and "ttl" in item
    inspector_delete(dyn, keys.head_key("fork"))  # as DynamoDB's TTL removes it
    dyn.cascade()
    left = [x for x in dyn.leftovers() if x not in before]
    # only the intent of the bodies it copied, whose objects the purge took: its own TTL removes it too
    assert len(left) == 1 and left[0].startswith("item:sessions/U#") and left[0].endswith("|UPLOAD"), left
    assert dyn.objects(object_keys.session_prefix("alice", "fork")) == []


def test_the_head_counts_branches_and_a_rewind_past_the_bound_is_refused(dyn: Harness) -> None:
    """The bound of rules.MAX_BRANCHES (the contract suite reaches it on the memory backends) kept by a count on
    the head: each rewind adds one in its own transaction, a delete takes one off."""
    store = dyn.store
    sid = store.create_session("alice").id
    for n in range(2):
        store.append_messages(sid, [{"role": "user", "content": f"try {n}"}])
        store.rewind_session(sid, 0, branch=f"b{n}")
    assert head(dyn, sid)["branches"] == {"N": "2"}
    store.delete_branch(sid, "b0")
    assert head(dyn, sid)["branches"] == {"N": "1"}
    assert dyn.tables is not None
    client_of(dyn).update_item(  # as if 98 more rewinds had been made
        TableName=dyn.tables.sessions,
        Key=keys.head_key(sid),
        UpdateExpression="SET branches = :n",
        ExpressionAttributeValues={":n": {"N": "99"}},
    )
    store.append_messages(sid, [{"role": "user", "content": "the hundredth"}])
    store.rewind_session(sid, 0, branch="b99")
    store.append_messages(sid, [{"role": "user", "content": "one too many"}])
    with pytest.raises(InvalidInput, match="100 branches"):
        store.rewind_session(sid, 0, branch="b100")
    assert head(dyn, sid)["branches"] == {"N": "100"} and store.get_session(sid).last_seq == 1


class FakeTime:
    """Time that passes only by requests (each costs `per_request` seconds): what an invocation spends is
    counted, not raced against the machine."""

    def __init__(self, per_request: float) -> None:
        self.now, self.per_request = 1000.0, per_request

    def monotonic(self) -> float:
        return self.now

    def request(self, **_: Any) -> None:
        self.now += self.per_request


class TimedContext(LambdaContext):
    """A Lambda context whose invocation times out `timeout` (fake) seconds after it began."""

    def __init__(self, clock: FakeTime, timeout: float) -> None:
        super().__init__()
        self.clock, self.end = clock, clock.now + timeout

    def get_remaining_time_in_millis(self) -> int:
        return int((self.end - self.clock.now) * 1000)


class Stream:
    """The sessions table's stream, read on from where the last read ended."""

    def __init__(self, dyn: Harness) -> None:
        assert dyn.stream_clients is not None and dyn.tables is not None
        self.client, self.streams = dyn.stream_clients
        arn = self.client.describe_table(TableName=dyn.tables.sessions)["Table"]["LatestStreamArn"]
        (shard,) = self.streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        start = {"StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "TRIM_HORIZON"}
        self.iterator = self.streams.get_shard_iterator(**start)["ShardIterator"]

    def read(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while True:
            page = self.streams.get_records(ShardIterator=self.iterator)
            self.iterator = page["NextShardIterator"]
            out += page["Records"]
            if not page["Records"]:
                return out


def test_a_cascade_invocation_ends_within_its_timeout_whatever_its_batch_holds(
    far: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long copy (a fork past the inline threshold) and the purge of a long expired session, more than one
    invocation may do, each fed to its function as the template's mappings select (the copy function one
    record at a time, the cascade a batch): each invocation ends before its timeout (time here passes by
    requests), hands on what it did not finish as new stream records, and the invocations those start
    finish it all. The cascade leaves copies to the copy function."""
    from functions import runtime
    from functions.cascade import app
    from infra.deploy.template import stream_mappings
    from store.core import deadlines

    dyn = far
    store = dyn.store
    assert dyn.stream_clients is not None and dyn.tables is not None
    client = dyn.stream_clients[0]
    source, doomed = store.create_session("alice").id, store.create_session("alice").id
    long_session(store, source)
    long_session(store, doomed)
    stream = Stream(dyn)
    stream.read()  # what came before is not the cascade's business here
    forks = [store.fork_session(source).id]
    assert all(store.get_session(f).copying for f in forks)
    client.delete_item(TableName=dyn.tables.sessions, Key=keys.head_key(doomed))  # as its TTL would

    clock = FakeTime(per_request=0.5)
    for module in (app, deadlines):  # the handlers' share of time, and where a deadline ends
        monkeypatch.setattr(module, "time", clock, raising=False)
    monkeypatch.setattr(store._backend.ctx, "monotonic", clock.monotonic)  # type: ignore[attr-defined]  # the plans' time: their context's
    client.meta.events.register("before-call.*.*", clock.request)
    dyn.s3.meta.events.register("before-call.*.*", clock.request)
    runtime.use_store(store)
    timeout, invocations = 30.0, 0
    try:
        while records := stream.read():
            for mapping in [m for m in stream_mappings() if m.table == "SessionsTable"]:
                handler = app.copy_handler if mapping.function == "CopyFunction" else app.lambda_handler
                chosen = [r for r in records if mapping.wants(r)]
                for start in range(0, len(chosen), mapping.batch_size):
                    event = {"Records": chosen[start : start + mapping.batch_size]}
                    began = clock.now
                    assert handler(event, TimedContext(clock, timeout)) == {"batchItemFailures": []}
                    assert clock.now - began <= timeout, f"an invocation ran {clock.now - began:.1f} s of {timeout}"
                    invocations += 1
                    assert invocations < 200
    finally:
        runtime.use_store(None)
        client.meta.events.unregister("before-call.*.*", clock.request)
        dyn.s3.meta.events.unregister("before-call.*.*", clock.request)
    assert invocations >= 2  # the work did not fit one invocation
    wanted = [m.content for m in store.list_messages(source).items]
    for fork in forks:
        assert not store.get_session(fork).copying
        assert [m.content for m in store.list_messages(fork).items] == wanted
    assert not [k for k in dyn.leftovers() if doomed in k]
