"""What one search call asks of DynamoDB: the same requests whatever the owner has accumulated."""

from __future__ import annotations

import pytest

from tests.conftest import Harness


def fill(dyn: Harness, owner: str, sessions: int) -> None:
    for i in range(sessions):
        sid = dyn.store.create_session(owner, title=f"s{i}").id
        dyn.store.append_messages(sid, [{"role": "user", "content": f"needle {i}.{j}"} for j in range(3)])


@pytest.mark.settings(search_sessions=5, search_messages=100)
def test_a_search_call_reads_the_same_whatever_the_owner_holds(dyn: Harness) -> None:
    asked = {}
    for owner, sessions in (("few", 12), ("many", 40)):
        fill(dyn, owner, sessions)
        dyn.requests.clear()
        hits = dyn.store.search(owner, "needle", limit=100)
        asked[owner] = sorted(dyn.requests.names)
        assert hits.sessions_searched == 5 and hits.messages_searched == 15 and hits.next_cursor is not None
        dyn.requests.clear()
        more = dyn.store.search(owner, "needle", limit=100, cursor=hits.next_cursor)
        assert sorted(dyn.requests.names) == asked[owner]  # a continuation costs what the first page does
        assert not {(h.session_id, h.seq) for h in hits} & {(h.session_id, h.seq) for h in more}
    # one Query of the owner index page and one Query per session read, at any size of the owner's history
    assert asked["few"] == asked["many"] == ["Query"] * 6
