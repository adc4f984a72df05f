"""A fork of a 100,000-message session on DynamoDB stays within one API request's budget: the call makes a
handful of requests, none of them copies a message, and the fork is visible as `copying`; its copy is the
copy job's, which within one invocation's deadline makes progress and hands the rest on. The transcript is
written straight into moto's table (the store's own item layout): 100,000 appends would take minutes, and
are not what is measured."""

from __future__ import annotations

import copy
from typing import Any

from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict

from infra.local.aws import REGION
from store import deadline
from store.aws import keys
from store.aws.plans.base import Context
from store.aws.plans.messages import drafts
from store.models import Message
from tests.conftest import Harness
from tests.streams import stream_records

MESSAGES = 100_000
REQUEST_BUDGET = 20.0  # seconds: the template's RequestBudgetSeconds default, what one API request may take
INVOCATION = 10.0  # seconds: an invocation of the copy job with little time left


def long_transcript(dyn: Harness, sid: str) -> None:
    """`MESSAGES` messages in the session's partition of moto's messages table (one item made, then copied
    with each message's id and sequence number: building 100,000 of moto's items one by one takes 7 s)."""
    assert dyn.tables is not None
    ctx = Context(dyn.tables.sessions, dyn.tables.messages)
    (item,) = drafts(ctx, sid, [Message(role="user", content="a message")], dyn.clock(), "bench")
    template = Item(DynamoType({"S": sid}), DynamoType({"N": "1"}), {**item, keys.SEQ: {"N": "1"}})
    table = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(dyn.tables.messages)
    rows = table.items.setdefault(DynamoType({"S": sid}), {})
    for seq in range(1, MESSAGES + 1):
        key = DynamoType({"N": str(seq)})
        row = copy.copy(template)
        row.range_key = key
        row.attrs = LimitedSizeDict({**template.attrs, keys.MID: DynamoType({"S": f"m{seq}"}), keys.SEQ: key})
        rows[key] = row


def test_a_fork_of_100000_messages_stays_within_one_requests_budget(dyn: Harness, dynamodb_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice", title="a long one").id
    long_transcript(dyn, sid)
    assert dyn.tables is not None
    dynamodb_client.update_item(
        TableName=dyn.tables.sessions,
        Key=keys.head_key(sid),
        UpdateExpression="SET last_seq = :n",
        ExpressionAttributeValues={":n": {"N": str(MESSAGES)}},
    )
    writes: list[str] = []

    def note(params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name in ("BatchWriteItem", "TransactWriteItems", "PutItem", "UpdateItem"):
            writes.append(repr(params))

    dynamodb_client.meta.events.register("provide-client-params.dynamodb.*", note)
    dyn.requests.clear()
    try:
        with deadline(REQUEST_BUDGET):  # what an API request runs in (its time is bench/scale.md's)
            fork = store.fork_session(sid, new_session_id="big-fork")
        names = dyn.requests.names
        assert fork.copying and fork.last_seq == MESSAGES and fork.metadata["forked_from"]["seq"] == MESSAGES
        assert len(names) <= 12, names  # head, claim, 3 Queries of what goes along, state, preview, batch, fork, head
        assert not any(dyn.tables.messages in w for w in writes), "no message is copied within the call"
        assert store.get_session("big-fork").copied == 0
        # one invocation of the copy job, within a deadline: part of the copy done, the rest handed on
        records = stream_records(dynamodb_client, dyn.tables.sessions)
        with deadline(INVOCATION):
            dyn.operator().reclaim([r for r in records if r["eventName"] == "MODIFY"])
        progress = store.get_session("big-fork")
        assert progress.copying and 0 < (progress.copied or 0) < MESSAGES
        lap = dynamodb_client.get_item(TableName=dyn.tables.sessions, Key=keys.head_key("big-fork"))["Item"]
        assert lap["seed"]["M"]["lap"] == {"N": "1"}, "handed on to the next invocation"
    finally:
        dynamodb_client.meta.events.unregister("provide-client-params.dynamodb.*", note)
        dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(dyn.tables.messages).items.clear()  # free moto's memory
