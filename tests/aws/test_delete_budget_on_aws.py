"""The DynamoDB backend's own side of test_delete_budget.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from store import deadline
from store.aws.keys import head_key
from store.aws.plans import sessions
from tests.conftest import Harness
from tests.contract.test_delete_budget import big


def test_a_purge_that_runs_out_of_time_hands_the_rest_off(
    dyn: Harness, inspector_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = big(dyn.store, "cy", 300, item_each=True)
    monkeypatch.setattr(sessions, "PURGE_PAGE", 50)
    # time for two pages of 50 messages, then the deadline is near (the cascade that finishes has all it needs)
    checks = itertools.chain([False, False, True], itertools.repeat(False))
    monkeypatch.setattr(sessions, "out_of_time", lambda ctx, reserve: next(checks))
    dyn.requests.clear()
    with deadline(30):
        dyn.store.delete_session(sid)
    assert dyn.requests.count("UpdateItem") == 2  # marked deleting, then handed off
    assert dyn.tables is not None
    head = inspector_client.get_item(TableName=dyn.tables.sessions, Key=head_key(sid), ConsistentRead=True)
    assert head["Item"]["handoff"] == {"BOOL": True} and head["Item"]["deleting"] == {"BOOL": True}
    _, messages, _ = dyn.snapshot()
    assert len(messages) == 200 and dyn.store.get_session(sid) is None
    dyn.cascade()
    assert dyn.snapshot() == ([], [], []) and dyn.objects() == []
