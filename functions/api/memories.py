"""Routes for long-term memory: the caller's memories (the token's owner), in namespaces.

A namespace travels as a JSON array of labels (`?namespace=["projects","lisbon"]` in a query, a list in a
body), so that no label character is taken for a separator. Search is under the costly-route throttle."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import Absent, caller
from functions.api.schemas import ExtractionPut, Forgotten, MemoryCorrection, MemoryPut, Namespaces
from store import InvalidInput
from store.core import codec
from store.extraction.choice import ExtractionChoice
from store.models import MemoryHits, MemoryItem

router = APIGatewayHttpRouter()
NAMESPACE_PARAM = 2048


def _labels(text: str | None, what: str) -> tuple[str, ...] | None:
    """A namespace given as a JSON array of strings (None when not given)."""
    if text is None:
        return None
    found = codec.parse(text, what, max_depth=2)
    if not isinstance(found, list) or not all(isinstance(label, str) for label in found):
        raise InvalidInput(f'{what} must be a JSON array of strings, such as ["preferences"]')
    return tuple(found)


@router.post("/memories", tags=["memories"], summary="Put a memory (replacing the one of that namespace and key)")
def put_memory(body: MemoryPut) -> MemoryItem:
    me = caller(router.current_event)
    index: Any = False if body.index is False else (None if body.index in (None, True) else body.index)
    return me.store.put_memory(me.owner, tuple(body.namespace), body.key, body.value, index=index, ttl=body.ttl_seconds)


@router.get("/memories/item", tags=["memories"], summary="One memory, by namespace and key")
def get_memory(
    namespace: Annotated[str, Query(min_length=2, max_length=NAMESPACE_PARAM)],
    key: Annotated[str, Query(min_length=1, max_length=512)],
    refresh_ttl: Annotated[bool, Query()] = False,
) -> MemoryItem:
    me = caller(router.current_event)
    found = me.store.get_memory(me.owner, _labels(namespace, "namespace") or (), key, refresh_ttl=refresh_ttl)
    if found is None:
        raise Absent(f"no memory {key!r} in that namespace")
    return found


@router.delete("/memories/item", tags=["memories"], summary="Delete a memory (idempotent)")
def delete_memory(
    namespace: Annotated[str, Query(min_length=2, max_length=NAMESPACE_PARAM)],
    key: Annotated[str, Query(min_length=1, max_length=512)],
) -> Response[None]:
    me = caller(router.current_event)
    me.store.delete_memory(me.owner, _labels(namespace, "namespace") or (), key)
    return Response(204)


@router.patch("/memories/item", tags=["memories"], summary="Correct a memory's text (the old one kept in history)")
def correct_memory(
    body: MemoryCorrection,
    namespace: Annotated[str, Query(min_length=2, max_length=NAMESPACE_PARAM)],
    key: Annotated[str, Query(min_length=1, max_length=512)],
) -> MemoryItem:
    """An extracted memory keeps its provenance; the text it had goes first in its `history` (change
    `corrected`). 404 `memory_not_found` when the caller has no such memory. A get and a put."""
    me = caller(router.current_event)
    return me.store.correct_memory(me.owner, _labels(namespace, "namespace") or (), key, body.text)


@router.get("/memories/search", tags=["memories"], summary="Search my memories by meaning or words")
def search_memories(
    prefix: Annotated[str | None, Query(max_length=NAMESPACE_PARAM)] = None,
    q: Annotated[str | None, Query(min_length=1, max_length=2048)] = None,
    mode: Annotated[str, Query(pattern="^(auto|semantic|keyword|hybrid)$")] = "auto",
    filter: Annotated[str | None, Query(max_length=4096)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> MemoryHits:
    """Bounded per call: one vector search of at most 100 neighbours, or a read of at most 1,000 memories
    under the prefix. `filter` is a JSON object of value fields and the values they must equal. The answer's
    `mode` says how the search ran (`auto` is semantic when the stack has an embedder, else keyword)."""
    me = caller(router.current_event)
    wanted = codec.parse(filter, "filter", max_depth=8) if filter is not None else None
    found = me.store.search_memories(
        me.owner, _labels(prefix, "prefix") or (), query=q, filter=wanted, mode=mode, limit=limit, cursor=cursor
    )
    return found


@router.get("/memories/namespaces", tags=["memories"], summary="My namespaces that hold memories")
def list_namespaces(
    prefix: Annotated[str | None, Query(max_length=NAMESPACE_PARAM)] = None,
    suffix: Annotated[str | None, Query(max_length=NAMESPACE_PARAM)] = None,
    max_depth: Annotated[int | None, Query(ge=1, le=8)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
) -> Namespaces:
    me = caller(router.current_event)
    found = me.store.list_namespaces(
        me.owner,
        prefix=_labels(prefix, "prefix"),
        suffix=_labels(suffix, "suffix"),
        max_depth=max_depth,
        limit=limit,
        cursor=cursor,
    )
    return Namespaces(items=[list(ns) for ns in found.items], next_cursor=found.next_cursor)


@router.delete(
    "/memories",
    tags=["memories"],
    summary="Forget my memories and what extraction runs recorded of them (1,000 now, the rest by the cascade)",
)
def forget_owner() -> Forgotten:
    me = caller(router.current_event)
    return Forgotten(done=me.store.forget_owner(me.owner))


@router.get("/memories/extraction", tags=["memories"], summary="My choice about memory extraction")
def get_extraction() -> ExtractionChoice:
    me = caller(router.current_event)
    return me.store.get_extraction(me.owner)


@router.put("/memories/extraction", tags=["memories"], summary="Switch memory extraction on or off for me")
def set_extraction(body: ExtractionPut) -> ExtractionChoice:
    """Off: no trigger extracts my sessions and asking for a run is refused. On: with `strategies` (built-in
    names) when a run names none, else the stack's."""
    me = caller(router.current_event)
    named = None if body.strategies is None else [str(name) for name in body.strategies]
    return me.store.set_extraction(me.owner, enabled=body.enabled, strategies=named)
