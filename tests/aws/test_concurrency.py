"""Many writers on one session, through moto's server so requests really interleave."""

from __future__ import annotations

import re
import threading
import zlib
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from botocore.config import Config

from infra.local.aws import create_tables, local_client
from store import Conflict, SessionStore
from store.session_store import retry_config, s3_config

WRITERS = 8
APPENDS_EACH = 25


@pytest.fixture(scope="module")
def server_client(contended_endpoint: str) -> Any:
    return local_client(endpoint_url=contended_endpoint, config=retry_config(Config(max_pool_connections=32)))


@pytest.fixture(scope="module")
def server_s3(contended_endpoint: str) -> Any:
    return local_client(
        "s3", endpoint_url=contended_endpoint, config=s3_config(Config(max_pool_connections=32), path_style=True)
    )


@pytest.fixture
def stores(server_client: Any, server_s3: Any, request: pytest.FixtureRequest) -> Callable[[], SessionStore]:
    """A factory of independent stores (own position caches, as separate processes) over fresh tables
    and a fresh bucket."""
    name = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower())[:20]
    tables = create_tables(server_client, prefix=f"conc-{name}-{zlib.crc32(request.node.name.encode())}", s3=server_s3)

    def make() -> SessionStore:
        return SessionStore(
            tables.sessions,
            tables.messages,
            bucket=tables.bucket,
            client=server_client,
            s3_client=server_s3,
        )

    return make


def run_threads(target: Callable[[int], None], count: int) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def wrapped(i: int) -> None:
        try:
            barrier.wait()
            target(i)
        except BaseException as exc:  # collected and asserted on by the test
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return errors


def test_concurrent_appends_are_gapless_and_stored_once(stores: Callable[[], SessionStore]) -> None:
    sid = stores().create_session("alice").id
    writers = [stores() for _ in range(WRITERS)]
    returned: list[list[int]] = [[] for _ in range(WRITERS)]

    def write(i: int) -> None:
        for j in range(APPENDS_EACH):
            batch = [{"role": "user", "content": f"w{i}-{j}-{k}"} for k in range(1 + j % 2)]
            returned[i].extend(r.seq for r in writers[i].append_messages(sid, batch))

    assert run_threads(write, WRITERS) == []
    messages = stores().list_messages(sid).items
    total = sum(1 + j % 2 for j in range(APPENDS_EACH)) * WRITERS
    assert [m.seq for m in messages] == list(range(1, total + 1))
    contents = Counter(m.content for m in messages)
    assert len(contents) == total and set(contents.values()) == {1}
    assert sorted(s for seqs in returned for s in seqs) == list(range(1, total + 1))
    for i in range(WRITERS):  # each writer's messages keep their order, and each batch is contiguous
        mine = [m for m in messages if m.content.startswith(f"w{i}-")]
        assert [m.content for m in mine] == [f"w{i}-{j}-{k}" for j in range(APPENDS_EACH) for k in range(1 + j % 2)]
    assert stores().get_session(sid).last_seq == total


def test_concurrent_retries_with_one_idempotency_key_write_once(stores: Callable[[], SessionStore]) -> None:
    sid = stores().create_session("alice").id
    writers = [stores() for _ in range(6)]
    results: list[Any] = [None] * 6
    batch = [{"role": "user", "content": "charge the card"}, {"role": "assistant", "content": "done"}]

    def write(i: int) -> None:
        results[i] = writers[i].append_messages(sid, batch, idempotency_key="payment-7")

    assert run_threads(write, 6) == []
    assert all(r == results[0] for r in results)
    assert [m.content for m in stores().list_messages(sid).items] == ["charge the card", "done"]


def test_concurrent_expected_version_has_one_winner(stores: Callable[[], SessionStore]) -> None:
    sid = stores().create_session("alice").id
    writers = [stores() for _ in range(6)]
    outcomes: list[str] = [""] * 6

    def write(i: int) -> None:
        try:
            writers[i].save_state(sid, {"by": i}, expected_version=0)
            outcomes[i] = "won"
        except Conflict:
            outcomes[i] = "conflict"

    assert run_threads(write, 6) == []
    assert outcomes.count("won") == 1 and outcomes.count("conflict") == 5
    state = stores().load_state(sid)
    assert state.version == 1 and state.state == {"by": outcomes.index("won")}


def test_concurrent_usage_updates_keep_totals(stores: Callable[[], SessionStore]) -> None:
    store = stores()
    sid = store.create_session("alice").id
    records = store.append_messages(sid, [{"role": "assistant", "content": f"m{i}"} for i in range(8)])
    writers = [stores() for _ in range(8)]

    def write(i: int) -> None:
        for n in range(1, 4):
            writers[i].update_usage(sid, records[i].id, {"input_tokens": n * 10 + i, "cost": n * 0.5})

    assert run_threads(write, 8) == []
    session = store.get_session(sid)
    assert session.usage.input_tokens == sum(30 + i for i in range(8))
    assert session.usage.cost == pytest.approx(8 * 1.5)


def test_concurrent_writers_of_one_artifact_get_distinct_versions(stores: Callable[[], SessionStore]) -> None:
    sid = stores().create_session("alice").id
    writers = [stores() for _ in range(WRITERS)]
    got: list[int] = [0] * WRITERS

    def write(i: int) -> None:
        got[i] = writers[i].put_artifact(sid, "shared/report.txt", f"writer {i}".encode()).version

    assert run_threads(write, WRITERS) == []
    assert sorted(got) == list(range(1, WRITERS + 1))
    store = stores()
    versions = store.list_artifact_versions(sid, "shared/report.txt")
    assert [v.version for v in versions] == list(range(1, WRITERS + 1))
    for i, version in enumerate(got):  # each version holds what its writer wrote
        assert store.get_artifact(sid, "shared/report.txt", version=version) == f"writer {i}".encode()
    assert store.list_artifacts(sid)[0].version == WRITERS


def test_concurrent_trace_batches_of_one_run_keep_each_writers_order(stores: Callable[[], SessionStore]) -> None:
    sid = stores().create_session("alice").id
    writers = [stores() for _ in range(WRITERS)]
    batches: list[list[int]] = [[] for _ in range(WRITERS)]

    def write(i: int) -> None:
        for j in range(5):
            batches[i].append(writers[i].append_trace_events(sid, "run-1", [{"w": i, "j": j}]))

    assert run_threads(write, WRITERS) == []
    assert sorted(b for mine in batches for b in mine) == list(range(1, 5 * WRITERS + 1))
    events = stores().load_trace_events(sid, "run-1")
    assert len(events) == 5 * WRITERS
    for i in range(WRITERS):
        assert [e["j"] for e in events if e["w"] == i] == list(range(5))


def test_concurrent_pops_never_return_the_same_message(stores: Callable[[], SessionStore]) -> None:
    store = stores()
    sid = store.create_session("alice").id
    total = WRITERS * 5
    store.append_messages(sid, [{"role": "user", "content": i, "usage": {"input_tokens": 1}} for i in range(total)])
    popped: list[list[int]] = [[] for _ in range(WRITERS)]

    def pop_some(i: int) -> None:
        mine = stores()  # each writer its own store, as separate processes would be
        for _ in range(5):
            record = mine.pop_message(sid)
            assert record is not None
            popped[i].append(record.content)

    assert run_threads(pop_some, WRITERS) == []
    everything = [c for writer in popped for c in writer]
    assert sorted(everything) == list(range(total))  # each message exactly once
    for writer in popped:  # each writer saw the transcript shrink from the end
        assert writer == sorted(writer, reverse=True)
    head = store.get_session(sid)
    assert head.last_seq == 0 and head.usage.input_tokens == 0
    assert store.list_messages(sid).items == []


def test_pops_racing_appends_keep_the_transcript_gapless(stores: Callable[[], SessionStore]) -> None:
    store = stores()
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": f"seed {i}"} for i in range(10)])
    popped: list[str] = []
    appended: list[str] = []

    def work(i: int) -> None:
        mine = stores()
        for turn in range(6):
            if i % 2:
                record = mine.pop_message(sid)
                if record is not None:
                    popped.append(record.content)
            else:
                appended.append(mine.append_messages(sid, [{"role": "user", "content": f"w{i} t{turn}"}])[0].content)

    assert run_threads(work, WRITERS) == []
    remaining = [m.content for m in store.list_messages(sid).items]
    assert [m.seq for m in store.list_messages(sid).items] == list(range(1, len(remaining) + 1))
    assert store.get_session(sid).last_seq == len(remaining)
    assert Counter(remaining) + Counter(popped) == Counter([f"seed {i}" for i in range(10)] + appended)


@pytest.mark.parametrize("writers", [3])
def test_forks_racing_writers(stores: Callable[[], SessionStore], writers: int) -> None:
    """20 forks of a session that writers keep appending to (and saving state in): every fork is made (it
    once started over on every append, until its retries ran out) and holds a prefix of the source, message
    for message."""
    forker = stores()
    sid = forker.create_session("alice").id
    forker.append_messages(sid, [{"role": "user", "content": f"m{i}"} for i in range(5)])
    stop = threading.Event()
    written: list[int] = []

    def write(i: int) -> None:
        store = stores()
        while not stop.is_set():
            written.extend(r.seq for r in store.append_messages(sid, [{"role": "user", "content": f"w{i}"}]))
            store.save_state(sid, {"writer": i})

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    forks, failures = [], []
    try:
        while len(written) < 3:  # the writers are under way
            stop.wait(0.01)
        for _ in range(20):
            try:
                forks.append(forker.fork_session(sid))
            except Conflict as exc:
                failures.append(exc)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []
    source = {m.seq: (m.id, m.content) for m in forker.list_messages(sid).items}
    assert max(f.last_seq for f in forks) > 5  # forks were taken while the source grew
    for fork in forks:
        copied = forker.list_messages(fork.id).items
        assert [(m.seq, m.id, m.content) for m in copied] == [(q, *source[q]) for q in range(1, fork.last_seq + 1)]
