"""Plans for a session's message index, on the memories table (`core.message_index`: the index is the
store's own memories in the owner's partition, so searches are `search_memories`'s).

Costs: a write of N messages, the head read and N puts in BatchWriteItems of 25 (up to 8 at once); a search within a
session, the head read and the memory search (one or two SearchVectors); a search across the owner's sessions,
the memory search and one BatchGetItem of the heads of the sessions its page names (a session deleted or
expired whose index the cascade has not removed yet is left out); dropping a session's index, a Query of at
most DROP_BATCH keys and their deletes a call."""

from __future__ import annotations

from store.aws import keys
from store.aws.attrs import Expr, s
from store.aws.calls import Call, Plan
from store.aws.items import head_from_item
from store.aws.plans.base import Context, batch_delete, batch_get, batch_write, read_head
from store.aws.plans.memories import (
    dense_dimensions,
    memories_table,
    memory_item,
    owner_pk,
    search_memories,
)
from store.core import memories as m
from store.core import message_index as mi
from store.models import MessageHits
from store.requests import (
    DropMessageIndex,
    PutMemory,
    SearchMessages,
    SearchSessionMessages,
    WriteMessageIndex,
    memory_search_of,
)

DROP_BATCH = 1000  # index entries one drop_message_index call removes


def write_message_index(ctx: Context, request: WriteMessageIndex) -> Plan[int]:
    """The head read, then the entries put in batches (after the old ones removed, with `restart`)."""
    head = yield from read_head(ctx, request.session_id, request.owner, copying_ok=True)
    who = head.session.owner
    if request.restart:
        while not (yield from drop_message_index(ctx, DropMessageIndex(owner=who, session_id=request.session_id))):
            pass
    table = memories_table(ctx)
    now = ctx.now()
    puts = []
    for ns, key, value, text, indexed in mi.entry_memories(request.session_id, request.entries):
        put = PutMemory(owner=who, namespace=ns, key=key, value=value, text=text, indexed=indexed)
        dense = yield from dense_dimensions(ctx, table, indexed)
        puts.append({"PutRequest": {"Item": memory_item(put, dense, now)}})
    yield from batch_write(ctx, table, puts)
    return len(puts)


def drop_message_index(ctx: Context, request: DropMessageIndex) -> Plan[bool]:
    """A Query of up to DROP_BATCH of the session's entries' keys, and their deletes."""
    table = memories_table(ctx)
    low, high = m.prefix_range(mi.session_namespace(request.session_id))
    expr = Expr()
    first, past = expr.value(s(m.MEMORY_PREFIX + low)), expr.value(s(m.MEMORY_PREFIX + high))
    answer = yield Call(
        "query",
        {
            "TableName": table,
            "KeyConditionExpression": f"{expr.name('pk')} = {expr.value(s(owner_pk(request.owner)))} AND "
            f"{expr.name('sk')} BETWEEN {first} AND {past}",
            "ProjectionExpression": f"{expr.name('pk')}, {expr.name('sk')}",
            "Limit": DROP_BATCH,
            **expr.params(),
        },
    )
    found = [{"pk": i["pk"], "sk": i["sk"]} for i in answer.get("Items", [])]
    yield from batch_delete(ctx, table, found)
    return not answer.get("LastEvaluatedKey")


def search_session_messages(ctx: Context, request: SearchSessionMessages) -> Plan[MessageHits]:
    """The head read (the session is live and the caller's), then the memory search of its index."""
    head = yield from read_head(ctx, request.session_id, request.owner, copying_ok=True)
    found = yield from search_memories(ctx, memory_search_of(request, head.session.owner))
    return mi.message_hits(found)


def search_messages(ctx: Context, request: SearchMessages) -> Plan[MessageHits]:
    """The memory search of the owner's whole index, then the heads of the sessions its page names."""
    found = yield from search_memories(ctx, memory_search_of(request, request.owner))
    named = mi.sessions_of(found)
    heads = (yield from batch_get(ctx, ctx.sessions_table, [keys.head_key(sid) for sid in named])) if named else []
    now = ctx.now()
    live = {h.session.id for h in map(head_from_item, heads) if h.live(now, request.owner)}
    return mi.message_hits(found, live)
