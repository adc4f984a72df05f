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


def imports(path: Path, *, names: bool = False) -> set[str]:
    """The modules `path` imports; with `names`, each name a `from` import takes from one too (it may be a
    module: `from store.recall import rendering`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names if names)
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


LAYER_ROW = re.compile(r"^\| ([a-zA-Z ]+) \| (.+?) \| .+ \|$")


def layer_places() -> dict[str, list[str]]:
    """Each layer of docs/architecture.md's layer table: the store/ paths its `where` cell names."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text[text.index("| layer | where | may import |") : text.index("## Backends, and what each")]
    places: dict[str, list[str]] = {}
    for line in table.splitlines()[2:]:
        if m := LAYER_ROW.match(line):
            places[m[1]] = re.findall(r"`(store/[\w/]+(?:\.py|/))`", m[2])
    return places


def test_the_layer_table_matches_the_folders() -> None:
    """Every module under store/ is in exactly one layer's `where`, and every path named there exists."""
    places = layer_places()
    named = [p for paths in places.values() for p in paths]
    assert len(named) == len(set(named)) and named, "a path is named in one layer only"
    for path in named:
        assert (ROOT / path).exists(), f"docs/architecture.md names {path}, which does not exist"
    for module in (ROOT / "store").rglob("*.py"):
        rel = module.relative_to(ROOT).as_posix()
        matching = [p for p in named if rel == p or (p.endswith("/") and rel.startswith(p))]
        assert matching, f"{rel} is in no layer of docs/architecture.md"  # the most specific path places it
    top = {p.name for p in (ROOT / "store").iterdir() if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__")}
    assert top <= {Path(p).parts[1] for p in named}, "every top-level module and folder of store/ has a layer"


def test_shared_pure_code_and_tools_stay_in_their_layer() -> None:
    """store/core imports only itself, the conversation model and the interface's models, errors and
    settings (no I/O, no backend); the tools reach a backend only through the public store."""
    allowed_core = ("store.core", "store.errors", "store.models", "store.settings", "store.conversation")
    for path in (ROOT / "store" / "core").rglob("*.py"):
        stored = [m for m in imports(path) if m == "store" or m.startswith("store.")]
        assert all(within(m, allowed_core) for m in stored), f"{path}: {stored}"
        assert not [m for m in imports(path) if within(m, SDKS)], f"{path}: shared pure code does no I/O"
    for path in (ROOT / "store" / "tools").rglob("*.py"):
        assert not [m for m in imports(path) if within(m, INTERNALS)], f"{path}: a backend's internals"


def test_request_records_hold_no_rules() -> None:
    """A request is a record of its arguments: the rules that make something of one (a fork's session, say)
    are store/core's, where every backend finds them without importing the interface's records."""
    tree = ast.parse((ROOT / "store" / "requests.py").read_text())
    methods = [
        f"{cls.name}.{fn.name}"
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for fn in cls.body
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and not fn.name.startswith("__")
    ]
    assert methods == []


def test_the_async_front_and_the_http_backend_follow_the_operations() -> None:
    """An operation is declared once, by its request record: the async store has an awaitable method for
    each at run time (derived), and the declarations type checkers see name exactly the operations; the
    HTTP backend supports exactly the operations that have a route function of their name (what it lacks
    is refused at once, as test_capabilities checks)."""
    from store import AsyncSessionStore
    from store.backends import http_routes
    from store.backends.http import ROUTES, HttpBackend

    names = set(operations())
    assert all(inspect.iscoroutinefunction(getattr(AsyncSessionStore, op)) for op in names)
    tree = ast.parse((ROOT / "store" / "async_session_store.py").read_text())
    store_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AsyncSessionStore")
    typed = {
        t.id
        for node in ast.walk(store_class)
        if isinstance(node, ast.If)
        for stmt in node.body
        if isinstance(stmt, ast.Assign)
        for t in stmt.targets
        if isinstance(t, ast.Name)
    }
    written = {n.name for n in store_class.body if isinstance(n, ast.AsyncFunctionDef)}
    assert typed | (written & names) == names and not typed & written, "the typed view names every operation once"
    routed = {name for name in names if inspect.isfunction(getattr(http_routes, name, None))}
    assert set(HttpBackend.supports) == routed == {r.operation for r in ROUTES}
    assert names - routed == {"pop_message", "reclaim", "write_message_index", "drop_message_index"}, (
        "the API offers every other operation (the stack writes the message index itself, from its cascade)"
    )


def test_plans_are_found_by_their_operation_name_and_a_missing_one_is_refused() -> None:
    """PLANS is derived from the operations' names: a plan module that lacks an operation's function (or two
    that both define one) fails at import, not at the first call."""
    import types

    import pytest

    from store.aws.backend import plan_modules, plans_by_name

    modules = plan_modules()
    assert plans_by_name(modules) == dict(PLANS)
    without = tuple(m for m in modules if not m.__name__.endswith(".forks"))
    with pytest.raises(RuntimeError, match="fork_session"):
        plans_by_name(without)
    twin = types.ModuleType("store.aws.plans.twin")
    twin.fork_session = lambda ctx, request: iter(())  # type: ignore[attr-defined]
    twin.fork_session.__module__ = twin.__name__
    with pytest.raises(RuntimeError, match="fork_session"):
        plans_by_name((*modules, twin))


def test_contract_tests_assert_what_every_backend_does() -> None:
    """A contract test states what every backend does: it never checks something only where the harness has
    tables or a bucket (such an observation belongs in tests/aws, or in a harness view every backend answers)."""
    guarded = re.compile(r"^\s*(?:if|elif)\s+harness\.(?:tables|s3|stream_clients)\b", re.M)
    found = []
    for path in sorted((ROOT / "tests" / "contract").glob("test_*.py")):
        text = path.read_text()
        found += [f"{path.name}:{text[: m.start()].count(chr(10)) + 1}" for m in guarded.finditer(text)]
    assert found == []


def module_graph() -> dict[str, set[str]]:
    """Each module of store/, functions/, infra/ and bench/ and the modules of the tree it imports, at its top or
    inside a function (a package stands for its __init__)."""
    paths = {}
    for folder in ("store", "functions", "infra", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            name = path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
            paths[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        graph[name] = set()
        for target in imports(path, names=True):
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def test_no_module_imports_one_that_imports_it() -> None:
    """No import circle in the tree, directly or through others, an import inside a function included."""
    graph = module_graph()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("an import circle: " + " -> ".join([*path[path.index(name) :], name]))
        if name not in done:
            for target in sorted(graph[name]):
                visit(target, [*path, name])
            done.add(name)

    for name in sorted(graph):
        visit(name, [])
