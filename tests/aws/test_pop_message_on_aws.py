"""The DynamoDB backend's own side of test_pop_message.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

import secrets

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
