"""The DynamoDB backend's own side of test_messages.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

from typing import Any

from tests.conftest import Harness


def test_a_role_filter_reads_a_bounded_amount(dyn: Harness, dynamodb_client: Any) -> None:
    """A filtered page evaluates from `limit` items, doubling page by page: a dense filter reads little more
    than it returns, a sparse one takes few requests (DynamoDB bills the items a filter evaluates)."""
    scanned: list[int] = []
    dynamodb_client.meta.events.register(
        "after-call.dynamodb.Query", lambda parsed, **_: scanned.append(parsed.get("ScannedCount", 0))
    )
    session = dyn.store.create_session("u").id
    roles = ["tool" if i % 50 == 49 else "assistant" for i in range(300)]  # 6 tool messages in 300
    messages = [{"role": r, "content": i} for i, r in enumerate(roles)]
    for start in range(0, 300, 97):
        dyn.store.append_messages(session, messages[start : start + 97])
    scanned.clear()
    dense = dyn.store.list_messages(session, roles=["assistant"], limit=3, newest_first=True)
    assert [m.content for m in dense.items] == [298, 297, 296]
    assert sum(scanned) <= 12  # 4 items, then 8: not the 300 of the transcript
    scanned.clear()
    sparse = dyn.store.list_messages(session, roles=["tool"], limit=5)
    assert [m.content for m in sparse.items] == [49, 99, 149, 199, 249] and sparse.next_cursor
    assert len(scanned) <= 7  # 6, 12, 24, ... items evaluated: not 300 / 6 requests
    rest = dyn.store.list_messages(session, roles=["tool"], limit=5, cursor=sparse.next_cursor)
    assert [m.content for m in rest.items] == [299] and rest.next_cursor is None
