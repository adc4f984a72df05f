"""docs/architecture.md is true: its table lists every public operation with the front module and the
plan that implement it (one name at every layer), and the layers import only what the document allows."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

from store.aws.backend import PLANS
from store.memory import MemoryBackend
from store.requests import operations
from store.session_store import SessionStore

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(\w+)` \| `(\w+)\.py` \| `(\w+)\.py: (\w+)` \| .+ \|$")
SDKS = ("boto3", "botocore", "aiobotocore", "aioboto3")
INTERNALS = ("store.aws", "store.memory", "store.front")
TOOLING = ("infra", "functions", "bench", "tests")


def documented() -> dict[str, tuple[str, str, str]]:
    rows = [ROW.match(line) for line in (ROOT / "docs" / "architecture.md").read_text().splitlines()]
    return {m[1]: (m[2], m[3], m[4]) for m in rows if m}


def public_operations() -> set[str]:
    return {
        name
        for name, fn in inspect.getmembers(SessionStore, inspect.isfunction)
        if not name.startswith("_") and fn.__module__.startswith("store.front.")
    }


def test_every_public_operation_is_in_the_table_with_one_name_at_every_layer() -> None:
    table = documented()
    requests = operations()
    assert set(table) == public_operations() == set(requests)
    assert set(PLANS) == set(requests.values()), "every request has exactly one plan"
    for op, (front, plan_module, plan) in table.items():
        assert plan == op, f"{op}: its plan is named {plan}"
        assert getattr(SessionStore, op).__module__ == f"store.front.{front}", op
        assert requests[op].__name__ in inspect.getsource(getattr(SessionStore, op)), f"{op}: builds its request"
        assert getattr(MemoryBackend, op).__module__.startswith("store.memory."), op
        assert PLANS[requests[op]] is getattr(importlib.import_module(f"store.aws.plans.{plan_module}"), plan), op


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_layers_import_only_what_they_may() -> None:
    for path in (ROOT / "store" / "aws" / "plans").glob("*.py"):
        assert not [m for m in imports(path) if within(m, SDKS)], f"{path}: a plan performs no I/O"
    for folder in ("functions", "store/integrations"):
        for path in (ROOT / folder).rglob("*.py"):
            assert not [m for m in imports(path) if within(m, INTERNALS)], f"{path}: a backend's internals"
    for path in (ROOT / "store").rglob("*.py"):
        assert not [m for m in imports(path) if within(m, TOOLING)], f"{path}: repository tooling"
