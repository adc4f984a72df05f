"""Contract: search over an owner's titles and message text (run on every backend)."""

from __future__ import annotations

from typing import Any

import pytest

from store import InvalidInput, SessionStore


def test_search_titles_and_messages_case_insensitively(store: SessionStore) -> None:
    a = store.create_session("alice", title="Quarterly REPORT").id
    b = store.create_session("alice", title="Groceries").id
    store.append_messages(
        b,
        [
            {"role": "user", "content": "buy milk"},
            {"role": "assistant", "content": [{"type": "text", "text": "Draft the report, then the Report summary"}]},
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "report", "name": "search", "input": {"q": "x"}}}],
            },
        ],
    )
    other = store.create_session("bob", title="report for bob").id
    hits = store.search("alice", "report")
    assert {h.session_id for h in hits} == {a, b}
    assert other not in {h.session_id for h in hits}
    by_seq = {(h.session_id, h.seq): h for h in hits}
    assert (a, None) in by_seq and (b, 2) in by_seq and (b, 3) not in by_seq
    assert by_seq[(b, 2)].score == 2 and "report" in by_seq[(b, 2)].snippet.lower()
    assert hits == sorted(hits, key=lambda h: h.score, reverse=True)
    assert store.search("alice", "nothing-like-this") == []
    assert len(store.search("alice", "report", limit=1)) == 1


def test_search_sees_writes_made_just_before(store: SessionStore) -> None:
    s = store.create_session("carol").id
    store.append_messages(s, [{"role": "user", "content": "a needle in a haystack"}])
    assert [h.seq for h in store.search("carol", "NEEDLE")] == [1]
    store.update_session(s, title="Needle work")
    assert any(h.seq is None for h in store.search("carol", "needle"))
    store.delete_session(s)
    assert store.search("carol", "needle") == []


@pytest.mark.parametrize("query", ["", "   ", "x" * 300, None, 5])
def test_search_rejects_bad_queries(store: SessionStore, query: object) -> None:
    with pytest.raises(InvalidInput):
        store.search("alice", query)  # type: ignore[arg-type]


def every_hit(store: SessionStore, owner: str, query: str) -> tuple[list[list[tuple[str, int | None]]], list[Any]]:
    """Page through a search to its end: each call's hits, and each call's result."""
    calls: list[Any] = []
    cursor = None
    while True:
        hits = store.search(owner, query, limit=100, cursor=cursor)
        calls.append(hits)
        if hits.next_cursor is None:
            return [[(h.session_id, h.seq) for h in c] for c in calls], calls
        cursor = hits.next_cursor
        assert len(calls) < 50, "the search must end"


@pytest.mark.settings(search_sessions=3, search_messages=10)
def test_each_search_call_is_bounded_and_its_cursor_reaches_every_session(store: SessionStore) -> None:
    made = []
    for i in range(7):
        sid = store.create_session("dora", title=f"needle {i}").id
        store.append_messages(sid, [{"role": "user", "content": f"needle {i}.{j}"} for j in range(4)])
        made.append(sid)
    store.append_messages(made[0], [{"role": "user", "content": "needle again"}])  # now the newest
    pages, calls = every_hit(store, "dora", "needle")
    for c in calls:
        assert c.sessions_searched <= 3 and c.messages_searched <= 10
    assert calls[0].sessions_searched == 3 and calls[0].next_cursor is not None
    found = [hit for page in pages for hit in page]
    expected = [(sid, None) for sid in made] + [(sid, q) for sid in made for q in range(1, 5)] + [(made[0], 5)]
    assert sorted(found, key=repr) == sorted(expected, key=repr)  # every title and message, each once
    assert {sid for sid, _ in pages[0]} >= {made[0]}  # newest (most recently updated) sessions first
    assert sum(c.messages_searched for c in calls) == 29 and sum(c.sessions_searched for c in calls) >= 7


@pytest.mark.settings(search_sessions=5, search_messages=10)
def test_a_session_longer_than_the_budget_is_read_across_calls(store: SessionStore) -> None:
    sid = store.create_session("ed", title="long needle").id
    for start in range(0, 25, 5):
        store.append_messages(sid, [{"role": "user", "content": f"needle {start + j}"} for j in range(5)])
    pages, calls = every_hit(store, "ed", "needle")
    assert [c.messages_searched for c in calls] == [10, 10, 5]
    assert [sorted(q for _, q in page if q is not None) for page in pages] == [
        list(range(16, 26)),  # newest messages first
        list(range(6, 16)),
        list(range(1, 6)),
    ]
    assert [(s, q) for page in pages for s, q in page if q is None] == [(sid, None)]  # the title once


def test_a_search_cursor_belongs_to_its_owner(store: SessionStore) -> None:
    store.create_session("fay", title="needle")
    with pytest.raises(InvalidInput):
        store.search("fay", "needle", cursor="not-a-cursor")
    store.create_session("gus", title="needle")
    listing = store.list_sessions("fay", limit=1)
    other_kind = listing.next_cursor or "eyJrIjoic2Vzc2lvbnMiLCJzIjoiZmF5IiwicCI6e319"
    with pytest.raises(InvalidInput):
        store.search("fay", "needle", cursor=other_kind)  # a listing cursor is not a search cursor
    hits = store.search("fay", "needle")
    assert hits.next_cursor is None and hits.sessions_searched == 1
