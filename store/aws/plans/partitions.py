"""Reading a transcript: the messages of one partition of the messages table (a session's is its head's
`part`, the session id's own until a rewind moves it), by sequence number or by message id. Several small
messages may share an item (a pack, `store.aws.packs`): every read here returns the messages' own items."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, action, n, s
from store.aws.calls import Call, Parallel, Plan
from store.aws.items import Head
from store.aws.packs import FIRST, PACK_MAX, expand, is_pack, message_in, message_with_id, pack_stem
from store.aws.plans.base import Context, get_item, get_item_call, live_head, query
from store.core.paging import MAX_SEQ

COMPACTION_PAGE = 100  # messages read at once looking back for the previous compaction marker


@dataclass(frozen=True)
class Span:
    """Messages lo..hi of one partition, oldest first (or `newest_first`), at most `limit` (None: all), of
    `roles` only when given."""

    part: str
    lo: int
    hi: int
    newest_first: bool = False
    limit: int | None = None
    roles: frozenset[str] | None = None

    @property
    def top(self) -> int:
        """The highest key the span's Query reads: past `hi` by what a pack holding `hi` may reach."""
        return min(self.hi + PACK_MAX - 1, MAX_SEQ) if self.hi < MAX_SEQ else self.hi

    def query(self, ctx: Context, *, keys_only: bool = False) -> dict[str, Any]:
        """The Query parameters (strongly consistent) of the span (only the items' keys with `keys_only`), for
        plans that run several at once; `messages` turns what it reads into the span's messages."""
        expr = Expr()
        params: dict[str, Any] = {
            "TableName": ctx.messages_table,
            "ConsistentRead": True,
            "ScanIndexForward": not self.newest_first,
            "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(self.part))} AND "
            f"{expr.name(keys.SEQ)} BETWEEN {expr.value(n(self.lo))} AND {expr.value(n(self.top))}",
        }
        filters = []
        if self.top > self.hi:  # past hi: only a pack that starts at or before it
            hi = expr.value(n(self.hi))
            filters.append(f"{expr.name(keys.SEQ)} <= {hi} OR {expr.name(FIRST)} <= {hi}")
        if self.roles:
            allowed = ", ".join(expr.value(s(r)) for r in sorted(self.roles))
            filters.append(f"{expr.name('role')} IN ({allowed}) OR attribute_exists({expr.name(FIRST)})")
        if filters:
            params["FilterExpression"] = " AND ".join(f"({f})" for f in filters)
        if self.limit is not None:
            # newest first, the keys past hi come first: they may hold none of the span's messages
            params["Limit"] = self.limit + (self.top - self.hi if self.newest_first else 0)
        if keys_only:
            params["ProjectionExpression"] = ", ".join(expr.name(a) for a in (keys.SID, keys.SEQ, FIRST))
        params.update(expr.params())
        return params

    def messages(self, item: Item) -> list[Item]:
        """The span's messages an item read by its Query stores, in the span's order."""
        found = [m for m in expand(item, self.lo, self.hi) if not self.roles or m["role"]["S"] in self.roles]
        return found[::-1] if self.newest_first else found

    def reader(self) -> Callable[[Item], list[Item]]:
        """`messages` for one read of the span, giving each sequence number once: a Query that meets an
        unpacking (`unpacking.unpack`) may see a message both in its pack and in its own item."""
        seen: set[str] = set()

        def read(item: Item) -> list[Item]:
            out = [m for m in self.messages(item) if m[keys.SEQ]["N"] not in seen]
            seen.update(m[keys.SEQ]["N"] for m in out)
            return out

        return read


def read_range(ctx: Context, span: Span, first: dict[str, Any] | None = None) -> Plan[list[Item]]:
    """The span's messages: one Query per 1 MB page (a filtered one reads growing pages until it has
    `limit`); `first`, the answer to its first page when it was read already."""
    if span.lo > span.hi:
        return []
    items: list[Item] = yield from query(
        span.query(ctx), limit=span.limit, expand=span.reader(), growing=bool(span.roles), first=first
    )
    return items


def head_and_range(
    ctx: Context, session_id: str, owner: str | None, span_of: Callable[[str, int | None], Span]
) -> Plan[tuple[Head, list[Item]]]:
    """The session's live head (`read_head`'s) and the messages of `span_of(its partition, its compaction)`, both
    read in one round trip when the span can be told before the head is read: from the position this store last
    saw (`Context.positions`), or a new session's (its transcript in its own partition, never compacted), which
    is right but after a rewind or a compaction this store did not see. When the head says otherwise, the
    span is read again (one Query more); what the first Query read of a session the caller may not read is
    never returned (the head decides first)."""
    known = ctx.positions.get(session_id)
    guess = span_of(
        (known.part if known is not None else None) or session_id, known.compaction_seq if known is not None else None
    )
    head_call = get_item_call(ctx.sessions_table, keys.head_key(session_id))
    if guess.lo > guess.hi:
        answer, first = (yield head_call), None
    else:
        answer, first = yield Parallel((head_call, Call("query", guess.query(ctx))))
    head = yield from live_head(ctx, session_id, answer.get("Item"), owner)
    span = span_of(head.part, head.session.compaction_seq)
    items = yield from read_range(ctx, span, first if span == guess else None)
    return head, items


def stored_at(ctx: Context, part: str, seq: int) -> Plan[Item | None]:
    """The item that stores message `seq` of a partition, as stored (a pack, or the message's own), or None:
    1 GetItem, + 1 Query when the message is inside a pack (a pack is keyed at its last message)."""
    item: Item | None = yield from get_item(ctx.messages_table, keys.message_key(part, seq))
    if item is not None:
        return item
    expr = Expr()
    found = yield from query(
        {
            "TableName": ctx.messages_table,
            "ConsistentRead": True,
            "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(part))} AND "
            f"{expr.name(keys.SEQ)} BETWEEN {expr.value(n(seq))} AND {expr.value(n(seq + PACK_MAX - 1))}",
            "Limit": 1,
            **expr.params(),
        },
        limit=1,
    )
    return found[0] if found and is_pack(found[0]) and message_in(found[0], seq) is not None else None


def read_at(ctx: Context, part: str, seq: int) -> Plan[Item | None]:
    """Message `seq` of a partition (1 GetItem; + 1 Query inside a pack), or None."""
    item = yield from stored_at(ctx, part, seq)
    return message_in(item, seq)


def find_stored(ctx: Context, part: str, message_id: str) -> Plan[Item | None]:
    """The item that stores the message of a partition with id `message_id` (a pack, or the message's own),
    or None: 1 Query of the by_message_id index (the id, and for a packed id its pack's), then 1 GetItem of
    the earliest it names (again when the pack it named was unpacked in between: then its message has its own
    item, which a new look-up finds)."""
    stem = pack_stem(message_id)
    for _ in range(FIND_ATTEMPTS):
        expr = Expr()
        wanted = (
            f"{expr.name(keys.MID)} = {expr.value(s(message_id))}"
            if stem is None
            else f"{expr.name(keys.MID)} BETWEEN {expr.value(s(stem))} AND {expr.value(s(message_id))}"
        )
        hits = yield from query(
            {
                "TableName": ctx.messages_table,
                "IndexName": keys.BY_MESSAGE_ID,
                "ConsistentRead": True,
                "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(part))} AND {wanted}",
                **expr.params(),
            }
        )
        exact = [h for h in hits if h[keys.MID]["S"] == message_id]
        packs = [h for h in hits if h[keys.MID]["S"] == stem]
        for hit in [min(exact, key=_seq)] if exact else packs:
            item = yield from get_item(ctx.messages_table, {k: hit[k] for k in (keys.SID, keys.SEQ)})
            if message_with_id(item, message_id) is not None:
                return item
        if not packs:
            return None
    return None


FIND_ATTEMPTS = 3  # look-ups by id that met a pack being unpacked


def _seq(item: Item) -> int:
    return int(item[keys.SEQ]["N"])


def find(ctx: Context, part: str, message_id: str) -> Plan[Item | None]:
    """The message of a partition with id `message_id` (`find_stored`), or None."""
    item = yield from find_stored(ctx, part, message_id)
    return message_with_id(item, message_id)


def previous_compaction(ctx: Context, part: str, before: int) -> Plan[int | None]:
    """The sequence number of the latest compaction message before `before`, or None (reads newest first,
    COMPACTION_PAGE messages at a time; only a pop of the compaction marker, and a fork or rewind to before
    it, need this)."""
    hi = before - 1
    while hi >= 1:
        lo = max(1, hi - COMPACTION_PAGE + 1)
        items = yield from read_range(ctx, Span(part, lo, hi, newest_first=True))
        for item in items:
            if item.get("kind", {}).get("S") == "compaction":
                return int(item[keys.SEQ]["N"])
        hi = lo - 1
    return None


def put_new(ctx: Context, item: Item) -> dict[str, Any]:
    """The transaction Put of a message item, refused when its place in the partition is taken (a message
    is never overwritten)."""
    expr = Expr()
    return action("Put", ctx.messages_table, item, expr, condition=f"attribute_not_exists({expr.name(keys.SID)})")
