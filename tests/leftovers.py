"""What a store holds, backend by backend, named the same way: "<kind>:<where>" with kind one of session,
message, state, slot, claim, checkpoint, artifact, upload, trace, body (a spilled payload) or item (any
other table item). A test that deletes everything asserts `harness.leftovers() == []` on every backend."""

from __future__ import annotations

from typing import Any

from store.memory import MemoryBackend

OBJECT_KINDS = (("/artifacts/", "artifact"), ("/uploads/", "upload"), ("/traces/", "trace"), ("/payloads/", "body"))


def memory_leftovers(backend: MemoryBackend) -> list[str]:
    """Everything the memory backend holds, expired or not (what it has not let go of)."""
    return backend.inventory()


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
