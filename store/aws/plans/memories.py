"""Plans for long-term memory, on the memories table (docs/data-model.md, "Long-term memory").

An owner's memories are one partition (`pk` = "O#" + owner), one item each (`sk` = namespace and key,
`core.memories.memory_sk`): the value's JSON (`v`), its indexed text (`txt`), its vector and embedder
(`vec`, `emb`) when it was embedded, timestamps (`ca`, `ua`), its expiry (`exa` exactly, `exp` in epoch
seconds for the vector index's filter, `ttl` for DynamoDB's TTL, `tts` the TTL's length for a refresh).
The table's vector index (`by_meaning`) is partitioned by `pk`, so a search names its owner and can never
reach another owner's items. Every call is bounded: a put is one write, a get one read (two with a
refresh), a semantic search one SearchVectors of at most 100 neighbours, a keyword search a Query of at
most 1,000 memories under its prefix, a listing (no query) its page and one more, list_namespaces about
one Query of one item per namespace listed. A get reads strongly consistently (what was put is read); a
search or a listing reads eventually consistently, as the vector index answers, at half the capacity.
Vectors are written at 32-bit precision, the index's own (`core.memories.float32_text`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from store.aws import object_keys
from store.aws.attrs import Expr, Item, action, get_s, item_size, n, s
from store.aws.calls import AwsError, Call, Learn, Plan
from store.aws.plans.base import INDEX_DIMENSIONS, Context, get_item, settle, write_if
from store.aws.plans.objects import Intent, abandon, get_objects, put_objects, record_intent
from store.aws.plans.transactions import Actions
from store.core import codec
from store.core import memories as m
from store.core.lexical import LEXICAL_DIMENSIONS, LEXICAL_SCHEME
from store.core.timeutil import epoch, is_expired, iso, parse_iso
from store.errors import Conflict, InvalidInput, PayloadTooLarge
from store.models import MemoryHit, MemoryHits, MemoryItem, Page
from store.requests import (
    DeleteMemory,
    GetMemory,
    ListNamespaces,
    PutMemory,
    SearchMemories,
)

VECTOR_INDEX = "by_meaning"
NEVER = 2**53  # `exp` of a memory that does not expire (the index's filter compares numbers)


def vector_numbers(vector: tuple[float, ...] | list[float]) -> list[dict[str, str]]:
    """A vector as DynamoDB numbers, each the shortest text of its 32-bit float (what the index holds)."""
    return [{"N": m.float32_text(x)} for x in vector]


def memories_table(ctx: Context) -> str:
    """The store's memories table (InvalidInput when it has none)."""
    if ctx.memories_table is None:
        raise InvalidInput("this store has no memories table (SessionStore(..., memories_table=...) or MEMORIES_TABLE)")
    return ctx.memories_table


def index_dimensions(ctx: Context, table: str) -> Plan[int | None]:
    """The dimensions of the table's vector index (one DescribeTable the first time, then kept): the dense
    embedding's and the words' (`lexical.LEXICAL_DIMENSIONS`); None when the table has none."""
    known = ctx.index_dimensions.get(table)
    if known is not None:
        return known
    answer = yield Call("describe_table", {"TableName": table})
    index = next((i for i in answer["Table"].get("VectorIndexes", []) if i["IndexName"] == VECTOR_INDEX), None)
    if index is None:
        return None
    yield Learn(INDEX_DIMENSIONS, table, int(index["Dimensions"]))
    return int(index["Dimensions"])


def dense_dimensions(ctx: Context, table: str, indexed: m.Indexed | None) -> Plan[int]:
    """The dimensions of the dense part of the table's vectors (the index's, less the words'). InvalidInput,
    before anything is written, when the table has no vector index, one made for vectors of meaning alone
    (docs/operations.md, "Changing the memory embedder"), or one the embedding does not fit."""
    dims = yield from index_dimensions(ctx, table)
    if dims is None:
        raise InvalidInput(f"the memories table has no vector index {VECTOR_INDEX!r} (template.yaml makes one)")
    dense = dims - LEXICAL_DIMENSIONS
    if dense < 1:
        raise InvalidInput(
            f"the memories table's vector index has {dims} dimensions: it needs the embedder's and "
            f"{LEXICAL_DIMENSIONS} for words (docs/operations.md, 'Changing the memory embedder')"
        )
    if indexed is not None and dense != len(indexed.vector):
        raise InvalidInput(
            f"the embedder's vectors have {len(indexed.vector)} dimensions; the table's index holds {dense} "
            f"(and {LEXICAL_DIMENSIONS} for words)"
        )
    return dense


SHOWN = ("sk", "v", "ref", "txt", "ca", "ua", "exa")  # what a memory read is made of; `vec`, `emb` only to rank
REF = "ref"  # the object of a value too large for an item


MEMORY_PK = "O#"  # an owner's memories' partition: this and the owner


def owner_pk(owner: str) -> str:
    """The partition key of the owner's memories (and forget marker, and owner records)."""
    return MEMORY_PK + owner


def _key(owner: str, ns: m.Namespace, item_key: str) -> Item:
    return {"pk": s(owner_pk(owner)), "sk": s(m.memory_sk(ns, item_key))}


def _item(stored: Item, value: dict[str, Any] | None = None) -> MemoryItem:
    """The memory an item holds (its value given when it is kept in the bucket: `ref`)."""
    ns, item_key = m.parse_sk(stored["sk"]["S"])
    expires = get_s(stored, "exa")
    return MemoryItem(
        namespace=ns,
        key=item_key,
        value=value if value is not None else _inline(stored) or {},
        created_at=parse_iso(stored["ca"]["S"]),
        updated_at=parse_iso(stored["ua"]["S"]),
        expires_at=parse_iso(expires) if expires else None,
    )


def _inline(stored: Item) -> dict[str, Any] | None:
    """The value an item holds itself, or None when it is in the bucket."""
    if "v" not in stored:
        return None
    loaded: dict[str, Any] = codec.loads(stored["v"]["S"], "a stored memory")
    return loaded


def _fetch(ctx: Context, items: list[Item], known: dict[str, dict[str, Any]]) -> Plan[None]:
    """Add to `known` (by object key) the values of `items` kept in the bucket, fetched concurrently (those
    not known yet)."""
    wanted = sorted({k for i in items if "v" not in i and (k := get_s(i, REF)) and k not in known})
    for where, body in zip(wanted, (yield from get_objects(ctx, wanted)), strict=True):
        known[where] = codec.loads(body.decode("utf-8"), "a stored memory")


def _value(stored: Item, known: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The item's value: its own, or its object's when fetched into `known` (else None)."""
    inline = _inline(stored)
    return inline if inline is not None else known.get(get_s(stored, REF) or "")


def _live(stored: Item | None, now: datetime) -> Item | None:
    if stored is None:
        return None
    expires = get_s(stored, "exa")
    return None if expires and is_expired(parse_iso(expires), now) else stored


def put_memory(ctx: Context, request: PutMemory) -> Plan[MemoryItem]:
    """One UpdateItem (the memory as given; its creation time kept unless it is new or had expired), two
    when an expired one is replaced. A value too large for an item (past `settings.spill_item_bytes`) goes to
    the bucket first, behind an upload intent: its object, then one transaction that writes the memory with
    its pointer (`ref`) and releases the intent, then a GetItem of its creation time (PayloadTooLarge with no
    bucket). A replaced value's object is released by the memories table's stream (the cascade)."""
    table = memories_table(ctx)
    dense = yield from dense_dimensions(ctx, table, request.indexed)
    now = ctx.now()
    key = _key(request.owner, request.namespace, request.key)
    text = codec.dumps(request.value, "value")
    fields, removes = _memory_fields(request, text, dense, now)
    intent = None
    if item_size({**key, **fields}) > ctx.settings.spill_item_bytes:
        intent = yield from _spill_value(ctx, request.owner, text)
        fields[REF] = s(intent.objects[0])
        removes.append("v")
        del fields["v"]
    else:
        removes.append(REF)
    for fresh in (False, True):  # an expired memory is absent: its replacement is a new memory (fresh)
        body = _memory_update(table, key, fields, removes, now, fresh)
        if intent is None:
            try:
                answer = yield Call("update_item", {**body["Update"], "ReturnValues": "ALL_NEW"})
            except AwsError as err:
                if err.code == "ConditionalCheckFailedException" and not fresh:
                    continue
                raise
            return _item(answer["Attributes"], request.value)
        refused = yield from settle(ctx, Actions(memory=body, intent=intent.release(ctx)), "a memory's put")
        if refused is None:
            stored = yield from get_item(table, key, projection=("sk", "ca", "ua", "exa"))
            return _item(stored or {**key, "ca": s(iso(now)), "ua": s(iso(now))}, request.value)
        if not refused.failed.failed("memory") or fresh:
            yield from abandon(ctx, intent)
            raise Conflict("the memory's value was not kept: its upload's time ran out; put it again") from (
                refused.cause
            )
    raise AssertionError("unreachable: the fresh put has no condition")


def _memory_fields(request: PutMemory, text: str, dense: int, now: datetime) -> tuple[dict[str, Any], list[str]]:
    """The attributes a put sets (the value, its text, vectors, embedder, expiry) and those it removes (what
    the memory had and this put has not)."""
    expires = now + request.ttl if request.ttl is not None else None
    fields: dict[str, Any] = {
        "ns": s(m.namespace_part(request.namespace)),
        "v": s(text),
        "txt": s(request.text),
        "ua": s(iso(now)),
        "exp": n(epoch(expires) if expires else NEVER),
    }
    found = m.vectors(request.text, request.indexed)
    optional: dict[str, Any] = {
        "vec": None if found.empty else {"L": vector_numbers(m.layout(found, dense))},
        "emb": None if request.indexed is None else s(request.indexed.embedder_id),
        "lex": None if found.lexical is None else s(LEXICAL_SCHEME),
    }
    if expires is not None and request.ttl is not None:
        optional.update(exa=s(iso(expires)), ttl=n(epoch(expires)), tts=n(int(request.ttl.total_seconds())))
    else:
        optional.update(exa=None, ttl=None, tts=None)
    fields.update({k: v for k, v in optional.items() if v is not None})
    return fields, [k for k, v in optional.items() if v is None]


def memory_item(request: PutMemory, dense: int, now: datetime) -> Item:
    """The whole item of a new memory whose value fits in an item, as a BatchWriteItem puts it (a batch of
    the store's own memories: a session's message index)."""
    fields, _ = _memory_fields(request, codec.dumps(request.value, "value"), dense, now)
    return {**_key(request.owner, request.namespace, request.key), **fields, "ca": s(iso(now))}


def _spill_value(ctx: Context, owner: str, text: str) -> Plan[Intent]:
    """A value too large for an item put in the bucket behind an upload intent (PayloadTooLarge without a
    bucket): the intent, whose first key is the object's."""
    if ctx.bucket is None:
        raise PayloadTooLarge("a memory this large is kept in the store's bucket, and this store has none")
    payload = text.encode("utf-8")
    where = object_keys.payload_key(object_keys.memory_prefix(owner), ctx.new_id(), payload)
    intent = yield from record_intent(ctx, [where])
    if intent is None:  # only an intent checked against a session can be refused
        raise AssertionError("an upload intent without a session was refused")
    try:
        yield from put_objects(ctx, [(where, payload)])
    except AwsError:
        yield from abandon(ctx, intent)
        raise
    return intent


def _memory_update(
    table: str, key: Item, fields: dict[str, Any], removes: list[str], now: datetime, fresh: bool
) -> dict[str, Any]:
    """The Update action of a put: `fields` set, `removes` removed, the creation time set (`fresh`) or kept,
    conditioned (unless `fresh`) on the memory there not having expired."""
    expr = Expr()
    sets = [f"{expr.name(k)} = {expr.value(v)}" for k, v in fields.items()]
    created = expr.value(s(iso(now)))
    sets.append(
        f"{expr.name('ca')} = {created}"
        if fresh
        else f"{expr.name('ca')} = if_not_exists({expr.name('ca')}, {created})"
    )
    update = "SET " + ", ".join(sets) + " REMOVE " + ", ".join(expr.name(r) for r in removes)
    condition = (
        None if fresh else f"attribute_not_exists({expr.name('exa')}) OR {expr.name('exa')} > {expr.value(s(iso(now)))}"
    )
    return action("Update", table, key, expr, update=update, condition=condition)


def get_memory(ctx: Context, request: GetMemory) -> Plan[MemoryItem | None]:
    """One GetItem; with `refresh_ttl`, one UpdateItem more for an expiring memory (only while it is the one read)."""
    table = memories_table(ctx)
    now = ctx.now()
    key = _key(request.owner, request.namespace, request.key)
    stored = _live((yield from get_item(table, key, projection=(*SHOWN, "tts"))), now)
    if stored is None:
        return None
    known: dict[str, dict[str, Any]] = {}
    yield from _fetch(ctx, [stored], known)
    value = _value(stored, known)
    seconds = stored.get("tts")
    if request.refresh_ttl and seconds is not None:
        expires = now + timedelta(seconds=int(seconds["N"]))
        expr = Expr()
        renewed = {"exa": s(iso(expires)), "exp": n(epoch(expires)), "ttl": n(epoch(expires))}
        update = "SET " + ", ".join(f"{expr.name(k)} = {expr.value(v)}" for k, v in renewed.items())
        condition = f"{expr.name('ua')} = {expr.value(stored['ua'])}"
        body = action("Update", table, key, expr, update=update, condition=condition)["Update"]
        if (yield from write_if("update_item", body)):
            stored = {**stored, "exa": s(iso(expires))}
    return _item(stored, value)


def delete_memory(ctx: Context, request: DeleteMemory) -> Plan[None]:
    """One DeleteItem."""
    yield Call(
        "delete_item", {"TableName": memories_table(ctx), "Key": _key(request.owner, request.namespace, request.key)}
    )


def _under(
    ctx: Context,
    owner: str,
    prefix: m.Namespace,
    limit: int,
    *,
    enough: int | None = None,
    wanted: Mapping[str, Any] | None = None,
    known: dict[str, dict[str, Any]] | None = None,
) -> Plan[list[Item]]:
    """The owner's live memories under `prefix`, in key order, at most `limit`, read eventually consistently
    (as the vector index is), without their vectors (most of an item's size). With `enough`, it stops once
    that many of them match `wanted` (a listing needs no more than its page and one past it): pages of
    `enough` items, or of at least 100 when a filter may drop some (values kept in the bucket are fetched
    into `known` to be matched)."""
    table = memories_table(ctx)
    now = ctx.now()
    low, high = m.prefix_range(prefix)
    expr = Expr()
    first, past = expr.value(s(m.MEMORY_PREFIX + low)), expr.value(s(m.MEMORY_PREFIX + high))
    condition = f"{expr.name('pk')} = {expr.value(s(owner_pk(owner)))} AND {expr.name('sk')} BETWEEN {first} AND {past}"
    page = limit if enough is None else min(limit, enough if not wanted else max(enough, 100))
    params = {
        "TableName": table,
        "KeyConditionExpression": condition,
        "ProjectionExpression": ", ".join(expr.name(a) for a in SHOWN),
        "Limit": page,
        **expr.params(),
    }
    out: list[Item] = []
    kept = 0
    while len(out) < limit and (enough is None or kept < enough):
        answer = yield Call("query", {**params, "Limit": min(page, limit - len(out))})
        fresh = [i for i in answer.get("Items", []) if _live(i, now) is not None]
        out += fresh
        if enough is not None and wanted:
            known = {} if known is None else known
            yield from _fetch(ctx, fresh, known)
            kept += sum(1 for i in fresh if m.matches(_value(i, known) or {}, wanted))
        elif enough is not None:
            kept += len(fresh)
        last = answer.get("LastEvaluatedKey")
        if not last:
            break
        params = {**params, "ExclusiveStartKey": last}
    return out[:limit]


def _nearest(
    ctx: Context,
    request: SearchMemories,
    table: str,
    vector: tuple[float, ...],
    kind: tuple[str, str],
    top_k: int,
) -> Plan[list[tuple[Item, float]]]:
    """One SearchVectors: the owner's live memories under the prefix whose `kind` attribute (`emb`: the
    query's embedder; `lex`: the words' scheme) matches, the `top_k` largest dot products with `vector`."""
    now = ctx.now()
    expr = Expr()
    clauses = [
        f"{expr.name('pk')} = {expr.value(s(owner_pk(request.owner)))}",
        f"{expr.name(kind[0])} = {expr.value(s(kind[1]))}",
        f"{expr.name('exp')} >= {expr.value(n(epoch(now)))}",  # to the second: `_live` decides exactly
    ]
    low, high = m.prefix_range(request.prefix)  # the empty prefix's leaves the store's own namespaces out
    clauses.append(f"{expr.name('ns')} >= {expr.value(s(low))}")
    clauses.append(f"{expr.name('ns')} < {expr.value(s(high))}")
    answer = yield Call(
        "search_vectors",
        {
            "TableName": table,
            "IndexName": VECTOR_INDEX,
            "SearchVector": vector_numbers(vector),
            "TopK": top_k,
            "SearchConditionExpression": " AND ".join(clauses),
            **expr.params(),
        },
    )
    return [(r["Item"], float(r["Score"])) for r in answer.get("SearchResults", []) if _live(r["Item"], now)]


def search_memories(ctx: Context, request: SearchMemories) -> Plan[MemoryHits]:
    """With a query, by the table's vector index (dot products): keyword, one SearchVectors of the 100
    memories whose words weigh most against the query's; semantic, one SearchVectors of the nearest by meaning
    (the page and those before it, or 100 with a filter); hybrid, both (100 each). The candidates are ranked
    by `core.memories.rank`. With no query, a Query of the prefix's memories in key order (the page and one
    more)."""
    table = memories_table(ctx)
    offset = m.search_cursor(request.cursor, request.owner)
    search_mode = m.resolve_mode(request.mode, request.query, request.indexed)
    found: dict[str, tuple[Item, float | None]] = {}  # by sort key
    known: dict[str, dict[str, Any]] = {}  # values kept in the bucket, fetched: by object key
    if request.query is None:
        items = yield from _under(
            ctx,
            request.owner,
            request.prefix,
            m.LISTED_ITEMS,
            enough=offset + request.limit + 1,
            wanted=request.filter,
            known=known,
        )
        found = {i["sk"]["S"]: (i, None) for i in items}
        ceiling = m.LISTED_ITEMS
    else:
        dense = yield from dense_dimensions(ctx, table, request.indexed)
        words = m.lexical_query(request.query)
        if search_mode in ("keyword", "hybrid") and words is not None:
            vector = (0.0,) * dense + words
            for hit, _ in (yield from _nearest(ctx, request, table, vector, ("lex", LEXICAL_SCHEME), m.MAX_TOP_K)):
                found[hit["sk"]["S"]] = (hit, None)
        if search_mode in ("semantic", "hybrid") and request.indexed is not None:
            vector = m.dense_query(request.indexed) + (0.0,) * LEXICAL_DIMENSIONS
            top_k = m.top_k(offset, request.limit, bool(request.filter)) if search_mode == "semantic" else m.MAX_TOP_K
            kind = ("emb", request.indexed.embedder_id)
            for hit, score in (yield from _nearest(ctx, request, table, vector, kind, top_k)):
                found[hit["sk"]["S"]] = (hit, score)
        ceiling = m.MAX_TOP_K
    ordered = [found[k] for k in sorted(found)]
    if request.filter:  # the filter matches values: those in the bucket are fetched to be matched
        yield from _fetch(ctx, [stored for stored, _ in ordered], known)
    candidates = []
    stored_of: dict[tuple[tuple[str, ...], str], Item] = {}
    for stored, similarity in ordered:
        item = _item(stored, _value(stored, known) or {})
        stored_of[(item.namespace, item.key)] = stored
        candidates.append(
            m.Candidate(item.namespace, item.key, item.value, get_s(stored, "txt") or "", similarity, item)
        )
    ranked = m.rank(
        candidates,
        search_mode=search_mode,
        query_text=request.query,
        wanted=request.filter,
        floor=m.floor_of(request.indexed),
    )
    chunk, next_cursor = m.page(ranked, offset, request.limit, request.owner, ceiling)
    shown = [stored_of[(r.candidate.namespace, r.candidate.key)] for r in chunk]
    yield from _fetch(ctx, shown, known)  # the page's values kept in the bucket
    hits = [
        MemoryHit(**{**r.candidate.record.model_dump(), "value": _value(stored, known)}, score=r.score)
        for r, stored in zip(chunk, shown, strict=True)
    ]
    return MemoryHits(items=hits, next_cursor=next_cursor, mode=m.reported_mode(search_mode, request.query))


def list_namespaces(ctx: Context, request: ListNamespaces) -> Plan[Page[tuple[str, ...]]]:
    """The walk of `core.memories.walk_start`/`walk_next`: each step one Query for the first live memory past
    the position (a memory expired in place costs one more page), so about one request per namespace listed."""
    table = memories_table(ctx)
    now = ctx.now()
    position, end = m.walk_start(request.prefix, request.cursor, request.owner)
    out: list[tuple[str, ...]] = []
    while True:
        expr = Expr()
        params: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": f"{expr.name('pk')} = {expr.value(s(owner_pk(request.owner)))} AND "
            f"{expr.name('sk')} > {expr.value(s(position))}",
            "ProjectionExpression": f"{expr.name('sk')}, {expr.name('exa')}",
            "Limit": 1,
            **expr.params(),
        }
        stored = None
        while stored is None:
            answer = yield Call("query", params)
            items = answer.get("Items", [])
            if items and items[0]["sk"]["S"] >= end:
                break
            stored = _live(items[0], now) if items else None
            last = answer.get("LastEvaluatedKey")
            if stored is None and not last:
                break
            params = {**params, "ExclusiveStartKey": last}
        if stored is None:
            return Page[tuple[str, ...]](items=out)
        if len(out) == request.limit:
            return Page[tuple[str, ...]](items=out, next_cursor=m.walk_cursor(position, request.owner))
        ns, _ = m.parse_sk(stored["sk"]["S"])
        shown = m.listing_of(ns, request.prefix, request.suffix, request.max_depth)
        if shown is not None and shown not in out:
            out.append(shown)
        position = m.walk_next(ns, shown)
