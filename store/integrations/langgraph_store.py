"""LangGraph's long-term memory (`BaseStore`) on the store's memories: what a graph gets with
`builder.compile(store=MemoryStore(store, owner="user-42"))` and reads as `runtime.store` in its nodes.

    from store import SessionStore
    from store.integrations.langgraph_store import MemoryStore

    memories = MemoryStore(SessionStore.from_env(), owner="user-42")   # search by the store's embedder
    memories.put(("preferences",), "seat", {"text": "window seat on long flights"})
    memories.search(("preferences",), query="where do I sit?")

One `MemoryStore` is one owner's memories (LangGraph's store has no owner: the owner is the first boundary of
ours). `index=` takes LangGraph's `IndexConfig` (`dims`, `embed`, `fields`): its embedder replaces the store's
for this view; without one, the store's (`Settings.embedder`) is used, and with neither, `search` with a query
matches words. `ttl=` takes LangGraph's `TTLConfig` (`default_ttl` in minutes, `refresh_on_read`).
LangGraph's semantics are kept where ours differ: a search with a query ranks every item under the prefix,
those that were not embedded last with score None; filters take LangGraph's operators (`$eq`, `$ne`, `$gt`,
`$gte`, `$lt`, `$lte`, nested objects); `offset` pages; `list_namespaces` takes match conditions with `*`
wildcards. Each call stays bounded as the store's are (a search reads at most 100 ranked and 1,000 listed)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import ensure_embeddings

from store import SessionStore
from store.embeddings import FunctionEmbedder
from store.models import MemoryHit, MemoryItem

RANKED = 100  # the most a search ranks (the store's bound), offset included
LISTED = 1000


class MemoryStore(BaseStore):
    """One owner's memories as LangGraph's `BaseStore` (sync and async), over a `SessionStore`."""

    supports_ttl = True

    def __init__(
        self,
        store: SessionStore,
        *,
        owner: str,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        self.owner = owner
        self.index_config = index
        self.ttl_config = ttl
        if index is not None and index.get("embed") is not None:
            embeddings = ensure_embeddings(index["embed"])
            name = str(index["embed"]) if isinstance(index["embed"], str) else type(embeddings).__name__
            embedder = FunctionEmbedder(lambda texts: embeddings.embed_documents(texts), int(index["dims"]), name)
            store = SessionStore(backend=store.backend, settings=replace(store.settings, embedder=embedder))
        self.store = store
        fields = (index or {}).get("fields")
        self._fields: list[str] | None = None if not fields or fields == ["$"] else list(fields)
        self._semantic = store.settings.embedder is not None

    # ------------------------------------------------------------------ the batch interface

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return _item(
                self.store.get_memory(self.owner, op.namespace, op.key, refresh_ttl=self._refresh(op.refresh_ttl))
            )
        if isinstance(op, PutOp):
            if op.value is None:
                self.store.delete_memory(self.owner, op.namespace, op.key)
                return None
            self.store.put_memory(
                self.owner, op.namespace, op.key, dict(op.value), index=self._index(op.index), ttl=self._ttl(op.ttl)
            )
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise ValueError(f"unknown operation: {type(op).__name__}")

    # ------------------------------------------------------------------ pieces

    def _refresh(self, asked: bool | None) -> bool:
        default = bool((self.ttl_config or {}).get("refresh_on_read", True))
        return default if asked is None else asked

    def _ttl(self, minutes: Any) -> float | None:
        if minutes is None or type(minutes).__name__ == "NotProvided":
            minutes = (self.ttl_config or {}).get("default_ttl")
        return None if minutes is None else float(minutes) * 60

    def _index(self, index: Any) -> Any:
        if index is False:
            return False
        if index is None:
            return self._fields
        return None if list(index) == ["$"] else list(index)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        """The ranked hits, then (when they are fewer than asked) the other items under the prefix in key order,
        each read asking the store for no more than the page needs (all it may rank when a filter the store
        cannot apply, an operator, leaves some out here)."""
        want = op.offset + op.limit
        plain_filter = {k: v for k, v in (op.filter or {}).items() if _plain(v)}
        exact = len(plain_filter) == len(op.filter or {})
        ranked: list[SearchItem] = []
        if op.query:
            page = self.store.search_memories(
                self.owner,
                op.namespace_prefix,
                query=op.query,
                mode="semantic" if self._semantic else "keyword",
                filter=plain_filter,
                limit=min(RANKED, want) if exact else RANKED,
            )
            ranked = [_hit(h) for h in page.items if _matches(h.value, op.filter)]
        seen = {(h.namespace, h.key) for h in ranked}
        rest: list[SearchItem] = []
        if len(ranked) < want:  # every item under the prefix, those not ranked after the ranked ones (score None)
            listing = self.store.search_memories(
                self.owner,
                op.namespace_prefix,
                filter=plain_filter,
                limit=min(RANKED, want + len(seen)) if exact else RANKED,
            )
            for hit in listing.items:
                if (hit.namespace, hit.key) not in seen and _matches(hit.value, op.filter):
                    rest.append(_hit(hit, score=False))
                if len(ranked) + len(rest) >= want:
                    break
        return (ranked + rest)[op.offset : want]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefix = suffix = None
        conditions: list[MatchCondition] = list(op.match_conditions or ())
        exact = [c for c in conditions if "*" not in c.path]
        for c in exact:
            if c.match_type == "prefix" and prefix is None:
                prefix = tuple(c.path)
            elif c.match_type == "suffix" and suffix is None:
                suffix = tuple(c.path)
        found: list[tuple[str, ...]] = []
        cursor = None
        while len(found) < op.offset + op.limit:
            page = self.store.list_namespaces(
                self.owner, prefix=prefix, suffix=suffix, max_depth=op.max_depth, limit=LISTED, cursor=cursor
            )
            found += [ns for ns in page.items if all(_does_match(c, ns) for c in conditions)]
            cursor = page.next_cursor
            if cursor is None:
                break
        return found[op.offset : op.offset + op.limit]


def _fields(found: MemoryItem) -> dict[str, Any]:
    """What LangGraph's `Item` and `SearchItem` take of a memory."""
    return found.model_dump(include={"namespace", "key", "value", "created_at", "updated_at"})


def _item(found: MemoryItem | None) -> Item | None:
    return None if found is None else Item(**_fields(found))


def _hit(hit: MemoryHit, *, score: bool = True) -> SearchItem:
    return SearchItem(**_fields(hit), score=hit.score if score else None)


def _plain(value: Any) -> bool:
    """A filter value the store compares itself (equality of a JSON scalar)."""
    return isinstance(value, (str, int, float, bool)) or value is None


def _does_match(condition: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(ns) < len(path):
        return False
    pairs = (
        zip(ns, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(ns), reversed(path), strict=False)
    )
    return all(p == "*" or k == p for k, p in pairs)


def _matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return all(_compare(value.get(k), v) for k, v in (wanted or {}).items())


def _compare(have: Any, want: Any) -> bool:
    """LangGraph's filter semantics: operators, nested objects, lists compared element by element."""
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_operator(have, op, v) for op, v in want.items())
        return isinstance(have, dict) and all(_compare(have.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return isinstance(have, (list, tuple)) and len(have) == len(want) and all(map(_compare, have, want))
    return bool(have == want)


def _operator(have: Any, op: str, want: Any) -> bool:
    if op == "$eq":
        return bool(have == want)
    if op == "$ne":
        return bool(have != want)
    try:
        a, b = float(have), float(want)
    except (TypeError, ValueError):
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}.get(op, False)
