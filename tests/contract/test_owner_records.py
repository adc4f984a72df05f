"""Owner records (`save_owner_records` / `load_owner_records`): what code above the store keeps for an owner,
by kind, on every backend; a forget leaves them; bad input writes nothing."""

from __future__ import annotations

import base64
import os

import pytest

from store import InvalidInput, PayloadTooLarge
from tests.conftest import Harness


def test_owner_records_round_trip_by_owner_and_kind_and_outlive_a_forget(harness: Harness) -> None:
    store = harness.store
    assert store.load_owner_records("alice", "settings") == []
    store.save_owner_records("alice", "settings", [{"tone": "brief"}, 2, "three"])
    store.save_owner_records("alice", "other", [{"x": 1}])
    store.save_owner_records("bob", "settings", [{"tone": "long"}])
    assert store.load_owner_records("alice", "settings") == [{"tone": "brief"}, 2, "three"]
    assert store.load_owner_records("bob", "settings") == [{"tone": "long"}]
    store.save_owner_records("alice", "settings", [])  # replaced
    assert store.load_owner_records("alice", "settings") == []
    store.put_memory("alice", ("n",), "k", {"text": "a memory"})
    assert store.forget_owner("alice") is True
    assert store.load_owner_records("alice", "other") == [{"x": 1}]
    assert store.search_memories("alice", ()).items == []


def test_owner_records_refuse_bad_input_and_write_nothing(harness: Harness) -> None:
    store = harness.store
    store.save_owner_records("alice", "settings", [{"kept": True}])
    for owner, kind, records in (("", "settings", []), ("alice", "", []), ("alice", "a/b\n", []), ("alice", "k", "x")):
        with pytest.raises(InvalidInput):
            store.save_owner_records(owner, kind, records)
    with pytest.raises(PayloadTooLarge):
        store.save_owner_records("alice", "settings", [base64.b64encode(os.urandom(80_000)).decode()])
    assert store.load_owner_records("alice", "settings") == [{"kept": True}]
