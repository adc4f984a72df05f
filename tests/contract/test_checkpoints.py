"""Contract: checkpoints with TTL, and the Checkpointer (run on every backend)."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from store import Checkpointer, SessionNotFound, SessionStore
from tests.conftest import Harness


@pytest.mark.parametrize("scope", ["run", "workflow"])
def test_run_and_workflow_checkpoints(store: SessionStore, scope: str) -> None:
    assert store.load_checkpoint(scope, "r1") is None
    cp = store.save_checkpoint(scope, "r1", {"step": 3}, ttl=timedelta(hours=1))
    assert cp.scope == scope and cp.key == "r1" and cp.data == {"step": 3}
    assert cp.expires_at > cp.saved_at
    assert store.load_checkpoint(scope, "r1") == cp
    store.save_checkpoint(scope, "r1", {"step": 4})
    assert store.load_checkpoint(scope, "r1").data == {"step": 4}
    store.delete_checkpoint(scope, "r1")
    store.delete_checkpoint(scope, "r1")
    assert store.load_checkpoint(scope, "r1") is None
    assert type(cp).model_validate_json(cp.model_dump_json()) == cp


def test_scopes_are_separate(store: SessionStore, session_id: str) -> None:
    store.save_checkpoint("run", session_id, {"s": "run"})
    store.save_checkpoint("workflow", session_id, {"s": "wf"})
    store.save_checkpoint("session", session_id, {"s": "session"})
    assert store.load_checkpoint("run", session_id).data == {"s": "run"}
    assert store.load_checkpoint("workflow", session_id).data == {"s": "wf"}
    assert store.load_checkpoint("session", session_id).data == {"s": "session"}


def test_session_checkpoint_records_position_and_needs_session(store: SessionStore, session_id: str) -> None:
    store.append_messages(session_id, [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    cp = store.save_checkpoint("session", session_id, {"tool": "pending"})
    assert cp.seq == 2
    assert store.load_checkpoint("session", session_id).seq == 2
    with pytest.raises(SessionNotFound):
        store.save_checkpoint("session", "ghost", {"a": 1})
    with pytest.raises(SessionNotFound):
        store.load_checkpoint("session", "ghost")
    with pytest.raises(SessionNotFound):
        store.save_checkpoint("session", session_id, {"a": 1}, owner="mallory")


def test_expired_checkpoint_is_absent_although_still_stored(harness: Harness, session_id: str) -> None:
    store, clock = harness.store, harness.clock
    store.save_checkpoint("run", "r", {"x": 1}, ttl=60)
    store.save_checkpoint("session", session_id, {"x": 1}, ttl=60)
    clock.advance(59)
    assert store.load_checkpoint("run", "r") is not None
    clock.advance(2)
    assert store.load_checkpoint("run", "r") is None
    assert store.load_checkpoint("session", session_id) is None
    # still held (DynamoDB's TTL deletes expired items late, moto never; nor does the memory backend), and
    # still filtered on read
    assert len(harness.leftovers("checkpoint")) == 2
    store.save_checkpoint("run", "r", {"x": 2}, ttl=60)  # saving renews it
    assert store.load_checkpoint("run", "r").data == {"x": 2}


def test_checkpoint_owner_isolation(store: SessionStore) -> None:
    """Run and workflow keys are per owner: the same key is two checkpoints, and neither owner learns of,
    blocks or touches the other's (nor the ownerless one)."""
    store.save_checkpoint("workflow", "wf", {"a": 1}, owner="alice")
    assert store.load_checkpoint("workflow", "wf", owner="bob") is None
    assert store.load_checkpoint("workflow", "wf") is None
    assert store.save_checkpoint("workflow", "wf", {"a": 2}, owner="bob").data == {"a": 2}
    store.save_checkpoint("workflow", "wf", {"a": 3})
    assert store.load_checkpoint("workflow", "wf", owner="bob").data == {"a": 2}
    store.delete_checkpoint("workflow", "wf", owner="bob")
    assert store.load_checkpoint("workflow", "wf", owner="bob") is None
    assert store.load_checkpoint("workflow", "wf", owner="alice").data == {"a": 1}
    assert store.load_checkpoint("workflow", "wf").data == {"a": 3}


def test_checkpointer_never_raises(store: SessionStore, session_id: str, caplog: pytest.LogCaptureFixture) -> None:
    cp = Checkpointer(store)
    assert cp.save("session", session_id, {"ok": 1}) is True
    assert cp.failures == 0
    with caplog.at_level(logging.WARNING, logger="store.checkpointer"):
        assert cp.save("session", "ghost", {"ok": 2}) is False
        assert cp.save("run", "bad/key", {"ok": 3}) is False
        assert cp.save("run", "r", {"not json": {1, 2}}) is False
    assert cp.failures == 3
    assert sum("checkpoint save failed" in r.message for r in caplog.records) == 3
    assert store.load_checkpoint("session", session_id).data == {"ok": 1}
