"""The DynamoDB backend's own side of test_traces.py (moved out of the contract suite: these look
at requests, keys, streams or the bucket, which only it has)."""

from __future__ import annotations

import gzip
import json

from store import SessionStore
from tests.conftest import Harness


def test_a_batch_is_one_gzip_json_lines_object(dyn: Harness) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    dyn.requests.clear()
    store.append_trace_events(sid, "run-7", [{"a": 1}, {"b": "two"}])
    assert dyn.requests.names == ["TransactWriteItems", "PutObject", "DeleteItem"]
    sessions, _, _ = dyn.snapshot()
    assert not any(i["pk"]["S"].startswith("U#") for i in sessions), "a written batch leaves no intent"
    (key,) = dyn.objects()
    assert key.endswith(f"/{sid}/traces/run-7/0000000001.jsonl.gz")
    body = dyn.s3.get_object(Bucket=dyn.tables.bucket, Key=key)["Body"].read()
    assert [json.loads(line) for line in gzip.decompress(body).splitlines()] == [{"a": 1}, {"b": "two"}]


def test_a_lost_batch_is_skipped(dyn: Harness) -> None:
    """A batch whose upload failed after its number was allocated is a gap, not an error."""
    store: SessionStore = dyn.store
    sid = store.create_session("alice").id
    for n in range(3):
        store.append_trace_events(sid, "r", [{"n": n}])
    middle = [k for k in dyn.objects() if k.endswith("0000000002.jsonl.gz")]
    dyn.s3.delete_object(Bucket=dyn.tables.bucket, Key=middle[0])
    assert store.load_trace_events(sid, "r") == [{"n": 0}, {"n": 2}]


def test_several_runs_take_one_numbering_transaction(dyn: Harness) -> None:
    """One transaction numbers every run's batch, and one more the run whose number another store took."""
    sid = dyn.store.create_session("alice").id
    dyn.store.append_trace_events(sid, "r1", [{"n": 1}])
    dyn.twin().append_trace_events(sid, "r2", [{"n": 1}])
    assert dyn.requests is not None
    dyn.requests.clear()
    assert dyn.store.append_trace_runs(sid, {"r1": [{"n": 2}], "r2": [{"n": 2}], "r3": [{"n": 1}]}) == {
        "r1": 2,
        "r2": 2,
        "r3": 1,
    }
    assert dyn.requests.count("TransactWriteItems") == 2 and dyn.requests.count("PutObject") == 3
