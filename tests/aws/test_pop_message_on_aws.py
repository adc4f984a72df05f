"""The DynamoDB backend's own side of test_pop_message.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

import secrets
from typing import Any

from tests.conftest import Harness


def test_pop_deletes_the_spilled_body_it_pointed_to(dyn: Harness) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "small"}])
    before = set(dyn.objects())
    store.append_messages(sid, [{"role": "tool", "content": secrets.token_urlsafe(450_000)}])
    spilled = set(dyn.objects()) - before
    assert len(spilled) == 1
    store.pop_message(sid)
    assert set(dyn.objects()) == before


def test_a_usage_update_landing_between_a_pops_read_and_write_is_not_counted_twice(
    dyn: Harness, dynamodb_client: Any
) -> None:
    """The pop reads the tail's usage, then subtracts it from the totals in its transaction. A usage
    update that commits in between (forced here: it runs as the pop's first transaction is sent) must
    make that transaction fail and the pop re-read, so the totals are the usage of what is left."""
    store, other = dyn.store, dyn.twin()
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "a", "usage": {"input_tokens": 5}}])
    tail = store.append_messages(sid, [{"role": "user", "content": "b", "usage": {"input_tokens": 1}}])[0]
    client = dynamodb_client  # the client both stores send through
    interposed: list[int] = []

    def before_call(**_: Any) -> None:
        if not interposed:
            interposed.append(1)
            other.update_usage(sid, tail.id, {"input_tokens": 40})

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", before_call)
    try:
        popped = store.pop_message(sid)
    finally:
        client.meta.events.unregister("before-call.dynamodb.TransactWriteItems", before_call)
    assert interposed == [1]
    assert popped is not None and popped.id == tail.id
    assert popped.usage is not None and popped.usage.input_tokens == 40  # what it removed, as it was then
    session = store.get_session(sid)
    assert session.last_seq == 1
    assert session.usage.input_tokens == 5
