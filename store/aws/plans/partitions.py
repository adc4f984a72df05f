"""Reading a transcript: the messages of one partition of the messages table (a session's is its head's
`part`, the session id's own until a rewind moves it), by sequence number or by message id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, action, n, s
from store.aws.calls import Plan
from store.aws.plans.base import Context, get_item, query

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

    def query(self, ctx: Context, *, keys_only: bool = False) -> dict[str, Any]:
        """The Query parameters (strongly consistent) of the span (only the messages' keys with
        `keys_only`), for plans that run several at once."""
        expr = Expr()
        params: dict[str, Any] = {
            "TableName": ctx.messages_table,
            "ConsistentRead": True,
            "ScanIndexForward": not self.newest_first,
            "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(self.part))} AND "
            f"{expr.name(keys.SEQ)} BETWEEN {expr.value(n(self.lo))} AND {expr.value(n(self.hi))}",
        }
        if self.roles:
            allowed = ", ".join(expr.value(s(r)) for r in sorted(self.roles))
            params["FilterExpression"] = f"{expr.name('role')} IN ({allowed})"
        if self.limit is not None:
            params["Limit"] = self.limit
        if keys_only:
            params["ProjectionExpression"] = f"{expr.name(keys.SID)}, {expr.name(keys.SEQ)}"
        params.update(expr.params())
        return params


def read_range(ctx: Context, span: Span) -> Plan[list[Item]]:
    """The span's messages: one Query per 1 MB page (a filtered one reads growing pages until it has
    `limit`)."""
    if span.lo > span.hi:
        return []
    items: list[Item] = yield from query(span.query(ctx), limit=span.limit, growing=bool(span.roles))
    return items


def read_at(ctx: Context, part: str, seq: int) -> Plan[Item | None]:
    """Message `seq` of a partition (1 GetItem), or None."""
    item: Item | None = yield from get_item(ctx.messages_table, keys.message_key(part, seq))
    return item


def find(ctx: Context, part: str, message_id: str) -> Plan[Item | None]:
    """The message of a partition with id `message_id` (1 Query of the by_message_id index, then 1 GetItem of
    the earliest it names), or None."""
    expr = Expr()
    hits = yield from query(
        {
            "TableName": ctx.messages_table,
            "IndexName": keys.BY_MESSAGE_ID,
            "ConsistentRead": True,
            "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(part))} AND "
            f"{expr.name(keys.MID)} = {expr.value(s(message_id))}",
            **expr.params(),
        }
    )
    if not hits:
        return None
    found: Item | None = yield from read_at(ctx, part, min(int(h[keys.SEQ]["N"]) for h in hits))
    return found


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
