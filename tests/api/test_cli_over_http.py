"""The HTTP backend and the CLI against the local stack over real HTTP: the same calls, results and typed
errors as a store on the tables, the owner from the token."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.local.aws import free_port, local_client
from infra.local.stack import LocalStack, local_stack
from store import AccessDenied, Conflict, InvalidInput, SessionNotFound, SessionStore, StoreUnavailable
from store.backends.http import HttpBackend
from store.session_store import s3_config
from store.tools.cli import main


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(port=0, cascade=False, prefix="cli") as running:
        yield running


def over_api(stack: LocalStack, owner: str) -> SessionStore:
    return SessionStore(backend=HttpBackend(stack.api_url, stack.token(owner), timeout=10))


def cli(stack: LocalStack, owner: str, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main([*argv, "--api", stack.api_url, "--token", stack.token(owner)], out=out), out.getvalue()


def test_every_kind_of_data_round_trips_through_the_http_backend(stack: LocalStack) -> None:
    alice = over_api(stack, "alice")
    session = alice.create_session("alice", session_id="h1", title="over http", metadata={"team": "a"})
    assert session.id == "h1" and session.owner == "alice"
    first = alice.append_messages("h1", [{"role": "user", "content": "hello"}], idempotency_key="k1")
    again = alice.append_messages("h1", [{"role": "user", "content": "hello"}], idempotency_key="k1")
    assert [m.id for m in first] == [m.id for m in again] and first[0].seq == 1
    alice.append_messages("h1", [{"role": "assistant", "content": "hi", "custom": {"x": 1}}], expected_seq=1)
    with pytest.raises(Conflict):
        alice.append_messages("h1", [{"role": "user", "content": "late"}], expected_seq=1)
    page = alice.list_messages("h1", limit=1)
    assert [m.content for m in page.items] == ["hello"] and page.next_cursor
    assert alice.list_messages("h1", cursor=page.next_cursor).items[0].model_extra == {"custom": {"x": 1}}
    assert [m.seq for m in alice.last_messages("h1", 1)] == [2]
    assert alice.save_state("h1", {"a": 1}) == 1
    snapshot = alice.load_state("h1")
    assert snapshot is not None and snapshot.state == {"a": 1}
    alice.save_interrupt("h1", {"ask": "?"})
    assert alice.load_interrupt("h1") == {"ask": "?"}
    alice.save_records("h1", "notes", [1, 2])
    assert alice.load_records("h1", "notes") == [1, 2]
    small = alice.put_artifact("h1", "a/b.txt", b"inline bytes", content_type="text/plain")
    tagged = alice.put_artifact("h1", "a/b.txt", b"presigned", content_type="text/plain", metadata={"k": "v"})
    assert (small.version, tagged.version, tagged.metadata) == (1, 2, {"k": "v"})
    assert alice.get_artifact("h1", "a/b.txt") == b"presigned"
    assert alice.get_artifact("h1", "a/b.txt", version=1) == b"inline bytes"
    assert alice.get_artifact("h1", "missing") is None
    assert alice.append_trace_events("h1", "r1", [{"name": "a"}]) == 1
    assert alice.load_trace_events("h1", "r1") == [{"name": "a"}] and alice.list_trace_runs("h1") == ["r1"]
    full = alice.load_full("h1", last=1)
    assert full.session.id == "h1" and [m.seq for m in full.messages] == [2]
    hits = alice.search("alice", "hello")
    assert [h.session_id for h in hits] == ["h1"] and hits.sessions_searched >= 1
    assert [s.id for s in alice.list_sessions("alice").items] == ["h1"]
    assert alice.update_session("h1", title="renamed").title == "renamed"


def test_absent_and_refused_are_the_stores_own_errors(stack: LocalStack) -> None:
    alice, bob = over_api(stack, "alice"), over_api(stack, "bob")
    alice.create_session("alice", session_id="mine")
    assert bob.get_session("mine") is None  # another owner's session is absent
    with pytest.raises(SessionNotFound) as exc:
        bob.append_messages("mine", [{"role": "user", "content": "x"}])
    assert exc.value.session_id == "mine"
    with pytest.raises(InvalidInput, match="pop_message is not offered by the http backend"):
        alice.pop_message("mine")
    with pytest.raises(AccessDenied, match="refused the token"):  # 401: the credentials, not an argument
        SessionStore(backend=HttpBackend(stack.api_url, "not-a-token")).list_sessions("x")
    closed = SessionStore(backend=HttpBackend(f"http://127.0.0.1:{free_port()}", "t", timeout=2))
    with pytest.raises(StoreUnavailable, match="did not answer"):
        closed.get_session("x")
    with pytest.raises(InvalidInput, match="must be http"):
        HttpBackend("file:///etc/passwd", "t")


def test_the_cli_moves_a_session_between_owners_over_the_api(stack: LocalStack, tmp_path: Path) -> None:
    carol = over_api(stack, "carol")
    carol.create_session("carol", session_id="trip", title="a trip")
    carol.append_messages("trip", [{"role": "user", "content": f"step {i}"} for i in range(5)])
    carol.put_artifact("trip", "plan.md", b"# plan", content_type="text/markdown")
    code, out = cli(stack, "carol", "sessions", "list")
    assert code == 0 and out.splitlines()[2].split()[:4] == ["trip", "a", "trip", "5"]
    dump = tmp_path / "trip.jsonl"
    assert cli(stack, "carol", "sessions", "export", "trip", "-o", str(dump), "-q")[0] == 0
    code, out = cli(stack, "dave", "sessions", "import", str(dump), "--as", "carols-trip", "-q", "--json")
    assert code == 0 and json.loads(out)["written"] == {"session": 1, "messages": 5, "artifacts": 1}
    dave = over_api(stack, "dave")
    assert [m.content for m in dave.list_messages("carols-trip").items] == [f"step {i}" for i in range(5)]
    assert dave.get_artifact("carols-trip", "plan.md") == b"# plan"
    assert carol.get_session("carols-trip") is None
    code, out = cli(stack, "carol", "sessions", "show", "carols-trip")
    assert code == 1


def test_the_tables_seen_as_an_owner_name_sessions_as_the_api_does(stack: LocalStack) -> None:
    over_api(stack, "erin").create_session("erin", session_id="same-name", title="from the API")
    endpoint = stack.aws_endpoint
    direct = SessionStore(
        stack.tables.sessions,
        stack.tables.messages,
        bucket=stack.tables.bucket,
        client=local_client(endpoint_url=endpoint),
        s3_client=local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True)),
    )
    out = io.StringIO()
    assert main(["sessions", "show", "same-name", "--owner", "erin"], store=direct, out=out) == 0
    assert out.getvalue().startswith("session same-name  from the API")


def test_fork_and_rewind_over_the_api_and_the_cli(stack: LocalStack) -> None:
    alice = over_api(stack, "alice")
    alice.create_session("alice", session_id="f1", title="to fork")
    alice.append_messages("f1", [{"role": "user", "content": f"m{i}"} for i in range(4)])
    alice.save_state("f1", {"s": 1})
    fork = alice.fork_session("f1", at_seq=3, new_session_id="f1-fork")
    assert fork.id == "f1-fork" and fork.metadata["forked_from"] == {"session_id": "f1", "seq": 3}
    assert [m.content for m in alice.list_messages("f1-fork").items] == ["m0", "m1", "m2"]
    assert alice.load_state("f1-fork").state == {"s": 1}
    with pytest.raises(SessionNotFound):
        over_api(stack, "bob").fork_session("f1")
    code, out = cli(stack, "alice", "sessions", "fork", "f1", "--at", "1", "--id", "f1-cli")
    assert code == 0 and out == "forked f1 at message 1 into f1-cli: 1 messages\n"
    code, out = cli(stack, "alice", "sessions", "rewind", "f1", "--to", "2", "--branch", "b")
    assert code == 0 and out.startswith("rewound f1: 2 messages\n")
    assert [b.id for b in alice.list_branches("f1")] == ["b"]
    assert [m.content for m in alice.list_messages("f1", branch="b").items] == ["m0", "m1", "m2", "m3"]
    code, out = cli(stack, "alice", "sessions", "restore", "f1", "b")
    assert code == 0 and out.startswith("restored b in f1: 4 messages")
    code, out = cli(stack, "bob", "sessions", "branches", "f1")
    assert code == 1
