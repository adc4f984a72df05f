"""The retry rules and the session's writer queue (store/aws/plans/turns.py), one case at a time: a lost race
retried at once; a ticket whose holder died skipped after a lease; a ticket given up passed at once; a
writer that gives up leaving its ticket gone; waiting while the queue moves not counted as backoff, a queue
that stands still counted; the deadline bounding a call that never sleeps. On moto's server process (one
request at a time), with the head's queue set up by hand where a case needs other writers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from infra.local.aws import LocalTables, create_tables, local_client
from store import Conflict, SessionStore, Settings, deadline
from store.aws import keys
from store.aws.plans.turns import millis
from store.core.timeutil import utcnow
from tests.aws.test_retry_budget import cancel_every


@pytest.fixture
def client(contended_endpoint: str) -> Any:
    """A client of this test's own (the hooks a test registers die with it)."""
    return local_client(endpoint_url=contended_endpoint)


@pytest.fixture
def tables(client: Any, request: pytest.FixtureRequest) -> LocalTables:
    return create_tables(client, prefix=f"turn{abs(hash(request.node.name)) % 10**8}")


@pytest.fixture
def make(client: Any, tables: LocalTables) -> Callable[..., SessionStore]:
    """A factory of stores over this test's tables (each store its own position cache, as processes)."""

    def store(**settings: Any) -> SessionStore:
        return SessionStore(tables.sessions, tables.messages, client=client, settings=Settings(**settings))

    return store


class Head:
    """The session head as a test sees and sets it (the other writers' side of the queue)."""

    def __init__(self, client: Any, tables: LocalTables, sid: str) -> None:
        self.client, self.key, self.table = client, keys.head_key(sid), tables.sessions

    def item(self) -> dict[str, Any]:
        found: dict[str, Any] = self.client.get_item(TableName=self.table, Key=self.key, ConsistentRead=True)["Item"]
        return found

    def set(self, **attrs: Any) -> None:
        """SET queue_<name> for each attribute given (numbers; `gone` a set of numbers)."""
        values = {f":{k}": {"NS": [str(g) for g in v]} if k == "gone" else {"N": str(v)} for k, v in attrs.items()}
        self.client.update_item(
            TableName=self.table,
            Key=self.key,
            UpdateExpression="SET " + ", ".join(f"queue_{k} = :{k}" for k in attrs),
            ExpressionAttributeValues=values,
        )


def counting(client: Any) -> list[str]:
    names: list[str] = []

    def count(model: Any, **_: Any) -> None:
        names.append(model.name)

    client.meta.events.register("before-call.dynamodb.*", count)
    return names


def sleeps_of(store: SessionStore) -> list[float]:
    """Record the sleeps the store's driver is asked for (and sleep them)."""
    slept: list[float] = []
    driver: Any = store._backend.driver  # type: ignore[attr-defined]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    driver._sleep = sleep
    return slept


def test_a_lost_race_retries_at_once_from_what_the_failure_returned(
    make: Callable[..., SessionStore], client: Any, tables: LocalTables
) -> None:
    a, b = make(), make()
    sid = a.create_session("alice").id
    a.append_messages(sid, [{"role": "user", "content": "a1"}])  # a knows the position: 1
    b.append_messages(sid, [{"role": "user", "content": "b1"}])  # the session moves to 2 behind a's back
    slept = sleeps_of(a)
    names = counting(client)
    [record] = a.append_messages(sid, [{"role": "user", "content": "a2"}])
    assert record.seq == 3
    assert names.count("TransactWriteItems") == 2  # lost once, then at once from the head it returned
    assert "GetItem" not in names and "UpdateItem" not in names  # no read, no ticket
    assert slept == []


def test_a_ticket_whose_holder_died_is_skipped_after_a_lease(
    make: Callable[..., SessionStore], client: Any, tables: LocalTables
) -> None:
    store = make()
    sid = store.create_session("alice").id
    queue = Head(client, tables, sid)
    queue.set(next=1, served=0, at=millis(utcnow()) - 2000)  # ticket 1, idle 2 s
    [record] = store.append_messages(sid, [{"role": "user", "content": "after the dead one"}])
    assert record.seq == 1
    item = queue.item()
    assert item["queue_served"] == {"N": "2"} and item["queue_next"] == {"N": "2"}  # ticket 2 went, past 1


def test_a_live_ticket_ahead_is_waited_for(make: Callable[..., SessionStore], client: Any, tables: LocalTables) -> None:
    store = make()
    sid = store.create_session("alice").id
    queue = Head(client, tables, sid)
    queue.set(next=1, served=0, at=millis(utcnow()))  # ticket 1 is somebody's, now
    waiting = threading.Event()
    driver: Any = store._backend.driver  # type: ignore[attr-defined]

    def sleep(seconds: float) -> None:  # the writer waits for its turn: let the test know, then wait
        waiting.set()
        time.sleep(seconds)

    driver._sleep = sleep
    done: list[int] = []
    writer = threading.Thread(
        target=lambda: done.extend(r.seq for r in store.append_messages(sid, [{"role": "user", "content": "x"}]))
    )
    writer.start()
    assert waiting.wait(timeout=30), "the writer never waited"
    assert queue.item()["queue_next"] == {"N": "2"}  # it holds ticket 2, behind ticket 1
    assert done == [] and store.get_session(sid).last_seq == 0  # and it waits its turn: ticket 1 first
    queue.set(served=1, at=millis(utcnow()))  # ticket 1 is served
    writer.join(timeout=10)
    assert done == [1]
    assert queue.item()["queue_served"] == {"N": "2"}


def test_a_ticket_given_up_is_passed_at_once(
    make: Callable[..., SessionStore], client: Any, tables: LocalTables
) -> None:
    store = make()
    sid = store.create_session("alice").id
    queue = Head(client, tables, sid)
    queue.set(next=1, served=0, at=millis(utcnow()), gone=[1])
    slept = sleeps_of(store)
    store.append_messages(sid, [{"role": "user", "content": "x"}])
    assert slept == []  # no lease waited out, no wait at all
    item = queue.item()
    assert item["queue_served"] == {"N": "2"} and "queue_gone" not in item  # passed, and forgotten


def test_a_writer_that_gives_up_leaves_its_ticket_gone(
    make: Callable[..., SessionStore], client: Any, tables: LocalTables
) -> None:
    store = make()
    sid = store.create_session("alice").id
    queue = Head(client, tables, sid)
    queue.set(next=1, served=0, at=millis(utcnow()))
    with pytest.raises(Conflict, match="deadline"), deadline(0.3):
        store.append_messages(sid, [{"role": "user", "content": "never"}])
    item = queue.item()
    assert item["queue_gone"] == {"NS": ["2"]} and item["queue_next"] == {"N": "2"}
    assert store.list_messages(sid).items == [] and store.get_session(sid).last_seq == 0


def test_waiting_while_the_queue_moves_is_not_backoff(
    make: Callable[..., SessionStore], client: Any, tables: LocalTables
) -> None:
    """Six writers ahead, served one per look the writer takes at the head, each look 0.1 s: the wait (0.6 s)
    is three times the budget (0.2 s here), and the append still goes, because the queue kept moving. (The
    queue moves with the writer's reads, not on a thread of its own, so a loaded machine cannot starve it.)"""
    store = make(retry_budget=timedelta(seconds=0.2))
    sid = store.create_session("alice").id
    queue = Head(client, tables, sid)
    queue.set(next=6, served=0, at=millis(utcnow()))
    serving = iter(range(1, 7))

    def serve(**_: Any) -> None:
        k = next(serving, None)
        if k is not None:
            time.sleep(0.1)
            queue.set(served=k, at=millis(utcnow()))

    client.meta.events.register("before-call.dynamodb.GetItem", serve)
    started = time.monotonic()
    try:
        [record] = store.append_messages(sid, [{"role": "user", "content": "seventh"}])
    finally:
        client.meta.events.unregister("before-call.dynamodb.GetItem", serve)
    assert record.seq == 1 and time.monotonic() - started > 0.5
    assert next(serving, None) is None, "every writer ahead was served first"
    assert queue.item()["queue_served"] == {"N": "7"}


def test_a_queue_that_stands_still_is_contention(
    make: Callable[..., SessionStore], client: Any, tables: LocalTables
) -> None:
    """A live ticket ahead that is never served (within the lease): the writer's looks at a still queue
    are backoff, and the budget (0.2 s here) ends them with Conflict, its ticket left gone."""
    store = make(retry_budget=timedelta(seconds=0.2))
    sid = store.create_session("alice").id
    queue = Head(client, tables, sid)
    # The position moved "in 30 s": on a loaded machine the lease (1 s) cannot run out before the budget.
    queue.set(next=1, served=0, at=millis(utcnow()) + 30_000)
    started = time.monotonic()
    with pytest.raises(Conflict, match=r"gave up after 0\.2 s"):
        store.append_messages(sid, [{"role": "user", "content": "never"}])
    assert time.monotonic() - started < 10  # the budget ended it, not the lease nor the 30 s
    assert queue.item()["queue_gone"] == {"NS": ["2"]}


def test_the_deadline_bounds_a_call_that_never_sleeps(
    make: Callable[..., SessionStore], client: Any, tables: LocalTables
) -> None:
    """Every write loses its head's condition (injected): retried at once, never slept, until the deadline."""
    store = make()
    sid = store.create_session("alice").id
    attempts = cancel_every(client, "TransactWriteItems", ["ConditionalCheckFailed", "None"])
    slept = sleeps_of(store)
    with pytest.raises(Conflict, match="deadline"), deadline(0.5):
        store.append_messages(sid, [{"role": "user", "content": "x"}])
    assert 3 <= len(attempts) < 500  # the retry count (500) did not end it: the deadline did
    assert slept == []
    assert store.list_messages(sid).items == []
