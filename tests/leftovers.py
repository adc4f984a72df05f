"""What a store holds, backend by backend, named the same way: "<kind>:<where>" with kind one of session,
message, state, slot, claim, checkpoint, artifact, upload, trace, body (a spilled payload) or item (any
other table item). A test that deletes everything asserts `harness.leftovers() == []` on every backend."""

from __future__ import annotations

from typing import Any

from store.memory import MemoryBackend

OBJECT_KINDS = (("/artifacts/", "artifact"), ("/uploads/", "upload"), ("/traces/", "trace"), ("/payloads/", "body"))


def memory_leftovers(backend: MemoryBackend) -> list[str]:
    """Everything the memory backend holds, expired or not (what it has not let go of)."""
    found: list[str] = []
    for sid, entry in backend._sessions.items():
        found.append(f"session:{sid}")
        found += [f"message:{sid}/{m.seq}" for m in entry.messages]
        found += [f"state:{sid}"] if entry.state is not None else []
        found += [f"slot:{sid}/{name}" for name in entry.slots]
        found += [f"checkpoint:session/{sid}"] if entry.checkpoint is not None else []
        found += [f"claim:{sid}/{key}" for key in entry.claims]
        for name, art in entry.artifacts.items():
            found += [f"artifact:{sid}/{name}/{v}" for v in art.versions]
        for run, batches in entry.runs.items():
            found += [f"trace:{sid}/{run}/{n}" for n in range(len(batches))]
        for name, branch in entry.branches.items():
            found += [f"message:{sid}/{name}/{m.seq}" for m in branch.messages]
        found += [f"state:{sid}/kept/{slot}" for slot in entry.states_kept]
    found += [f"checkpoint:{scope}/{key}" for scope, _, key in backend._checkpoints]
    found += [f"upload:{u}" for u in backend._uploads]
    return sorted(found)


ITEM_KINDS = {"CP": "checkpoint"}  # sort keys of the items a kind is asked of (the rest are "item")


def _item_kind(table: str, item: dict[str, Any]) -> str:
    sk = next((v.get("S", "") for k, v in item.items() if k.lower() == "sk"), "")
    pk = next((v.get("S", "") for k, v in item.items() if k.lower() == "pk"), "")
    return f"{ITEM_KINDS.get(sk, 'item')}:{table}/{pk}|{sk}"


def table_leftovers(items: dict[str, list[dict[str, Any]]], objects: list[str]) -> list[str]:
    """Every item of the tables and every object of the bucket."""
    found = [_item_kind(table, item) for table, rows in items.items() for item in rows]
    for key in objects:
        kind = next((k for marker, k in OBJECT_KINDS if marker in key), "object")
        found.append(f"{kind}:{key}")
    return sorted(found)


def of_kind(found: list[str], kind: str) -> list[str]:
    return [f for f in found if f.startswith(kind + ":")]
