"""SnapStart, an option of the template: the API function publishes versions behind an alias, and after
a restore the handler remakes what the environments restored from one snapshot would otherwise share."""

from __future__ import annotations

import random
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from functions import runtime
from infra.deploy.validate import transformed
from store import SessionStore, session_store


def test_the_template_offers_snapstart_on_published_versions() -> None:
    resources = transformed()["Resources"]
    api = resources["ApiFunction"]["Properties"]
    assert api["SnapStart"] == {"ApplyOn": {"Fn::If": ["UseSnapStart", "PublishedVersions", "None"]}}
    kinds = {r["Type"] for name, r in resources.items() if name.startswith("ApiFunction")}
    assert {"AWS::Lambda::Version", "AWS::Lambda::Alias"} <= kinds  # the HTTP API invokes the alias `live`
    alias = next(r for name, r in resources.items() if r["Type"] == "AWS::Lambda::Alias" and "Api" in name)
    assert alias["Properties"]["Name"] == "live"


def test_the_restore_hook_is_registered_where_the_runtime_has_snapstart(monkeypatch: pytest.MonkeyPatch) -> None:
    registered: list[Callable[[], None]] = []
    fake = types.ModuleType("snapshot_restore_py")
    fake.__dict__["register_after_restore"] = registered.append
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", fake)
    assert runtime.register_snapstart_hooks() is True and registered == [runtime.after_restore]
    monkeypatch.delitem(sys.modules, "snapshot_restore_py")
    monkeypatch.setattr(sys, "path", [])  # no such module anywhere: a runtime without SnapStart
    assert runtime.register_snapstart_hooks() is False


def test_after_a_restore_nothing_made_before_the_snapshot_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    made: Any = SessionStore.memory()
    monkeypatch.setattr(runtime, "_store", made)
    monkeypatch.setitem(session_store._sdk_sessions, "boto3", object())
    random.seed(42)
    snapshot_sequence = [random.random() for _ in range(3)]
    random.seed(42)  # as every environment restored from one snapshot would start
    runtime.after_restore()
    assert runtime._store is None  # the next request builds a store: new clients, credentials, cache
    assert "boto3" not in session_store._sdk_sessions
    assert [random.random() for _ in range(3)] != snapshot_sequence  # reseeded: jitter differs per environment
