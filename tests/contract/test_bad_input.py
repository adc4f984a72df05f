"""Contract: bad input raises the documented error and writes nothing (run on every backend)."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Any

import pytest

from store import InvalidInput, PayloadTooLarge, SessionStore
from tests.conftest import Harness

BAD_IDS: list[Any] = ["", "a" * 129, "a/b", "..", "../x", "a\x00b", "a\nb", "ümlaut", " lead", "-lead", None, 7, b"x"]


def incompressible(n: int) -> str:
    """A string of n characters that zlib cannot shrink much."""
    return base64.b64encode(os.urandom(n))[:n].decode()


def unchanged(harness: Harness, call: Callable[[], Any], error: type[Exception]) -> None:
    before = harness.snapshot()
    with pytest.raises(error):
        call()
    assert harness.snapshot() == before, "a rejected call must write nothing"


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_bad_ids_are_rejected_everywhere(harness: Harness, session_id: str, bad: Any) -> None:
    s = harness.store
    msg = [{"role": "user", "content": "x"}]
    required: list[Callable[[], Any]] = [
        lambda: s.get_session(bad),
        lambda: s.append_messages(bad, msg),
        lambda: s.list_messages(bad),
        lambda: s.save_state(bad, {}),
        lambda: s.save_checkpoint("run", bad, {}),
        lambda: s.save_records(session_id, bad, []),
        lambda: s.delete_session(bad),
        lambda: s.get_message(session_id, bad),
    ]
    optional: list[Callable[[], Any]] = [  # None is valid here (a fresh id, no key, no owner scoping)
        lambda: s.create_session("alice", session_id=bad),
        lambda: s.append_messages(session_id, msg, idempotency_key=bad),
        lambda: s.append_messages(session_id, [{"role": "user", "content": "x", "id": bad}]),
    ]
    calls = required + (optional if bad is not None else [])
    for call in calls:
        unchanged(harness, call, InvalidInput)


BAD_OWNERS: list[Any] = ["", "a" * 257, "a\x00b", "a\nb", " lead", "trail ", "zero\u200bwidth", 7, b"x"]


@pytest.mark.parametrize("bad", BAD_OWNERS, ids=repr)
def test_bad_owners_are_rejected(harness: Harness, session_id: str, bad: Any) -> None:
    s = harness.store
    for call in (
        lambda: s.create_session(bad),
        lambda: s.list_sessions(bad),
        lambda: s.search(bad, "x"),
        lambda: s.append_messages(session_id, [{"role": "user", "content": "x"}], owner=bad),
        lambda: s.get_session(session_id, owner=bad),
        lambda: s.save_checkpoint("run", "r", {}, owner=bad),
    ):
        unchanged(harness, call, InvalidInput)


@pytest.mark.parametrize(
    "call",
    [
        lambda s, sid: s.append_messages(sid, []),
        lambda s, sid: s.append_messages(sid, "not a list"),
        lambda s, sid: s.append_messages(sid, {"role": "user", "content": "x"}),
        lambda s, sid: s.append_messages(sid, [{"content": "no role"}]),
        lambda s, sid: s.append_messages(sid, [{"role": "", "content": "x"}]),
        lambda s, sid: s.append_messages(sid, [{"role": "user", "content": {1, 2}}]),
        lambda s, sid: s.append_messages(sid, [{"role": "user", "content": float("nan")}]),
        lambda s, sid: s.append_messages(sid, [{"role": "user", "content": "x", "id": "dup"}] * 2),
        lambda s, sid: s.append_messages(sid, [{"role": "user", "content": "x"}] * 99),
        lambda s, sid: s.append_messages(sid, [{"role": "user", "content": "x"}], expected_seq=-1),
        lambda s, sid: s.append_messages(sid, [{"role": "user", "content": "x", "usage": {"input_tokens": "many"}}]),
        lambda s, sid: s.list_messages(sid, limit=0),
        lambda s, sid: s.list_messages(sid, limit=10_000),
        lambda s, sid: s.list_messages(sid, roles=[""]),
        lambda s, sid: s.last_messages(sid, 0),
        lambda s, sid: s.save_state(sid, object()),
        lambda s, sid: s.save_state(sid, {"k": 1}, expected_version="1"),
        lambda s, sid: s.save_interrupt(sid, ["not", "an", "object"]),
        lambda s, sid: s.save_records(sid, "runs", "not a list"),
        lambda s, sid: s.save_checkpoint("galaxy", sid, {}),
        lambda s, sid: s.save_checkpoint("run", "r", {}, ttl=0),
        lambda s, sid: s.save_checkpoint("run", "r", {}, ttl=-5),
        lambda s, sid: s.save_checkpoint("run", "r", {}, ttl="1h"),
        lambda s, sid: s.create_session("alice", retention=0),
        lambda s, sid: s.create_session("alice", title=123),
        lambda s, sid: s.create_session("alice", title="t" * 2000),
        lambda s, sid: s.create_session("alice", metadata=["x"]),
        lambda s, sid: s.create_session("alice", metadata={1: "x"}),
        lambda s, sid: s.update_session(sid, metadata="x"),
        lambda s, sid: s.update_usage(sid, "m", {"tokens": 5}),
        lambda s, sid: s.list_sessions("alice", created_after="yesterday"),
        lambda s, sid: s.list_sessions("alice", limit=True),
        lambda s, sid: s.save_state(sid, _deep(100)),
    ],
)
def test_wrong_types_and_ranges(harness: Harness, session_id: str, call: Callable[[SessionStore, str], Any]) -> None:
    unchanged(harness, lambda: call(harness.store, session_id), InvalidInput)


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_naive_datetimes_rejected(store: SessionStore) -> None:
    from datetime import datetime

    with pytest.raises(InvalidInput):
        store.list_sessions("alice", created_after=datetime(2024, 1, 1))


@pytest.mark.settings(max_payload_bytes=1_000_000)
def test_oversize_payloads(harness: Harness, session_id: str) -> None:
    """Over the hard cap (here 1 MB stored) nothing is written; below it, large bodies spill to S3."""
    s = harness.store
    big = incompressible(1_400_000)  # ~1.05 MB even after compression
    unchanged(harness, lambda: s.append_messages(session_id, [{"role": "user", "content": big}]), PayloadTooLarge)
    unchanged(harness, lambda: s.save_state(session_id, {"blob": big}), PayloadTooLarge)
    unchanged(harness, lambda: s.save_full(session_id, [{"role": "user", "content": "ok"}], big), PayloadTooLarge)
    unchanged(harness, lambda: s.save_checkpoint("run", "r", big), PayloadTooLarge)
    unchanged(harness, lambda: s.save_checkpoint("session", session_id, big), PayloadTooLarge)
    unchanged(harness, lambda: s.save_records(session_id, "runs", [big]), PayloadTooLarge)
    unchanged(harness, lambda: s.save_interrupt(session_id, {"b": big}), PayloadTooLarge)
    # each message is under the cap, but together they exceed it
    many = [{"role": "tool", "content": incompressible(350_000)} for _ in range(4)]  # ~265 KB each stored
    unchanged(harness, lambda: s.append_messages(session_id, many), PayloadTooLarge)
    unchanged(harness, lambda: s.append_trace_events(session_id, "run-1", [{"b": big}]), PayloadTooLarge)
    assert s.get_session(session_id).last_seq == 0


def test_compressible_large_message_fits(store: SessionStore, session_id: str) -> None:
    text = "all work and no play " * 40_000  # 840 KB of JSON, a few KB compressed
    rec = store.append_messages(session_id, [{"role": "tool", "content": text}])[0]
    assert store.get_message(session_id, rec.id).content == text


@pytest.mark.parametrize("value", [10**22, float("nan"), float("inf"), -(10**22)])
def test_absurd_durations_are_refused(store: SessionStore, value: float) -> None:
    """Found by schemathesis: a huge retention overflowed timedelta (a 500 through the API)."""
    with pytest.raises(InvalidInput):
        store.create_session("alice", retention=value)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.save_checkpoint("run", "r", {}, ttl=value)  # type: ignore[arg-type]
