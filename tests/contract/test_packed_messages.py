"""Small messages of one write read exactly as messages appended one by one, on every backend (issue 38).

The DynamoDB backends keep runs of small messages without ids of their own in one item (a pack, keyed at its
last message: `store/aws/packs.py`); every per-message call must read and change them as if each had its own
item. The transcript here mixes packs of 16 (the most one holds), a short pack, messages with ids (never
packed) and a body too large for a pack, so that every range starts and ends inside, at and between packs."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from store import SessionStore
from tests.conftest import Harness


def incompressible(size: int) -> str:
    """`size` characters that zlib cannot shrink much (hex of a hash chain)."""
    out: list[str] = []
    block = b"seed"
    while sum(len(o) for o in out) < size:
        block = hashlib.sha256(block).digest()
        out.append(block.hex())
    return "".join(out)[:size]


def transcript(store: SessionStore) -> tuple[str, list[dict[str, Any]]]:
    """A session of 46 messages written in 3 calls, and what each message is (role, content, id if given)."""
    sid = store.create_session("alice", title="packed").id
    first = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"small {i}"} for i in range(20)]
    second = [
        {"role": "user", "content": "with id", "id": "given-1"},
        *({"role": "tool", "content": f"tool {i}"} for i in range(5)),
        {"role": "assistant", "content": incompressible(6000)},  # too large for a pack
        *({"role": "assistant", "content": f"after {i}"} for i in range(3)),
        {"role": "user", "content": "with id too", "id": "given-2"},
    ]
    third = [
        {"role": "user" if i % 3 else "tool", "content": f"third {i}", "usage": {"input_tokens": i}} for i in range(15)
    ]
    expected: list[dict[str, Any]] = []
    for batch in (first, second, third):
        records = store.append_messages(sid, batch)
        expected += [{"role": r.role, "content": r.content, "id": r.id, "seq": r.seq} for r in records]
    return sid, expected


def seen(records: Any) -> list[tuple[int, str]]:
    return [(r.seq, r.content) for r in records]


def want(expected: list[dict[str, Any]], lo: int = 1, hi: int = 10**9) -> list[tuple[int, str]]:
    return [(m["seq"], m["content"]) for m in expected if lo <= m["seq"] <= hi]


def test_every_range_reads_as_single_messages(harness: Harness) -> None:
    store = harness.store
    sid, expected = transcript(store)
    assert [m["seq"] for m in expected] == list(range(1, 47))
    assert seen(store.list_messages(sid).items) == want(expected)
    for after in (0, 1, 7, 15, 16, 17, 19, 20, 21, 27, 30, 31, 44, 45, 46):
        assert seen(store.list_messages(sid, after_seq=after).items) == want(expected, after + 1), after
    for before in (1, 2, 8, 16, 17, 18, 21, 29, 33, 46):
        got = store.list_messages(sid, before_seq=before).items
        assert seen(got) == want(expected, 1, before - 1), before
        newest = store.list_messages(sid, before_seq=before, newest_first=True, limit=3).items
        assert seen(newest) == want(expected, 1, before - 1)[::-1][:3], before
    assert seen(store.list_messages(sid, after_seq=3, before_seq=14).items) == want(expected, 4, 13)
    for n in (1, 3, 16, 17, 30, 45, 50):
        assert seen(store.last_messages(sid, n)) == want(expected)[-n:], n
    tools = store.list_messages(sid, roles=["tool"]).items
    assert seen(tools) == [(m["seq"], m["content"]) for m in expected if m["role"] == "tool"]


@pytest.mark.parametrize("newest_first", [False, True])
def test_pages_cut_inside_packs_follow_on_exactly(harness: Harness, newest_first: bool) -> None:
    store = harness.store
    sid, expected = transcript(store)
    got: list[tuple[int, str]] = []
    cursor = None
    pages = 0
    while True:
        page = store.list_messages(sid, limit=7, cursor=cursor, newest_first=newest_first)
        got += seen(page.items)
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert got == (want(expected)[::-1] if newest_first else want(expected)) and pages == 7


def test_each_message_is_found_by_its_id_and_changed_alone(harness: Harness) -> None:
    store = harness.store
    sid, expected = transcript(store)
    for m in expected:
        found = store.get_message(sid, m["id"])
        assert found is not None and (found.seq, found.content) == (m["seq"], m["content"]), m
    assert store.get_message(sid, expected[3]["id"] + "0") is None  # a sibling's id that does not exist
    before = store.get_session(sid).usage.input_tokens or 0
    target = expected[5]  # inside the first pack
    store.update_usage(sid, target["id"], {"input_tokens": 100})
    assert store.get_session(sid).usage.input_tokens == before + 100
    assert store.get_message(sid, target["id"]).usage.input_tokens == 100
    store.mark_compaction(sid, expected[9]["id"])
    assert seen(store.list_messages(sid, since_compaction=True).items) == want(expected, 10)
    assert seen(store.list_messages(sid).items) == want(expected)  # nothing else moved


@pytest.mark.needs("pop_message")
def test_pops_take_packed_messages_one_at_a_time(harness: Harness) -> None:
    store = harness.store
    sid, expected = transcript(store)
    for n in range(1, 18):  # through the last pack, the ones with ids, and into the next pack
        popped = store.pop_message(sid)
        assert popped is not None and (popped.seq, popped.content) == want(expected)[-n], n
        assert seen(store.last_messages(sid, 3)) == want(expected, 1, 46 - n)[-3:], n
    assert store.get_session(sid).last_seq == 29
    appended = store.append_messages(sid, [{"role": "user", "content": f"new {i}"} for i in range(3)])
    assert [r.seq for r in appended] == [30, 31, 32]
    assert seen(store.list_messages(sid, after_seq=27).items) == [
        *want(expected, 28, 29),
        *((30 + i, f"new {i}") for i in range(3)),
    ]


def test_forks_and_rewinds_cut_packs_where_asked(harness: Harness) -> None:
    store = harness.store
    sid, expected = transcript(store)
    fork = store.fork_session(sid, at_seq=10)
    assert seen(store.list_messages(fork.id).items) == want(expected, 1, 10)
    appended = store.append_messages(fork.id, [{"role": "user", "content": f"fork {i}"} for i in range(3)])
    assert [r.seq for r in appended] == [11, 12, 13]
    store.rewind_session(sid, 18)
    assert seen(store.list_messages(sid).items) == want(expected, 1, 18)
    again = store.append_messages(sid, [{"role": "user", "content": f"again {i}"} for i in range(4)])
    assert [r.seq for r in again] == [19, 20, 21, 22]
    assert seen(store.last_messages(sid, 6)) == [*want(expected, 17, 18), *((19 + i, f"again {i}") for i in range(4))]
    assert seen(store.list_messages(fork.id).items)[-4:] == [
        *want(expected, 10, 10),
        *((11 + i, f"fork {i}") for i in range(3)),
    ]


def test_search_and_load_full_find_packed_messages(harness: Harness) -> None:
    store = harness.store
    sid, expected = transcript(store)
    hits = store.search("alice", "third 7")
    assert any(h.session_id == sid and h.seq == expected[38]["seq"] for h in hits), [(h.seq, h.snippet) for h in hits]
    full = store.load_full(sid, last=5)
    assert seen(full.messages) == want(expected)[-5:]
    snapshot = store.save_full(sid, [{"role": "user", "content": f"full {i}"} for i in range(4)], {"n": 1})
    assert snapshot.seq == 50
    assert seen(store.load_full(sid).messages)[-4:] == [(47 + i, f"full {i}") for i in range(4)]
