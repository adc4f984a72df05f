"""Contract: hostile values are refused at once with InvalidInput, write nothing and make no retries (every
backend). The regressions of the hardening probe: numbers DynamoDB cannot store, JSON that cannot be
encoded, and values that used to raise a raw exception."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from store import InvalidInput, SessionStore, TokenUsage
from tests.conftest import Harness

# numbers no DynamoDB number attribute can hold (range 1e-130..1e126, 38 digits), and ones whose sums
# would outgrow 38 digits; each refused in usage wherever usage is taken
BAD_USAGE: list[dict[str, Any]] = [
    {"cost": 1e300},
    {"cost": 1e-300},
    {"cost": -1e300},
    {"cost": float("nan")},
    {"cost": float("inf")},
    {"cost": float("-inf")},
    {"cost": 1e13},
    {"cost": 1e-13},
    {"input_tokens": 10**16},
    {"output_tokens": 10**40},
    {"total_tokens": -1},
    {"cache_read_tokens": 10**50},
]


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


# JSON values that cannot be stored: a lone surrogate (no UTF-8 form) as a value and as a key, 10,000
# levels of nesting, an integer of thousands of digits, a non-string key, a non-finite float, a set
BAD_JSON: list[Any] = [
    "\ud800",
    {"\udfff": 1},
    {"k": ["ok", "\ud83d"]},
    _deep(10_000),
    10**5000,
    {"k": 10**1001},
    {1: "a"},
    {("t", "u"): "a"},
    {"k": float("nan")},
    {"k": {1, 2}},
]


def refused(harness: Harness, call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """`call(*args, **kwargs)` raises InvalidInput, writes nothing and sends no request that could be retried."""
    before = harness.snapshot()
    if harness.requests is not None:  # the AWS requests behind the store (the memory backends send none)
        harness.requests.clear()
    with pytest.raises(InvalidInput):
        call(*args, **kwargs)
    assert harness.snapshot() == before, "a refused call must write nothing"
    if harness.requests is not None:
        writes = [n for n in harness.requests.names if n not in ("GetItem", "Query", "BatchGetItem")]
        assert writes == [], f"a refused call made writes or retries: {writes}"


def test_numbers_dynamodb_cannot_store_are_refused(harness: Harness, session_id: str) -> None:
    s = harness.store
    [record] = s.append_messages(session_id, [{"role": "user", "content": "x"}])
    for usage in BAD_USAGE:
        message = [{"role": "user", "content": "y", "usage": usage}]
        refused(harness, s.update_usage, session_id, record.id, usage)
        refused(harness, s.append_messages, session_id, message)
        refused(harness, s.save_full, session_id, message, {})
    for big in (10**40, 2**53 + 1):
        refused(harness, s.append_messages, session_id, [{"role": "u", "content": "x"}], expected_seq=big)
        refused(harness, s.save_state, session_id, {}, expected_version=big)
        refused(harness, s.list_messages, session_id, after_seq=big)
        refused(harness, s.pop_message, session_id, expected_seq=big)
        refused(harness, s.get_artifact, session_id, "a", version=big)
    assert s.get_session(session_id).usage == TokenUsage()


def test_usage_at_the_bounds_is_kept_and_totals_add_exactly(harness: Harness, session_id: str) -> None:
    """The largest and smallest accepted values, stored and summed the same way on every backend; a cost
    is kept to 12 decimal places (so a session's totals never need more than DynamoDB's 38 digits)."""
    s = harness.store
    usages = [
        {"input_tokens": 10**15, "cost": 1e12},
        {"input_tokens": 1, "cost": 1e-12},
        {"output_tokens": 3, "cost": 0.1 + 0.2},  # 0.30000000000000004 -> 0.3
        {"cost": 1.2345678901234567e-5},  # -> 0.000012345679
        {"cost": -0.5},
    ]
    records = s.append_messages(session_id, [{"role": "user", "content": i, "usage": u} for i, u in enumerate(usages)])
    assert [r.usage.cost for r in records] == [1e12, 1e-12, 0.3, 0.000012345679, -0.5]
    total = s.get_session(session_id).usage
    assert total.input_tokens == 10**15 + 1 and total.output_tokens == 3
    assert total.cost == 1e12 + 0.3 + 0.000012345679 - 0.5 + 1e-12
    assert s.update_usage(session_id, records[0].id, {"cost": 2.5e-12}).usage.cost == 2e-12  # half to even


def test_json_that_cannot_be_encoded_is_refused_everywhere(harness: Harness, session_id: str) -> None:
    s = harness.store
    for bad in BAD_JSON:
        calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
            (s.append_messages, (session_id, [{"role": "user", "content": bad}])),
            (s.append_messages, (session_id, [{"role": "user", "content": "x", "extra": bad}])),
            (s.append_messages, (session_id, [{"role": "user", "content": "x", "metadata": {"m": bad}}])),
            (s.save_state, (session_id, bad)),
            (s.save_full, (session_id, [{"role": "user", "content": "x"}], bad)),
            (s.save_interrupt, (session_id, {"i": bad})),
            (s.save_records, (session_id, "runs", [bad])),
            (s.save_checkpoint, ("run", "r1", bad)),
            (s.save_checkpoint, ("session", session_id, bad)),
            (s.append_trace_events, (session_id, "run-1", [{"e": bad}])),
        ]
        for call, args in calls:
            refused(harness, call, *args)
        refused(harness, s.update_session, session_id, metadata={"m": bad})
        refused(harness, s.create_session, "alice", metadata={"m": bad})
        refused(harness, s.list_sessions, "alice", metadata={"m": bad})


def test_text_that_cannot_be_encoded_is_refused(harness: Harness, session_id: str) -> None:
    s = harness.store
    lone = "a\ud800b"
    refused(harness, s.create_session, "alice", title=lone)
    refused(harness, s.create_session, "alice", model=lone)
    refused(harness, s.update_session, session_id, title=lone)
    refused(harness, s.append_messages, session_id, [{"role": "user", "content": "x", "tool_call_id": lone}])
    refused(harness, s.append_messages, session_id, [{"role": "user", "content": "x", "name": lone}])
    refused(harness, s.append_messages, session_id, [{"role": lone, "content": "x"}])
    refused(harness, s.put_artifact, session_id, "a.txt", b"x", metadata={"k": lone})
    refused(harness, s.put_artifact, session_id, "a.txt", b"x", metadata={lone: "v"})
    refused(harness, s.put_artifact, session_id, f"a{lone}.txt", b"x")
    refused(harness, s.search, "alice", lone)
    refused(harness, s.create_session, lone)


def test_values_that_raised_raw_exceptions(harness: Harness, session_id: str) -> None:
    """Found by the probe: a ValueError from a malformed URL, an AttributeError from a malformed record."""
    s = harness.store
    for upload in ("http://[::1/x", "https://host/\udcff", "x" * 10_000, "", 7, None):
        refused(harness, s.confirm_artifact_upload, session_id, "n", upload)
    bad_records: list[Any] = [
        [{"eventName": "REMOVE", "dynamodb": "x"}],
        [{"eventName": "REMOVE", "dynamodb": {"OldImage": {"pk": "S#x"}}}],
        [{"eventName": "REMOVE", "dynamodb": {"OldImage": {"pk": {"S": 1}}}}],
        [{"eventName": "REMOVE", "dynamodb": {"OldImage": {"objects": {"L": [{"S": "k"}, "x"]}}}}],
        [{"eventName": 5}],
        ["record"],
        "records",
        {"Records": []},
        None,
    ]
    for records in bad_records:
        refused(harness, s.reclaim, records)


class Exploding:
    """A caller's stream that fails in a way no file does."""

    def read(self, n: int = -1) -> bytes:
        raise RuntimeError("the caller's own bug")


def test_a_failing_caller_stream_is_reported_as_bad_input(harness: Harness, session_id: str) -> None:
    s = harness.store
    with pytest.raises(InvalidInput, match="caller's stream"):
        s.put_artifact(session_id, "a.bin", Exploding())
    assert s.list_artifacts(session_id) == []


def test_refusals_are_the_same_on_every_backend(store: SessionStore, session_id: str) -> None:
    """The messages name the field and the rule, never echo the content."""
    secret = "SSN 078-05-1120 \ud800"
    with pytest.raises(InvalidInput) as raised:
        store.save_state(session_id, {"note": secret})
    assert "078-05-1120" not in str(raised.value)
    assert "lone surrogate" in str(raised.value)
