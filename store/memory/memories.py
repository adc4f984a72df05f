"""The in-memory backend: long-term memory (an owner's memories, by sort key, as the DynamoDB table keeps
them, so that both return the same candidates in the same order and rank them with the same rules)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import cached_property
from typing import Any

from store.core import codec
from store.core import memories as m
from store.core.forgetting import checked
from store.core.rules import OWNER_RECORDS_BYTES
from store.core.slots import records_slot
from store.core.timeutil import is_expired
from store.memory.core import MemoryCore
from store.models import MemoryHit, MemoryHits, MemoryItem, Page
from store.requests import (
    DeleteMemory,
    ForgetOwner,
    GetMemory,
    ListNamespaces,
    LoadOwnerRecords,
    PutMemory,
    SaveOwnerRecords,
    SearchMemories,
)


@dataclass(frozen=True)
class MemoryRecord:
    item: MemoryItem
    text: str
    embedder_id: str | None  # the embedder of `vectors.dense`
    vectors: m.Vectors
    ttl: timedelta | None

    @cached_property
    def words(self) -> dict[int, float]:
        """The lexical half's buckets that hold a weight (a search compares only those)."""
        return {i: x for i, x in enumerate(self.vectors.lexical or ()) if x}


class InProcessMemories(MemoryCore):
    """Long-term memory, in memory: `_memories[owner][sort key]`."""

    def _owner_memories(self, owner: str) -> dict[str, MemoryRecord]:
        """The owner's memories to read (a new, empty map for an owner with none: reads leave no trace)."""
        found: dict[str, MemoryRecord] = self._memories.get(owner, {})
        return found

    def _live_memory(self, record: MemoryRecord | None, now: datetime) -> MemoryRecord | None:
        return None if record is None or is_expired(record.item.expires_at, now) else record

    def put_memory(self, request: PutMemory) -> MemoryItem:
        now = self._now()
        with self._lock:
            found = self._memories.setdefault(request.owner, {})
            sk = m.memory_sk(request.namespace, request.key)
            old = self._live_memory(found.get(sk), now)
            item = MemoryItem(
                namespace=request.namespace,
                key=request.key,
                value=self._copy(request.value),
                created_at=old.item.created_at if old is not None else now,
                updated_at=now,
                expires_at=now + request.ttl if request.ttl is not None else None,
            )
            embedder = request.indexed.embedder_id if request.indexed is not None else None
            found[sk] = MemoryRecord(
                item, request.text, embedder, m.vectors(request.text, request.indexed), request.ttl
            )
            return item.model_copy(deep=True)

    def get_memory(self, request: GetMemory) -> MemoryItem | None:
        now = self._now()
        with self._lock:
            found = self._owner_memories(request.owner)
            sk = m.memory_sk(request.namespace, request.key)
            record = self._live_memory(found.get(sk), now)
            if record is None:
                return None
            if request.refresh_ttl and record.ttl is not None:
                record = replace(record, item=record.item.model_copy(update={"expires_at": now + record.ttl}))
                found[sk] = record
            return record.item.model_copy(deep=True)

    def delete_memory(self, request: DeleteMemory) -> None:
        with self._lock:
            self._owner_memories(request.owner).pop(m.memory_sk(request.namespace, request.key), None)

    def _under(self, owner: str, prefix: m.Namespace) -> list[MemoryRecord]:
        """The owner's live memories under `prefix`, in sort-key order."""
        now = self._now()
        found = self._owner_memories(owner)
        low, high = m.prefix_range(prefix)
        under = sorted((sk, r) for sk, r in found.items() if low <= sk[len(m.MEMORY_PREFIX) :] < high)
        return [r for _, r in under if self._live_memory(r, now) is not None]

    def search_memories(self, request: SearchMemories) -> MemoryHits:
        offset = m.search_cursor(request.cursor, request.owner)
        search_mode = m.resolve_mode(request.mode, request.query, request.indexed)
        with self._lock:
            records = self._under(request.owner, request.prefix)
        chosen: dict[str, tuple[MemoryRecord, float | None]] = {}  # what the vector index returns, by key
        ceiling = m.MAX_TOP_K
        if request.query is None:
            chosen = {_at(r): (r, None) for r in records[: m.LISTED_ITEMS]}
            ceiling = m.LISTED_ITEMS
        else:
            if search_mode in ("keyword", "hybrid"):
                chosen.update(_by_words(records, request.query))
            if search_mode in ("semantic", "hybrid") and request.indexed is not None:
                asked = (
                    m.top_k(offset, request.limit, bool(request.filter)) if search_mode == "semantic" else m.MAX_TOP_K
                )
                chosen.update(_by_meaning(records, request.indexed, asked))
        ordered = [chosen[sk] for sk in sorted(chosen)]  # key order, as the index breaks ties
        candidates = [
            m.Candidate(r.item.namespace, r.item.key, r.item.value, r.text, sim, r.item) for r, sim in ordered
        ]
        ranked = m.rank(
            candidates,
            search_mode=search_mode,
            query_text=request.query,
            wanted=request.filter,
            floor=m.floor_of(request.indexed),
        )
        chunk, next_cursor = m.page(ranked, offset, request.limit, request.owner, ceiling)
        hits = [MemoryHit(**r.candidate.record.model_dump(), score=r.score) for r in chunk]
        return MemoryHits(items=hits, next_cursor=next_cursor, mode=m.reported_mode(search_mode, request.query))

    def list_namespaces(self, request: ListNamespaces) -> Page[tuple[str, ...]]:
        position, end = m.walk_start(request.prefix, request.cursor, request.owner)
        now = self._now()
        with self._lock:
            keys = sorted(sk for sk, r in self._owner_memories(request.owner).items() if self._live_memory(r, now))
        out: list[tuple[str, ...]] = []
        while True:
            sk = next((k for k in keys if position < k < end), None)  # what the Query of one item finds
            if sk is None:
                return Page[tuple[str, ...]](items=out)
            if len(out) == request.limit:
                return Page[tuple[str, ...]](items=out, next_cursor=m.walk_cursor(position, request.owner))
            ns, _ = m.parse_sk(sk)
            shown = m.listing_of(ns, request.prefix, request.suffix, request.max_depth)
            if shown is not None and shown not in out:
                out.append(shown)
            position = m.walk_next(ns, shown)

    def forget_owner(self, request: ForgetOwner) -> bool:
        """The owner's memories gone and its sessions' records of the kinds `request.reduce` names rewritten by
        their reducers (its owner records stay), all in one call."""
        now = self._now()
        slots = {records_slot(kind): reducer for kind, reducer in checked(request.reduce).items()}
        with self._lock:
            self._memories.pop(request.owner, None)
            for entry in self._sessions.values():
                if entry.session.owner != request.owner:
                    continue
                for slot, reducer in slots.items():
                    if slot in entry.slots:
                        entry.slots[slot] = reducer(entry.slots[slot], now)
        return True

    def save_owner_records(self, request: SaveOwnerRecords) -> None:
        codec.encode(request.records, f"{request.kind} records", OWNER_RECORDS_BYTES)  # the same limit as DynamoDB's
        kept = self._copy(request.records)
        with self._lock:
            self._owner_records[(request.owner, request.kind)] = kept

    def load_owner_records(self, request: LoadOwnerRecords) -> list[Any]:
        with self._lock:
            found = self._owner_records.get((request.owner, request.kind))
        return [] if found is None else list(self._copy(found))


def _at(record: MemoryRecord) -> str:
    return m.memory_sk(record.item.namespace, record.item.key)


def _by_words(records: list[MemoryRecord], query: str) -> dict[str, tuple[MemoryRecord, float | None]]:
    """What the index's search of the words' half returns (MAX_TOP_K nearest), by key (no similarity)."""
    buckets = sorted((i, x) for i, x in enumerate(m.lexical_query(query) or ()) if x)
    # the dot product with the whole vector, summed in the same order: the buckets left out add 0.0
    lexical = [
        (sum(x * r.words.get(i, 0.0) for i, x in buckets), n, r)
        for n, r in enumerate(records)
        if r.vectors.lexical is not None and buckets
    ]
    return {_at(r): (r, None) for _, _, r in _nearest(lexical, m.MAX_TOP_K)}


def _by_meaning(
    records: list[MemoryRecord], indexed: m.Indexed, asked: int
) -> dict[str, tuple[MemoryRecord, float | None]]:
    """What the index's search of the embedding's half returns (`asked` nearest of the same embedder), by key,
    with their similarity."""
    meaning = m.dense_query(indexed)
    dense = [
        (m.dot(meaning, r.vectors.dense), i, r)
        for i, r in enumerate(records)
        if r.vectors.dense is not None and r.embedder_id == indexed.embedder_id
    ]
    return {_at(r): (r, similarity) for similarity, _, r in _nearest(dense, asked)}


def _nearest(scored: list[tuple[float, int, MemoryRecord]], k: int) -> list[tuple[float, int, MemoryRecord]]:
    """What the vector index returns: the `k` largest dot products, ties in key order."""
    return sorted(scored, key=lambda t: (-t[0], t[1]))[:k]
