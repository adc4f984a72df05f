"""Contract tests for trace events: compressed JSON-lines batches, in order, per run."""

from __future__ import annotations

import pytest

from store import InvalidInput, SessionNotFound
from tests.conftest import Harness


def test_batches_load_in_order(harness: Harness, session_id: str) -> None:
    store = harness.store
    before = store.get_session(session_id).updated_at
    assert store.append_trace_events(session_id, "run-1", [{"i": 0}, {"i": 1}]) == 1
    assert store.append_trace_events(session_id, "run-1", [{"i": 2, "nested": {"ü": [1, 2.5, None]}}]) == 2
    assert store.get_session(session_id).updated_at > before
    assert store.load_trace_events(session_id, "run-1") == [
        {"i": 0},
        {"i": 1},
        {"i": 2, "nested": {"ü": [1, 2.5, None]}},
    ]
    assert store.load_trace_events(session_id, "run-unknown") == []


def test_all_runs_in_the_order_they_started(harness: Harness, session_id: str) -> None:
    store = harness.store
    assert store.list_trace_runs(session_id) == []
    assert store.load_trace_events(session_id) == []
    store.append_trace_events(session_id, "zeta", [{"e": "z1"}])
    store.append_trace_events(session_id, "alpha", [{"e": "a1"}])
    store.append_trace_events(session_id, "zeta", [{"e": "z2"}])
    assert store.list_trace_runs(session_id) == ["zeta", "alpha"]
    assert store.load_trace_events(session_id) == [{"e": "z1"}, {"e": "z2"}, {"e": "a1"}]


def test_a_second_writer_continues_the_run(harness: Harness, session_id: str) -> None:
    """Another store (another Lambda container) appends after this one without losing the order."""
    first, second = harness.store, harness.twin()
    first.append_trace_events(session_id, "r", [{"n": 1}])
    assert second.append_trace_events(session_id, "r", [{"n": 2}]) == 2
    assert first.append_trace_events(session_id, "r", [{"n": 3}]) == 3
    assert [e["n"] for e in first.load_trace_events(session_id, "r")] == [1, 2, 3]


def test_bad_trace_input_writes_nothing(harness: Harness, session_id: str) -> None:
    store = harness.store
    before = harness.snapshot()
    for call in (
        lambda: store.append_trace_events(session_id, "r", []),
        lambda: store.append_trace_events(session_id, "r", [1, 2]),  # type: ignore[list-item]
        lambda: store.append_trace_events(session_id, "r", {"not": "a list"}),  # type: ignore[dict-item]
        lambda: store.append_trace_events(session_id, "r", [{"x": float("nan")}]),
        lambda: store.append_trace_events(session_id, "../r", [{"x": 1}]),
        lambda: store.load_trace_events(session_id, "bad/run"),
    ):
        with pytest.raises(InvalidInput):
            call()
    with pytest.raises(SessionNotFound):
        store.append_trace_events(session_id, "r", [{"x": 1}], owner="mallory")
    with pytest.raises(SessionNotFound):
        store.load_trace_events(session_id, owner="mallory")
    with pytest.raises(SessionNotFound):
        store.append_trace_events("no-such-session", "r", [{"x": 1}])
    assert harness.snapshot() == before


def test_several_runs_are_appended_in_one_write(harness: Harness, session_id: str) -> None:
    """`append_trace_runs`: a batch for each run at once, numbered after what each run already holds, by
    this store or another; on DynamoDB one transaction numbers them all."""
    store = harness.store
    store.append_trace_events(session_id, "r1", [{"n": 1}])
    harness.twin().append_trace_events(session_id, "r2", [{"n": 1}])  # numbered behind this store's back
    numbers = store.append_trace_runs(session_id, {"r1": [{"n": 2}], "r2": [{"n": 2}, {"n": 3}], "r3": [{"n": 1}]})
    assert numbers == {"r1": 2, "r2": 2, "r3": 1}
    assert [e["n"] for e in store.load_trace_events(session_id, "r2")] == [1, 2, 3]
    assert store.list_trace_runs(session_id) == ["r1", "r2", "r3"]


def test_bad_runs_write_nothing(harness: Harness, session_id: str) -> None:
    from store.core.validation import MAX_TRACE_EVENTS, MAX_TRACE_RUNS

    store = harness.store
    before = harness.snapshot()
    bad = [
        {},
        {f"r{i}": [{"i": i}] for i in range(MAX_TRACE_RUNS + 1)},
        {"a": [{"i": 0}] * MAX_TRACE_EVENTS, "b": [{"i": 1}]},
        {"ok": [{"i": 0}], "../x": [{"i": 1}]},
        {"ok": []},
        {"ok": [{"i": float("nan")}]},
        [("ok", [{"i": 0}])],
    ]
    for runs in bad:
        with pytest.raises(InvalidInput):
            store.append_trace_runs(session_id, runs)  # type: ignore[arg-type]
    assert harness.snapshot() == before
    with pytest.raises(SessionNotFound):
        store.append_trace_runs("nobody-here", {"r": [{"i": 0}]})
    with pytest.raises(SessionNotFound):  # another owner's session is absent
        store.append_trace_runs(session_id, {"r": [{"i": 0}]}, owner="mallory")
    assert harness.snapshot() == before
