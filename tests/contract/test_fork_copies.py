"""A long fork or rewind copies its transcript after its call, on every backend (issue 37): the session is
visible as `copying` with its progress and becomes readable when the copy is done; meanwhile the source's
messages the copy takes are pinned (a change to them is a retryable Conflict) and nothing else of either
session is touched. The memory backends take a step of each copy before each call; the DynamoDB ones leave
it to the stack's copy job (`harness.cascade()`)."""

from __future__ import annotations

from typing import Any

import pytest

from store import Conflict, InvalidInput, SessionStore, TokenUsage
from tests.conftest import Harness

APPEND_MAX = 97


def long_session(store: SessionStore, count: int) -> str:
    """A session of alice's with `count` messages (m1, m2, ...; each with usage 1/1)."""
    sid = store.create_session("alice", title="long").id
    for start in range(0, count, APPEND_MAX):
        batch = [
            {"role": "user", "id": f"m{i + 1}", "content": f"message {i + 1}", "usage": {"input_tokens": 1}}
            for i in range(start, min(count, start + APPEND_MAX))
        ]
        store.append_messages(sid, batch)
    return sid


def copied(harness: Harness, session_id: str) -> Any:
    """The session once its copy is done, driving the copy as the stack does (bounded)."""
    store = harness.store
    for _ in range(20):
        session = store.get_session(session_id)
        if session is not None and not session.copying:
            return session
        harness.cascade()
    raise AssertionError(f"the copy into {session_id} did not end")


@pytest.fixture
def source(harness: Harness) -> str:
    return long_session(harness.store, harness.store.settings.fork_inline_messages + 150)


@pytest.mark.slow
def test_a_long_fork_is_copying_then_readable_and_its_source_pinned_meanwhile(harness: Harness, source: str) -> None:
    store = harness.store
    count = store.get_session(source).last_seq
    fork = store.fork_session(source, new_session_id="long-fork")
    assert fork.copying and fork.last_seq == count and (fork.copied or 0) < count
    seen = store.get_session("long-fork")
    assert seen is not None and seen.copying and seen.metadata["forked_from"] == {"session_id": source, "seq": count}
    for call in (
        lambda: store.list_messages("long-fork"),
        lambda: store.last_messages("long-fork", 2),
        lambda: store.append_messages("long-fork", [{"role": "user", "content": "too soon"}]),
        lambda: store.load_full("long-fork"),
        lambda: store.save_state("long-fork", {"too": "soon"}),
    ):
        with pytest.raises(Conflict, match="still being copied"):
            call()
    # the source: what the copy takes is pinned; the rest of it lives on
    with pytest.raises(Conflict, match="being copied into a fork"):
        store.update_usage(source, "m2", {"input_tokens": 9})
    if harness.supports("pop_message"):
        with pytest.raises(Conflict, match="being copied into a fork"):
            store.pop_message(source)
    with pytest.raises(Conflict, match="being copied into a fork"):
        store.rewind_session(source, 1)
    (later,) = store.append_messages(source, [{"role": "user", "content": "after the fork"}])
    store.update_usage(source, later.id, {"input_tokens": 5})  # past what the copy takes
    store.save_state(source, {"goes": "on"})
    done = copied(harness, "long-fork")
    assert done.last_seq == count and done.copied is None
    assert done.usage == TokenUsage(input_tokens=count, total_tokens=count)
    messages = store.list_messages("long-fork").items
    assert [m.id for m in messages] == [f"m{i}" for i in range(1, count + 1)]
    assert all(m.session_id == "long-fork" for m in messages)
    store.update_usage(source, "m2", {"input_tokens": 9})  # the pin went with the copy
    assert store.get_message("long-fork", "m2").usage == TokenUsage(input_tokens=1, total_tokens=1)
    store.append_messages("long-fork", [{"role": "user", "content": "the fork's own"}])
    assert store.get_session(source).last_seq == count + 1


@pytest.mark.slow
def test_deleting_either_side_of_a_copy_leaves_the_other_whole(harness: Harness, source: str) -> None:
    store = harness.store
    count = store.get_session(source).last_seq
    store.fork_session(source, new_session_id="dropped")
    store.delete_session("dropped")  # a fork deleted while copying lets go of its source
    harness.cascade()
    store.update_usage(source, "m2", {"input_tokens": 2})  # a pinned source would refuse it
    assert store.get_session("dropped") is None
    store.fork_session(source, new_session_id="kept")
    store.delete_session(source)  # the source's delete finishes the copies out of it first
    harness.cascade()
    kept = copied(harness, "kept")
    assert kept.last_seq == count and kept.usage.input_tokens == count + 1
    assert [m.id for m in store.list_messages("kept").items] == [f"m{i}" for i in range(1, count + 1)]


@pytest.mark.slow
def test_a_long_rewind_is_copying_then_continues(harness: Harness, source: str) -> None:
    store = harness.store
    count = store.get_session(source).last_seq
    to = count - 10
    rewound = store.rewind_session(source, to, branch="before")
    assert rewound.last_seq == to and rewound.copying
    with pytest.raises(Conflict, match="still being copied"):
        store.append_messages(source, [{"role": "user", "content": "too soon"}])
    done = copied(harness, source)
    assert done.last_seq == to and not done.copying
    assert [m.id for m in store.list_messages(source).items] == [f"m{i}" for i in range(1, to + 1)]
    store.append_messages(source, [{"role": "user", "content": "again"}])
    (branch,) = store.list_branches(source)
    assert branch.last_seq == count and len(store.list_messages(source, branch="before").items) == count


@pytest.mark.slow
@pytest.mark.needs("reclaim")
def test_the_cascade_leaves_copies_to_the_copy_job(harness: Harness, source: str) -> None:
    """The stream's jobs are separate: the cascade's (every job but "copy") never moves a copy on; the copy
    job's ("copy") does. Jobs that are not the stream's are refused."""
    from store.core.rules import CASCADE_JOBS

    store = harness.store
    store.fork_session(source, new_session_id="separate")
    harness.cascade(jobs=tuple(sorted(CASCADE_JOBS)))
    assert store.get_session("separate").copied == 0
    harness.cascade(jobs=("copy",))
    assert (store.get_session("separate").copied or 0) > 0 or not store.get_session("separate").copying
    bad_jobs: tuple[Any, ...] = (["nope"], [], "copy", [1])
    for bad in bad_jobs:
        with pytest.raises(InvalidInput):
            harness.operator().reclaim([], jobs=bad)


def test_the_memory_backend_finishes_a_long_copy_by_itself() -> None:
    """What users' own tests run on (`SessionStore.memory()`, nothing calling `reclaim`): a fork and a rewind
    longer than the inline window are copied in the background, as the stack's copy function does, and
    become readable without anyone driving them."""
    import time

    from store import Settings

    store = SessionStore.memory(Settings(fork_inline_messages=5))
    source, other = long_session(store, 30), long_session(store, 30)
    fork = store.fork_session(source, new_session_id="later")
    rewound = store.rewind_session(other, 12)
    assert fork.copying and rewound.copying
    deadline = time.monotonic() + 30
    while any(s.copying for s in (store.get_session("later"), store.get_session(other))):
        assert time.monotonic() < deadline, "the copies did not finish by themselves"
        time.sleep(0.05)
    assert [m.id for m in store.list_messages("later").items] == [f"m{i}" for i in range(1, 31)]
    assert [m.id for m in store.list_messages(other).items] == [f"m{i}" for i in range(1, 13)]
    store.update_usage(source, "m2", {"input_tokens": 9})  # the source's pin went with the copy
    store.append_messages("later", [{"role": "user", "content": "and on"}])
