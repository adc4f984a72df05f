"""Nothing is left in the bucket: session delete removes the session's prefix, and the records of the
sessions table's stream (read from moto's stream) reclaim uncommitted uploads and released objects."""

from __future__ import annotations

import base64
import os
from typing import Any

import pytest

from tests.conftest import Harness

MB = 1024 * 1024


def blob(n: int) -> str:
    return base64.b64encode(os.urandom(n * 3 // 4)).decode()


def fill(store: Any, sid: str) -> None:
    """One of everything that lives in S3."""
    store.put_artifact(sid, "a.txt", b"a")
    store.put_artifact(sid, "a.txt", b"aa")
    store.put_artifact(sid, "dir/b.bin", b"b")
    store.append_messages(sid, [{"role": "tool", "content": blob(MB)}])
    store.save_state(sid, {"s": blob(MB)})
    store.save_records(sid, "runs", [blob(MB)])
    store.append_trace_events(sid, "run-1", [{"e": 1}])
    store.append_trace_events(sid, "run-2", [{"e": 2}])


def test_delete_session_leaves_nothing(harness: Harness) -> None:
    store = harness.store
    other = store.create_session("alice").id
    store.put_artifact(other, "keep.txt", b"keep")
    others = harness.leftovers()  # what the other session holds
    sid = store.create_session("alice").id
    fill(store, sid)
    assert len(harness.leftovers("artifact")) == 4 and len(harness.leftovers("trace")) >= 2
    store.delete_session(sid)
    assert harness.leftovers() == others  # nothing of the deleted session, all of the other's
    store.delete_session(sid)  # idempotent
    store.delete_session(other)
    assert harness.leftovers() == []
    store.create_session("alice", session_id=sid)
    assert store.list_artifacts(sid) == [] and store.list_trace_runs(sid) == []


@pytest.mark.needs("reclaim")
def test_reclaim_without_bucket_or_with_bad_records(store: Any) -> None:
    from store import InvalidInput

    with pytest.raises(InvalidInput):
        store.reclaim(["not a record"])
    assert store.reclaim([]) == 0
