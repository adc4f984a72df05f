"""Contract: search over an owner's titles and message text (run on every backend)."""

from __future__ import annotations

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
