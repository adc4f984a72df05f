"""The public operations on long-term memory: an owner's memories, in namespaces, searchable by meaning.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises its
arguments, embeds what it must with the store's embedder (`Settings.embedder`: a put's text, a search's
query; never on `get_memory`'s path), then hands a request to the backend. DESIGN.md, "Long-term memory"."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from store.core import memories as m
from store.core import validation as v
from store.core.timeutil import to_duration
from store.embeddings import embed, embed_query, match_threshold
from store.errors import InvalidInput
from store.front.base import Domain
from store.front.observed import Attributes, observed
from store.models import MemoryHits, MemoryItem, Page
from store.requests import (
    DeleteMemory,
    ForgetOwner,
    GetMemory,
    ListNamespaces,
    PutMemory,
    SearchMemories,
)
from store.rerank import reranked


def _depth(labels: Any) -> int:
    return len(labels) if isinstance(labels, (tuple, list)) else -1


def _embedder(arguments: Mapping[str, Any]) -> str:
    embedder = getattr(getattr(arguments.get("self"), "settings", None), "embedder", None)
    return str(getattr(embedder, "model_id", "")) if embedder is not None else "none"


def _search_call(arguments: Mapping[str, Any]) -> Attributes:
    """A search's choices, never its content (no owner, label, query or filter value)."""
    mode, limit, filtered = arguments.get("mode"), arguments.get("limit"), arguments.get("filter")
    return {
        "agent_store.memory.mode": mode if mode in m.MODES else "invalid",
        "agent_store.memory.prefix_depth": _depth(arguments.get("namespace_prefix")),
        "agent_store.memory.limit": limit if isinstance(limit, int) and not isinstance(limit, bool) else -1,
        "agent_store.memory.has_query": arguments.get("query") is not None,
        "agent_store.memory.filter_fields": len(filtered) if isinstance(filtered, dict) else 0,
        "agent_store.memory.next_page": arguments.get("cursor") is not None,
        "agent_store.memory.embedder": _embedder(arguments),
    }


def _search_result(page: Any) -> Attributes:
    items = getattr(page, "items", None)
    return {
        "agent_store.memory.hits": len(items) if isinstance(items, list) else 0,
        "agent_store.memory.more": getattr(page, "next_cursor", None) is not None,
    }


def _put_call(arguments: Mapping[str, Any]) -> Attributes:
    index = arguments.get("index")
    return {
        "agent_store.memory.namespace_depth": _depth(arguments.get("namespace")),
        "agent_store.memory.indexed": index is not False,
        "agent_store.memory.expires": arguments.get("ttl") is not None,
        "agent_store.memory.embedder": _embedder(arguments),
    }


class Memories(Domain):
    """Put, get, delete and search an owner's memories; list their namespaces; forget an owner."""

    def _indexed(self, text: str) -> m.Indexed | None:
        """A value's `text` embedded by the store's embedder (None: no embedder, or no text)."""
        embedder = self.settings.embedder
        if embedder is None or not text.strip():
            return None
        return m.Indexed(embed(embedder, [text])[0], m.embedder_id(embedder))

    def _query_indexed(self, text: str, owner: str | None) -> m.Indexed | None:
        """A search's query embedded as a query by the store's embedder, with its `match_threshold` as the
        floor (None: no embedder, or no text). `embed_query` keeps it for `owner` (None: the operator's
        view): the same question asked again by them is not embedded again, and no other owner's search is
        faster for what they asked."""
        embedder = self.settings.embedder
        if embedder is None or not text.strip():
            return None
        vector = embed_query(embedder, text, owner or "")
        return m.Indexed(vector, m.embedder_id(embedder), match_threshold(embedder))

    @observed("agent_store.memory.put", before=_put_call, after=lambda _item: {}, embeds=True)
    def put_memory(
        self,
        owner: str,
        namespace: tuple[str, ...] | list[str],
        key: str,
        value: dict[str, Any],
        *,
        index: list[str] | bool | None = None,
        ttl: timedelta | float | None = None,
    ) -> MemoryItem:
        """Put `value` (a JSON object) as the memory `key` of the owner's `namespace` (a tuple of labels),
        replacing the one there. `index` names the value's text fields to embed and match (None: all of the
        value's text; False: not searchable by meaning, still by keyword); `ttl` (seconds or a timedelta)
        makes it expire that long after this put. One write (plus the embedding, when the store has an
        embedder); bad input is InvalidInput with nothing written."""
        fields = m.index_fields(index)
        checked = m.value(value, self.settings.max_payload_bytes)
        text = m.indexed_text(checked, None if fields is False else fields)
        request = PutMemory(
            owner=v.owner(owner),
            namespace=m.namespace(namespace),
            key=m.key(key),
            value=checked,
            text=text,
            indexed=None if fields is False else self._indexed(text),
            ttl=to_duration(ttl, "ttl"),
            index=fields,
        )
        return self._backend.execute(request)

    def get_memory(
        self, owner: str, namespace: tuple[str, ...] | list[str], key: str, *, refresh_ttl: bool | None = None
    ) -> MemoryItem | None:
        """The memory, or None (expired is absent). With `refresh_ttl` (default: `Settings.memory_refresh_ttl`)
        an expiring memory's TTL starts again from now. One read (and one write when it refreshes)."""
        refresh = self.settings.memory_refresh_ttl if refresh_ttl is None else v.flag(refresh_ttl, "refresh_ttl")
        request = GetMemory(owner=v.owner(owner), namespace=m.namespace(namespace), key=m.key(key), refresh_ttl=refresh)
        return self._backend.execute(request)

    def delete_memory(self, owner: str, namespace: tuple[str, ...] | list[str], key: str) -> None:
        """Remove the memory (nothing to remove is fine)."""
        request = DeleteMemory(owner=v.owner(owner), namespace=m.namespace(namespace), key=m.key(key))
        return self._backend.execute(request)

    @observed("agent_store.memory.search", before=_search_call, after=_search_result, embeds=True)
    def search_memories(
        self,
        owner: str,
        namespace_prefix: tuple[str, ...] | list[str] = (),
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        mode: str = "auto",
        limit: int = 10,
        cursor: str | None = None,
    ) -> MemoryHits:
        """The owner's memories under `namespace_prefix` (every namespace that begins with it), best first:
        by meaning (`semantic`), by the query's words (`keyword`: BM25 over stemmed words), or both fused
        (`hybrid`); `auto` is hybrid when the store has an embedder, else keyword. With no query, every memory
        in namespace and key order. `filter` keeps the memories whose value has each of its fields equal.
        Bounded at any size: one vector search of at most 100 candidates per mode (hybrid: two), or a read of
        the page (a listing); `next_cursor` pages within the first 100 hits. With `Settings.reranker`, the
        page is reordered by the reranker."""
        prefix = m.namespace(namespace_prefix, "namespace_prefix", allow_empty=True)
        text = m.query(query)
        chosen = m.mode(mode)
        if cursor is not None and not isinstance(cursor, str):
            raise InvalidInput("cursor must be a string")
        who = v.owner(owner)
        request = SearchMemories(
            owner=who,
            prefix=prefix,
            query=text,
            indexed=self._query_indexed(text, who) if text is not None and chosen != "keyword" else None,
            filter=m.filter_spec(filter),
            mode=chosen,
            limit=v.limit(limit, maximum=m.MAX_SEARCH_LIMIT) or 10,
            cursor=cursor,
        )
        found = self._backend.execute(request)
        reranker = self.settings.reranker
        if reranker is None or text is None or len(found.items) < 2:
            return found
        order = reranked(reranker, text, [m.indexed_text(h.value, None) for h in found.items])
        return found if order is None else found.model_copy(update={"items": [found.items[i] for i in order]})

    def list_namespaces(
        self,
        owner: str,
        *,
        prefix: tuple[str, ...] | None = None,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> Page[tuple[str, ...]]:
        """The owner's namespaces that hold memories, in order, each once: those under `prefix`, ending with
        `suffix`, cut to `max_depth` labels. Queries, never a scan: about one per namespace listed."""
        if max_depth is not None:
            max_depth = v.limit(max_depth, "max_depth", maximum=m.MAX_DEPTH)
        if cursor is not None and not isinstance(cursor, str):
            raise InvalidInput("cursor must be a string")
        request = ListNamespaces(
            owner=v.owner(owner),
            prefix=None if prefix is None else m.namespace(prefix, "prefix", allow_empty=True),
            suffix=None if suffix is None else m.namespace(suffix, "suffix", allow_empty=True),
            max_depth=max_depth,
            limit=v.limit(limit, maximum=1000) or 100,
            cursor=cursor,
        )
        return self._backend.execute(request)

    def forget_owner(self, owner: str) -> bool:
        """Remove the owner's memories, at most 1,000 a call, and then rewrite its sessions' records of the kinds
        this store's `forget_reducers` name (memory extraction's runs keep only how far each strategy read, so
        those messages are not extracted again; 25 sessions a call): True when nothing is left, False when some
        is (the stack's cascade carries it on, or call again; until then what is left can still be read). The
        owner's records (`save_owner_records`) stay."""
        return self._backend.execute(ForgetOwner(owner=v.owner(owner), reduce=self.forget_reducers))
