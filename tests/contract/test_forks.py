"""Contract: fork_session, rewind_session and the branches a rewind keeps (run on every backend)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from store import BranchNotFound, Conflict, InvalidInput, SessionExists, SessionNotFound, SessionStore, TokenUsage
from store.models import MessageRecord
from tests.conftest import Harness


def turns(n: int, start: int = 0) -> list[dict[str, Any]]:
    """`n` messages alternating user and assistant, each with usage (and a given id every third one)."""
    out: list[dict[str, Any]] = []
    for i in range(start, start + n):
        message: dict[str, Any] = {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"turn {i}" if i % 2 == 0 else [{"type": "text", "text": f"answer {i}"}],
            "usage": {"input_tokens": i + 1, "output_tokens": 2 * i, "cost": 0.25},
            "metadata": {"n": i},
        }
        if i % 3 == 0:
            message["id"] = f"m-{i}"
        out.append(message)
    return out


def shape(records: list[MessageRecord]) -> list[tuple[Any, ...]]:
    """What a copy must keep of each message (everything but the session it is in)."""
    return [(m.id, m.seq, m.role, m.content, m.metadata, m.usage, m.kind, m.created_at) for m in records]


def everything(store: SessionStore, session_id: str) -> tuple[Any, ...]:
    """What a reader sees of a session: its head, transcript, state, records and artifacts."""
    artifacts = store.list_artifacts(session_id)
    return (
        store.get_session(session_id),
        store.list_messages(session_id).items,
        store.load_state(session_id),
        store.load_records(session_id, "tasks"),
        artifacts,
        [store.get_artifact(session_id, a.name) for a in artifacts],
    )


def total(records: list[MessageRecord]) -> TokenUsage:
    out = TokenUsage()
    for m in records:
        out = out.plus(m.usage)
    return out


@pytest.fixture
def source(harness: Harness) -> str:
    """alice's session: five messages (one marked as a compaction), state, records, two artifacts."""
    store = harness.store
    sid = store.create_session("alice", title="Trip", model="m1", metadata={"team": "ops"}).id
    store.append_messages(sid, turns(5))
    store.mark_compaction(sid, "m-3")
    store.save_state(sid, {"step": 5})
    store.save_records(sid, "tasks", [{"task": 1}])
    store.put_artifact(sid, "notes.md", b"v1", content_type="text/markdown")
    store.put_artifact(sid, "notes.md", b"v2", content_type="text/markdown")
    store.put_artifact(sid, "data/raw.bin", bytes(range(256)))
    return sid


def test_a_fork_holds_the_prefix_and_leaves_the_source_as_it_was(harness: Harness, source: str) -> None:
    store = harness.store
    before = everything(store, source)
    fork = store.fork_session(source, at_seq=4, new_session_id="fork-1")
    assert everything(store, source) == before, "the source is unchanged"
    messages = store.list_messages("fork-1").items
    wanted = store.list_messages(source).items[:4]
    assert shape(messages) == shape(wanted) and {m.session_id for m in messages} == {"fork-1"}
    assert [m.kind for m in messages] == ["message", "message", "message", "compaction"]
    assert fork.id == "fork-1" and fork.owner == "alice" and fork.title == "Trip" and fork.model == "m1"
    assert fork.metadata == {"team": "ops", "forked_from": {"session_id": source, "seq": 4}}
    assert fork.last_seq == 4 and fork.compaction_seq == 4 and not fork.copying
    assert fork.usage == total(wanted) and fork.usage.input_tokens == 1 + 2 + 3 + 4
    assert store.get_session("fork-1") == fork
    assert store.load_state("fork-1").state == {"step": 5}
    assert store.load_records("fork-1", "tasks") == [{"task": 1}]
    assert store.get_message("fork-1", "m-0").content == "turn 0"
    assert store.get_message("fork-1", "m-3").kind == "compaction"
    assert [m.seq for m in store.list_messages("fork-1", since_compaction=True).items] == [4]
    assert store.get_latest_compaction("fork-1").id == "m-3"
    assert [m.content for m in store.last_messages("fork-1", 2)] == [wanted[2].content, wanted[3].content]
    assert store.load_full("fork-1").messages == messages
    # the whole transcript when no at_seq is given, with a fresh id and the caller's title
    whole = store.fork_session(source, title="Trip, again")
    assert whole.id not in (source, "fork-1") and whole.title == "Trip, again" and whole.last_seq == 5
    assert shape(store.list_messages(whole.id).items) == shape(store.list_messages(source).items)
    assert whole.usage == store.get_session(source).usage


def test_a_fork_before_the_compaction_marker_and_an_empty_fork(harness: Harness, source: str) -> None:
    store = harness.store
    early = store.fork_session(source, at_seq=2)
    assert early.compaction_seq is None and early.last_seq == 2
    assert store.get_latest_compaction(early.id) is None
    assert store.get_message(early.id, "m-3") is None
    empty = store.fork_session(source, at_seq=0, state={"fresh": True})
    assert empty.last_seq == 0 and store.list_messages(empty.id).items == [] and empty.usage == TokenUsage()
    assert store.load_state(empty.id).state == {"fresh": True}
    assert store.append_messages(empty.id, [{"role": "user", "content": "again"}])[0].seq == 1


def test_each_side_lives_on_its_own_after_a_fork(harness: Harness, source: str) -> None:
    store = harness.store
    fork = store.fork_session(source, new_session_id="fork-1")
    source_before = store.list_messages(source).items
    store.append_messages("fork-1", [{"role": "user", "content": "only in the fork"}])
    store.append_messages(source, [{"role": "user", "content": "only in the source"}])
    assert [m.content for m in store.list_messages("fork-1").items][-1] == "only in the fork"
    assert [m.content for m in store.list_messages(source).items][-1] == "only in the source"
    assert store.list_messages(source).items[:5] == source_before
    if harness.supports("pop_message"):
        assert store.pop_message("fork-1").content == "only in the fork"
        assert [m.content for m in store.list_messages(source).items][-1] == "only in the source"
    # a usage change on one side leaves the other's message and totals alone
    store.update_usage(source, "m-0", {"input_tokens": 1000})
    assert store.get_message("fork-1", "m-0").usage == TokenUsage(input_tokens=1, output_tokens=0, cost=0.25)
    assert store.get_session("fork-1").usage.input_tokens == fork.usage.input_tokens
    store.update_usage("fork-1", "m-3", {"input_tokens": 7})
    assert store.get_message(source, "m-3").usage.input_tokens == 4
    store.save_state("fork-1", {"step": "fork"})
    assert store.load_state(source).state == {"step": 5}
    store.put_artifact("fork-1", "notes.md", b"v3 in the fork")
    store.delete_artifact(source, "data/raw.bin")
    assert store.get_artifact(source, "notes.md") == b"v2" and store.get_artifact("fork-1", "data/raw.bin") == bytes(
        range(256)
    )
    assert store.save_state(source, {"step": 6}, expected_version=1) == 2
    assert store.load_state("fork-1").state == {"step": "fork"}


def test_deleting_the_source_leaves_the_fork_whole(harness: Harness, source: str) -> None:
    store = harness.store
    fork = store.fork_session(source, at_seq=5, new_session_id="fork-1")
    seen = everything(store, "fork-1")
    versions = store.list_artifact_versions("fork-1", "notes.md")
    store.delete_session(source)
    harness.cascade()
    assert store.get_session(source) is None
    assert everything(store, "fork-1") == seen and seen[0] == fork
    assert [store.get_artifact("fork-1", "notes.md", version=v.version) for v in versions] == [b"v1", b"v2"]
    reader = store.open_artifact("fork-1", "data/raw.bin")
    assert reader is not None and reader.read(1000) == bytes(range(256))
    store.delete_session("fork-1")
    harness.cascade()
    assert harness.leftovers() == [], "nothing of either session is left"


def test_artifacts_continue_in_the_fork(harness: Harness, source: str) -> None:
    store = harness.store
    store.fork_session(source, new_session_id="fork-1")
    assert [(a.name, a.version, a.session_id) for a in store.list_artifacts("fork-1")] == [
        ("data/raw.bin", 1, "fork-1"),
        ("notes.md", 2, "fork-1"),
    ]
    assert store.get_artifact("fork-1", "notes.md", version=1) == b"v1"
    assert store.put_artifact("fork-1", "notes.md", b"v3").version == 3
    assert store.put_artifact(source, "notes.md", b"v3 at the source").version == 3
    assert store.get_artifact("fork-1", "notes.md") == b"v3"
    assert store.get_artifact(source, "notes.md") == b"v3 at the source"
    store.delete_artifact("fork-1", "notes.md")
    assert store.get_artifact(source, "notes.md", version=1) == b"v1"
    assert store.get_artifact("fork-1", "notes.md") is None


def test_retention_on_one_side_never_changes_the_other(harness: Harness) -> None:
    store, clock = harness.store, harness.clock
    sid = store.create_session("alice", session_id="short", retention=timedelta(minutes=5)).id
    store.append_messages(sid, turns(3))
    fork = store.fork_session(sid, new_session_id="kept")
    assert fork.retention == timedelta(minutes=5) and fork.expires_at is not None
    clock.advance(200)
    store.append_messages("kept", [{"role": "user", "content": "still here"}])  # the fork's activity alone
    clock.advance(200)
    assert store.get_session(sid) is None, "the source expired"
    assert [m.content for m in store.list_messages("kept").items][:3] == [
        "turn 0",
        [{"type": "text", "text": "answer 1"}],
        "turn 2",
    ]
    store.create_session("alice", session_id="short")  # takes the expired id: what was left of it is purged
    harness.cascade()
    assert store.list_messages("kept").items[-1].content == "still here"
    assert store.get_session("kept").last_seq == 4
    clock.advance(400)
    assert store.get_session("kept") is None and store.get_session("short") is not None


def test_another_owners_session_cannot_be_forked(harness: Harness, source: str) -> None:
    store = harness.store
    before = harness.leftovers()
    with pytest.raises(SessionNotFound):
        store.fork_session(source, owner="mallory", new_session_id="stolen")
    with pytest.raises(SessionNotFound):
        store.rewind_session(source, 1, owner="mallory")
    with pytest.raises(SessionNotFound):
        store.list_branches(source, owner="mallory")
    assert harness.leftovers() == before, "nothing was written"
    assert store.get_session("stolen", owner="mallory") is None
    fork = store.fork_session(source, owner="alice")
    assert fork.owner == "alice"


def test_bad_forks_are_refused_and_write_nothing(harness: Harness, source: str) -> None:
    store = harness.store
    store.create_session("alice", session_id="taken")
    before = harness.leftovers()
    with pytest.raises(InvalidInput, match="at_seq"):
        store.fork_session(source, at_seq=6)
    with pytest.raises(InvalidInput):
        store.fork_session(source, at_seq=-1)
    with pytest.raises(InvalidInput):
        store.fork_session(source, new_session_id="no spaces")
    with pytest.raises(InvalidInput):
        store.fork_session(source, state=float("nan"))
    with pytest.raises(SessionExists):
        store.fork_session(source, new_session_id="taken")
    with pytest.raises(SessionNotFound):
        store.fork_session("ghost")
    with pytest.raises(InvalidInput):
        store.rewind_session(source, 6)
    with pytest.raises(BranchNotFound):
        store.restore_branch(source, "never-made")
    with pytest.raises(BranchNotFound):
        store.list_messages(source, branch="never-made")
    assert harness.leftovers() == before


def test_rewind_keeps_the_later_messages_as_a_branch_and_restores_them(harness: Harness, source: str) -> None:
    store = harness.store
    whole = store.list_messages(source).items
    usage = store.get_session(source).usage
    rewound = store.rewind_session(source, 2, branch="first-try")
    assert rewound.last_seq == 2 and rewound.usage == total(whole[:2]) and rewound.compaction_seq is None
    assert store.list_messages(source).items == whole[:2]
    assert store.get_message(source, "m-3") is None
    (branch,) = store.list_branches(source)
    assert (branch.id, branch.session_id, branch.from_seq, branch.last_seq) == ("first-try", source, 2, 5)
    assert branch.usage == usage and branch.preview == "turn 2"
    assert store.list_messages(source, branch="first-try").items == whole
    page = store.list_messages(source, branch="first-try", after_seq=2, limit=2)
    assert [m.seq for m in page.items] == [3, 4] and page.next_cursor is not None
    again = store.list_messages(source, branch="first-try", limit=2, cursor=page.next_cursor, after_seq=2)
    assert [m.seq for m in again.items] == [5]
    new = store.append_messages(source, [{"role": "user", "content": "a different turn 2"}])
    assert new[0].seq == 3
    restored = store.restore_branch(source, "first-try", keep_as="second-try")
    assert restored.last_seq == 5 and restored.usage == usage and restored.compaction_seq == 4
    assert store.list_messages(source).items == whole
    assert [b.id for b in store.list_branches(source)] == ["second-try"]
    kept = store.list_messages(source, branch="second-try").items
    assert [m.content for m in kept] == [whole[0].content, whole[1].content, "a different turn 2"]
    # a restore under the branch's own name swaps the two lines
    store.restore_branch(source, "second-try", keep_as="second-try")
    assert [m.content for m in store.list_messages(source).items] == [m.content for m in kept]
    assert store.list_messages(source, branch="second-try").items == whole
    assert store.rewind_session(source, 3).last_seq == 3  # rewinding to the end changes nothing
    assert len(store.list_branches(source)) == 1
    # a rewind and a restore may label the line they go on with, in the same write
    labelled = store.rewind_session(source, 1, branch="third", metadata={"team": "ops", "line": "short"})
    assert labelled.metadata == {"team": "ops", "line": "short"} and labelled.last_seq == 1
    back = store.restore_branch(source, "third", keep_as="third", metadata={"team": "ops", "line": "long"})
    assert back.metadata == {"team": "ops", "line": "long"} and back.last_seq == 3


def test_rewind_brings_back_the_state_saved_with_the_transcript(harness: Harness) -> None:
    store = harness.store
    sid = store.create_session("alice").id
    store.save_full(sid, turns(2), {"plan": "A"})
    store.save_full(sid, turns(2, 2), {"plan": "B"})
    assert store.load_state(sid).version == 2
    back = store.rewind_session(sid, 2, branch="b")
    state = store.load_state(sid)
    assert (state.state, state.seq, state.version) == ({"plan": "A"}, 2, 3) and back.state_version == 3
    restored = store.restore_branch(sid, "b")
    assert store.load_state(sid).state == {"plan": "B"} and restored.state_version == 4
    # a state saved at or before the point stays as it is; one the store cannot know before it stays too
    other = store.create_session("alice").id
    store.append_messages(other, turns(3))
    store.save_state(other, {"known": "only now"})
    store.rewind_session(other, 1)
    assert store.load_state(other).state == {"known": "only now"}
    store.rewind_session(other, 0)
    assert store.get_session(other).last_seq == 0 and store.load_state(other).state == {"known": "only now"}
    # a caller that rewinds its own way (ADK) keeps no copy: the state then stays as it is
    own_way = store.create_session("alice").id
    store.save_full(own_way, turns(2), {"plan": "A"}, keep_state=False)
    store.save_full(own_way, turns(2, 2), {"plan": "B"}, keep_state=False)
    store.rewind_session(own_way, 2)
    assert store.load_state(own_way).state == {"plan": "B"}
    with pytest.raises(InvalidInput):
        store.save_full(own_way, turns(1), {}, keep_state="no")  # type: ignore[arg-type]


def test_branch_names_and_deleting_branches(harness: Harness, source: str) -> None:
    store = harness.store
    store.rewind_session(source, 4, branch="b1")
    before = harness.leftovers()
    with pytest.raises(Conflict):
        store.rewind_session(source, 1, branch="b1")
    assert harness.leftovers() == before
    store.rewind_session(source, 1, branch="b2")
    with pytest.raises(Conflict):
        store.restore_branch(source, "b1", keep_as="b2")
    assert [b.id for b in store.list_branches(source)] == ["b1", "b2"]
    store.delete_branch(source, "b1")
    store.delete_branch(source, "b1")  # idempotent
    assert [b.id for b in store.list_branches(source)] == ["b2"]
    with pytest.raises(BranchNotFound):
        store.list_messages(source, branch="b1")
    assert [m.seq for m in store.list_messages(source, branch="b2").items] == [1, 2, 3, 4]


def test_forks_and_rewinds_go_with_their_sessions(harness: Harness, source: str) -> None:
    store = harness.store
    store.rewind_session(source, 3, branch="b")
    store.append_messages(source, turns(2, 10))
    fork = store.fork_session(source, new_session_id="fork-1")
    second = store.fork_session("fork-1", at_seq=4, new_session_id="fork-2")
    assert second.metadata["forked_from"] == {"session_id": "fork-1", "seq": 4}
    assert shape(store.list_messages("fork-2").items) == shape(store.list_messages(source).items[:4])
    store.rewind_session("fork-2", 1)
    assert fork.last_seq == 5
    for sid in (source, "fork-1", "fork-2"):
        store.delete_session(sid)
    harness.cascade()
    assert harness.leftovers() == []


@pytest.mark.parametrize(
    "metadata",
    [
        {"framework": "langgraph", "langgraph": "log", "langgraph_thread": "t"},
        {"adk_scope": "user"},
        {"strands_storage": "strands-storage"},
    ],
    ids=["langgraph-log", "adk-user-state", "strands-storage"],
)
def test_an_adapters_own_bookkeeping_is_not_forked_or_rewound_from_outside(
    harness: Harness, metadata: dict[str, Any]
) -> None:
    store = harness.store
    sid = store.create_session("alice", metadata=metadata).id
    store.append_messages(sid, [{"role": "lg.c.x", "content": {"n": i}} for i in range(3)])
    before = harness.leftovers()
    with pytest.raises(InvalidInput, match="bookkeeping"):
        store.fork_session(sid, new_session_id="copy-1")
    with pytest.raises(InvalidInput, match="bookkeeping"):
        store.rewind_session(sid, 1)
    assert harness.leftovers() == before and store.get_session("copy-1") is None
    # the adapter that keeps it names what the copy is, and may make it
    fork = store.fork_session(sid, new_session_id="copy-2", metadata={**metadata, "copy": True})
    assert fork.last_seq == 3


def with_branches(store: SessionStore, count: int) -> str:
    """A new session of alice's keeping `count` branches, b0 oldest (each a one-message try, rewound)."""
    sid = store.create_session("alice").id
    for n in range(count):
        store.append_messages(sid, [{"role": "user", "content": f"try {n}"}])
        store.rewind_session(sid, 0, branch=f"b{n}")
    return sid


def test_branches_are_listed_a_page_at_a_time(harness: Harness) -> None:
    store = harness.store
    sid = with_branches(store, 5)
    seen, cursor, pages = [], None, 0
    while True:
        page = store.list_branches(sid, limit=2, cursor=cursor)
        assert len(page) <= 2
        seen += [b.id for b in page]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [f"b{n}" for n in range(5)] and pages == 3
    everything = store.list_branches(sid)
    assert [b.id for b in everything] == seen and everything.next_cursor is None
    for bad in (0, 101, True, "2"):
        with pytest.raises(InvalidInput):
            store.list_branches(sid, limit=bad)  # type: ignore[arg-type]
    other = store.create_session("alice").id
    with pytest.raises(InvalidInput):
        store.list_branches(other, cursor=store.list_branches(sid, limit=1).next_cursor)  # another listing's


# DynamoDB keeps the bound with a count on the head: tests/aws/test_forks_on_aws.py
@pytest.mark.backends("memory", "async-memory", "scoped")
def test_a_session_keeps_at_most_a_hundred_branches(harness: Harness) -> None:
    store = harness.store
    sid = with_branches(store, 100)
    store.append_messages(sid, [{"role": "user", "content": "one more"}])
    with pytest.raises(InvalidInput, match="100 branches"):
        store.rewind_session(sid, 0, branch="b100")
    assert store.get_session(sid).last_seq == 1 and len(store.list_branches(sid)) == 100  # nothing changed
    store.delete_branch(sid, "b0")
    assert store.rewind_session(sid, 0, branch="b100").last_seq == 0  # room again
    assert [b.id for b in store.list_branches(sid)][-1] == "b100"
