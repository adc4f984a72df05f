"""The docs stay true: every code name they quote exists (paths, modules and their attributes, methods and
fields), the request counts of docs/data-model.md are what the operations make (measured on moto), the
architecture's table repeats them word for word, and no doc states a count the code does not give (the
number of tests)."""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from store import SessionStore, Settings
from tests.conftest import Harness

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PACKAGES = ("store", "functions", "infra", "bench", "tests")
SOURCES = [p for d in PACKAGES for p in (ROOT / d).rglob("*.py") if p.name != "test_docs.py"]
# names of other projects the docs quote, and where they live
EXTERNAL = {"Runner": "google.adk.runners"}
CODE_PATH = re.compile(r"(store|functions|infra|tests|bench|docs|requirements)/[\w/.\-]*")
DOTTED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(\(.*\))?")
FILE_SUFFIXES = (".py", ".md", ".yaml", ".json", ".txt", ".csv", ".toml", ".jsonl", ".png", ".html", ".js", ".css")


def quoted(doc: Path) -> list[str]:
    return [t.strip() for t in re.findall(r"`([^`\n]+)`", doc.read_text())]


def _code() -> str:
    return "\n".join(p.read_text() for p in SOURCES) + (ROOT / "functions/api/console/console.js").read_text()


def _attribute(obj: Any, names: list[str]) -> bool:
    for name in names:
        fields = getattr(obj, "model_fields", None) or getattr(obj, "__dataclass_fields__", None) or {}
        if name in fields:
            return True  # a field: what it holds is not an attribute of the class
        if not hasattr(obj, name):
            return False
        obj = getattr(obj, name)
    return True


def _resolves(dotted: str) -> bool:
    """Whether `package.module.attr...` names something of ours."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        return _attribute(module, parts[i:])
    return False


def _in_module_named(parts: list[str]) -> bool | None:
    """For `module.attr` or `plans.base.attr`: whether the module of ours whose path ends so has the attribute
    (None when no module has that name)."""
    for path in SOURCES:
        where = path.relative_to(ROOT).with_suffix("").parts
        for k in range(len(parts) - 1, 0, -1):
            if where[-k:] == tuple(parts[:k]):
                return _attribute(importlib.import_module(".".join(where)), parts[k:])
    return None


def exists(token: str, code: str) -> bool:
    """Whether a quoted code name names something real (see the module docstring)."""
    if CODE_PATH.fullmatch(token):
        return (ROOT / token).exists()
    match = DOTTED.fullmatch(token)
    if match is None or match[1].endswith(FILE_SUFFIXES):
        return True  # not a dotted name: prose, JSON, a command
    parts = match[1].split(".")
    head = parts[0]
    if head.isupper():
        return True  # a placeholder (DIR.saving)
    if head == "store" and len(parts) == 2 and hasattr(SessionStore, parts[1]):
        return True  # `store.method(...)`: a store's method
    if head in PACKAGES:
        return _resolves(match[1])
    if head in ("settings", "Settings"):
        return _attribute(Settings, parts[1:])
    if head in EXTERNAL:
        return _attribute(getattr(importlib.import_module(EXTERNAL[head]), head), parts[1:])
    found = _in_module_named(parts)
    if found is not None:
        return found
    if head[0].isupper():  # Class.attribute: the attribute is defined somewhere in our code
        return all(re.search(rf"(def|class) {a}\b|^\s+{a}\s*[:=]|\bself\.{a}\s*=", code, re.M) for a in parts[1:])
    if match[1] in code:
        return True
    # a path into an event's JSON (requestContext.authorizer.jwt.claims): every step a key the code reads
    camel = any(c.isupper() for c in match[1])
    return camel and all(re.search(rf"[\"']{re.escape(p)}[\"']", code) for p in parts)


def test_every_code_name_the_docs_quote_exists() -> None:
    code = _code()
    missing = [(doc.name, token) for doc in DOCS for token in quoted(doc) if not exists(token, code)]
    assert missing == []


def test_the_checker_catches_a_stale_name() -> None:
    code = _code()
    for stale in ("me.sid", "infra.local.aws.skip_transaction_backups", "store/aws/plans/gone.py", "plans.base.nope"):
        assert not exists(stale, code), stale
    for real in (
        "store.scoped_id",
        "plans.writes.write_session",
        "Settings.retry_budget",
        "store.append_messages(sid)",
    ):
        assert exists(real, code), real


def test_no_doc_states_how_many_tests_there_are() -> None:
    """A count of tests is stale by the next commit; the docs name what is tested instead."""
    stated = [
        (doc.name, m[0]) for doc in DOCS for m in re.finditer(r"\b\d[\d,]* (?:tests|test cases)\b", doc.read_text())
    ]
    assert stated == []


def test_no_doc_says_a_message_is_an_item_of_its_own() -> None:
    """The small messages of one write share an item (a pack: docs/decisions.md): no doc, the template or a
    docstring of the library says a transcript is an item per message."""
    claim = re.compile(
        r"(?:one|an|a single) (?:DynamoDB )?item (?:per|for each|a) message|messages?, one item each", re.I
    )
    places = [*DOCS, ROOT / "template.yaml", *(ROOT / "store").rglob("*.py")]
    stated = [(p.name, m[0]) for p in places for m in claim.finditer(p.read_text())]
    assert stated == []


# ---------------------------------------------------------------- request counts


def access_patterns() -> dict[str, str]:
    """docs/data-model.md's access-patterns table: each method it names -> its requests cell."""
    out: dict[str, str] = {}
    for line in (ROOT / "docs" / "data-model.md").read_text().splitlines():
        row = re.match(r"^\| (`[^|]+) \| (.+?) \| (.+?) \|$", line)
        if row is None or "branch=" in row[1]:
            continue
        for name in re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", row[1])):
            out.setdefault(name, row[2])
    return out


def test_the_architectures_table_repeats_the_data_models_request_counts() -> None:
    patterns = access_patterns()
    row = re.compile(r"^\| `(\w+)` \| `\w+\.py` \| `\w+\.py: \w+` \| (.+) \|$")
    rows = [m for line in (ROOT / "docs" / "architecture.md").read_text().splitlines() if (m := row.match(line))]
    assert len(rows) > 40
    for m in rows:
        assert m[2] == patterns[m[1]], f"{m[1]}: docs/architecture.md and docs/data-model.md differ"


def documented_counts(cell: str) -> Counter[str]:
    """The requests of a cell's first case (before `;`: the warm path), e.g. "1 GetItem + 1 Query"."""
    first = re.sub(r"\([^)]*\)", "", cell.split(";")[0]).replace("*", "")
    counted: Counter[str] = Counter()
    for n, op in re.findall(r"(\d+) ([A-Z][a-z]+(?:[A-Z][A-Za-z0-9]*)?)\b", first):  # AWS operations: Query, GetItem
        counted[op] += int(n)
    return counted


def _setup(store: SessionStore) -> dict[str, Any]:
    sid = store.create_session("alice").id
    records = store.append_messages(sid, [{"role": "user", "content": f"m{i}"} for i in range(3)])
    store.append_messages(sid, [{"role": "user", "content": "kept"}], idempotency_key="k1")
    store.save_state(sid, {"s": 1})
    store.save_interrupt(sid, {"i": 1})
    store.save_checkpoint("run", "r1", {"c": 1})
    store.save_checkpoint("session", sid, {"c": 1})
    store.put_memory("alice", ("notes",), "n1", {"text": "x"})
    store.put_artifact(sid, "a.txt", b"x")
    store.append_trace_events(sid, "run-1", [{"e": 1}])
    store.mark_compaction(sid, records[0].id)
    return {"sid": sid, "mid": records[1].id}


# each documented method, called warm on a session that has what it reads
CALLS: dict[str, Callable[[SessionStore, dict[str, Any]], Any]] = {
    "create_session": lambda s, c: s.create_session("alice"),
    "get_session": lambda s, c: s.get_session(c["sid"]),
    "update_session": lambda s, c: s.update_session(c["sid"], title="t"),
    "append_messages": lambda s, c: s.append_messages(c["sid"], [{"role": "user", "content": "x"}]),
    "list_messages": lambda s, c: s.list_messages(c["sid"], limit=2),
    "last_messages": lambda s, c: s.last_messages(c["sid"], 2),
    "get_message": lambda s, c: s.get_message(c["sid"], c["mid"]),
    "update_usage": lambda s, c: s.update_usage(c["sid"], c["mid"], {"input_tokens": 1}),
    "mark_compaction": lambda s, c: s.mark_compaction(c["sid"], c["mid"]),
    "get_latest_compaction": lambda s, c: s.get_latest_compaction(c["sid"]),
    "save_state": lambda s, c: s.save_state(c["sid"], {"s": 2}),
    "save_full": lambda s, c: s.save_full(c["sid"], [{"role": "user", "content": "x"}], {"s": 3}),
    "load_state": lambda s, c: s.load_state(c["sid"]),
    "load_interrupt": lambda s, c: s.load_interrupt(c["sid"]),
    "load_records": lambda s, c: s.load_records(c["sid"], "runs"),
    "load_full": lambda s, c: s.load_full(c["sid"]),
    "save_interrupt": lambda s, c: s.save_interrupt(c["sid"], {"i": 2}),
    "clear_interrupt": lambda s, c: s.clear_interrupt(c["sid"]),
    "save_records": lambda s, c: s.save_records(c["sid"], "runs", [1]),
    "save_checkpoint": lambda s, c: s.save_checkpoint("session", c["sid"], {"c": 2}),
    "delete_checkpoint": lambda s, c: s.delete_checkpoint("session", c["sid"]),
    "health_check": lambda s, c: s.health_check(),
    "list_branches": lambda s, c: s.list_branches(c["sid"]),
    "get_artifact": lambda s, c: s.get_artifact(c["sid"], "a.txt"),
    "list_artifacts": lambda s, c: s.list_artifacts(c["sid"]),
    "list_artifact_versions": lambda s, c: s.list_artifact_versions(c["sid"], "a.txt"),
    "presign_artifact": lambda s, c: s.presign_artifact(c["sid"], "a.txt"),
    "presign_artifact_upload": lambda s, c: s.presign_artifact_upload(c["sid"], "b.txt"),
    "list_trace_runs": lambda s, c: s.list_trace_runs(c["sid"]),
    "put_memory": lambda s, c: s.put_memory("alice", ("notes",), "n2", {"text": "y"}),
    "get_memory": lambda s, c: s.get_memory("alice", ("notes",), "n1"),
    "delete_memory": lambda s, c: s.delete_memory("alice", ("notes",), "n1"),
    "search_memories": lambda s, c: s.search_memories("alice", ("notes",), query="note"),
    "list_namespaces": lambda s, c: s.list_namespaces("alice", limit=1),
    "forget_owner": lambda s, c: s.forget_owner("alice"),
}


@pytest.mark.parametrize("method", list(CALLS))
def test_the_documented_request_counts_are_what_the_operations_make(dyn: Harness, method: str) -> None:
    cell = access_patterns()[method]
    context = _setup(dyn.store)
    assert dyn.requests is not None
    dyn.requests.clear()
    CALLS[method](dyn.store, context)
    made = Counter(dyn.requests.names)
    assert made == documented_counts(cell), f"{method}: docs/data-model.md says {cell!r}"


def test_a_retried_append_makes_what_the_docs_say(dyn: Harness) -> None:
    cell = access_patterns()["append_messages"]
    retry = re.search(r"a retry with a known idempotency key: ([^|;]+)", cell)
    assert retry is not None
    context = _setup(dyn.store)
    assert dyn.requests is not None
    dyn.requests.clear()
    dyn.store.append_messages(context["sid"], [{"role": "user", "content": "kept"}], idempotency_key="k1")
    assert Counter(dyn.requests.names) == documented_counts(retry[1])
