"""What each backend declares it carries out (`Backend.supports`), and that every gap is refused at once:
InvalidInput naming the operation, nothing sent and nothing written. docs/architecture.md lists the gaps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from store import InvalidInput, SessionStore
from store.backend import EVERY_OPERATION
from tests.conftest import Harness
from tests.contract.conftest import CONTRACT_BACKENDS, DECLARED

# a valid call of each operation some backend does not carry out
GAPS: dict[str, Callable[[SessionStore, str], Any]] = {
    "pop_message": lambda store, sid: store.pop_message(sid),
    "reclaim": lambda store, sid: store.reclaim([{"eventName": "REMOVE", "dynamodb": {}}]),
    "write_message_index": lambda store, sid: store.write_message_index(sid, [], restart=True),
    "drop_message_index": lambda store, sid: store.drop_message_index("alice", sid),
}
ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_every_declared_gap_has_a_call_here() -> None:
    gaps = {op for name in CONTRACT_BACKENDS for op in EVERY_OPERATION - DECLARED[name]}
    assert gaps == set(GAPS)  # an operation a backend newly lacks gets its refusal tested


def test_the_store_reports_what_its_backend_declares(harness: Harness) -> None:
    assert {op for op in EVERY_OPERATION if harness.supports(op)} == DECLARED[harness.kind]
    assert not harness.supports("no_such_operation") and not harness.supports(b"pop_message")  # type: ignore[arg-type]


def test_a_gap_is_refused_at_once_and_writes_nothing(harness: Harness, session_id: str) -> None:
    harness.store.append_messages(session_id, [{"role": "user", "content": "kept"}])
    for op in sorted(EVERY_OPERATION - DECLARED[harness.kind]):
        before = harness.leftovers()
        with pytest.raises(InvalidInput, match=f"{op} is not offered"):
            GAPS[op](harness.store, session_id)
        assert harness.leftovers() == before
    assert [m.content for m in harness.store.list_messages(session_id).items] == ["kept"]


@pytest.mark.parametrize("name", CONTRACT_BACKENDS)
def test_the_architecture_lists_each_backends_gaps(name: str) -> None:
    """docs/architecture.md's capability table: one row per backend, naming exactly what it lacks."""
    rows = [line for line in ARCHITECTURE.read_text().splitlines() if line.startswith(f"| `{name}` |")]
    assert len(rows) == 1, f"docs/architecture.md has no single capability row for {name}"
    listed = {cell.strip(" `") for cell in rows[0].split("|")[3].split(",") if cell.strip(" `-")}
    assert listed == EVERY_OPERATION - DECLARED[name]
