"""Reading a session's transcript: the messages in its partition of the messages table and, while a copy
into that partition is still going on (a long fork's or rewind's, docs/decisions.md "Fork and rewind"),
the messages not copied yet, read where they are copied from.

Whatever is in the session's own partition wins over a source (a message the session changed, or one a
source's writer copied over before changing its own); of the sources, the nearest wins. Sources are read
before the session's own partition: a source's messages are deleted only after the copy is complete, so
whatever a source no longer had by the time it was read, the session's partition has by the time it is
read after it. While no copy is going on, every read is the one Query or GetItem it always was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.aws import keys
from store.aws.attrs import Expr, Item, n, s
from store.aws.calls import Plan
from store.aws.items import Head, Seed
from store.aws.plans.base import Context, get_item, query


@dataclass(frozen=True)
class Transcript:
    """Where the messages of `session_id` are: its partition `part`, and the copy into it still going on."""

    session_id: str
    part: str
    seed: Seed | None = None

    @staticmethod
    def of(head: Head) -> Transcript:
        return Transcript(head.session.id, head.part, head.seed)

    def spans(self, lo: int, hi: int) -> list[tuple[str, int, int]]:
        """(partition, lo, hi) of the sources still to read for messages lo..hi, farthest first."""
        seed = self.seed
        if seed is None:
            return []
        out = []
        for source in reversed(seed.sources):
            a, b = max(lo, seed.done + 1), min(hi, seed.through, source.through)
            if a <= b:
                out.append((source.part, a, b))
        return out

    def pending(self, seq: int) -> bool:
        """True when message `seq` may not be in the session's own partition yet."""
        return bool(self.spans(seq, seq))


@dataclass(frozen=True)
class Located:
    """A message as the session reads it (`item`, its `sid` the session's partition), and whether it is
    stored in the session's own partition (False: it is still only where the session's copy reads it)."""

    item: Item
    own: bool


def as_own(transcript: Transcript, item: Item) -> Item:
    """`item` (read from a source) as a message of the session's own partition."""
    return {**item, keys.SID: s(transcript.part)}


def range_query(
    ctx: Context,
    part: str,
    lo: int,
    hi: int,
    *,
    newest_first: bool,
    limit: int | None,
    roles: frozenset[str] | None = None,
    keys_only: bool = False,
) -> dict[str, Any]:
    """The Query parameters (strongly consistent) of messages lo..hi of one partition, in either order, at
    most `limit` (of `roles` only, when given; only their keys with `keys_only`), for plans that run
    several at once."""
    expr = Expr()
    params: dict[str, Any] = {
        "TableName": ctx.messages_table,
        "ConsistentRead": True,
        "ScanIndexForward": not newest_first,
        "KeyConditionExpression": f"{expr.name(keys.SID)} = {expr.value(s(part))} AND "
        f"{expr.name(keys.SEQ)} BETWEEN {expr.value(n(lo))} AND {expr.value(n(hi))}",
    }
    if roles:
        params["FilterExpression"] = f"{expr.name('role')} IN ({', '.join(expr.value(s(r)) for r in sorted(roles))})"
    if limit is not None:
        params["Limit"] = limit
    if keys_only:
        params["ProjectionExpression"] = f"{expr.name(keys.SID)}, {expr.name(keys.SEQ)}"
    params.update(expr.params())
    return params


def query_range(
    ctx: Context,
    part: str,
    lo: int,
    hi: int,
    *,
    newest_first: bool,
    limit: int | None,
    roles: frozenset[str] | None = None,
) -> Plan[list[Item]]:
    """Messages lo..hi of one partition, in either order, at most `limit` (filtered by role if asked)."""
    if lo > hi:
        return []
    params = range_query(ctx, part, lo, hi, newest_first=newest_first, limit=limit, roles=roles)
    items: list[Item] = yield from query(params, limit=limit, growing=bool(roles))
    return items


def read_range(
    ctx: Context,
    transcript: Transcript,
    lo: int,
    hi: int,
    *,
    newest_first: bool,
    limit: int | None,
    roles: frozenset[str] | None = None,
) -> Plan[list[Item]]:
    """The session's messages lo..hi, in either order, at most `limit` (of `roles` only): one Query while no
    copy is going on; else one per source that still holds some of them, then one of its own partition."""
    if lo > hi:
        return []
    spans = transcript.spans(lo, hi)
    if not spans:
        own: list[Item] = yield from query_range(
            ctx, transcript.part, lo, hi, newest_first=newest_first, limit=limit, roles=roles
        )
        return own
    merged: dict[int, Item] = {}
    for part, a, b in spans:  # farthest first: nearer ones (and the session's own) override
        found = yield from query_range(ctx, part, a, b, newest_first=newest_first, limit=limit, roles=roles)
        merged.update((_seq(i), as_own(transcript, i)) for i in found)
    found = yield from query_range(ctx, transcript.part, lo, hi, newest_first=newest_first, limit=limit, roles=roles)
    merged.update((_seq(i), i) for i in found)
    ordered = sorted(merged.values(), key=_seq, reverse=newest_first)
    return ordered if limit is None else ordered[:limit]


def read_at(ctx: Context, transcript: Transcript, seq: int) -> Plan[Located | None]:
    """The session's message `seq` (None when there is none): 1 GetItem, and while it may not have been
    copied yet, first 1 GetItem per source that may hold it."""
    found: Located | None = None
    for part, _, _ in transcript.spans(seq, seq):
        item = yield from get_item(ctx.messages_table, keys.message_key(part, seq))
        if item is not None:
            found = Located(as_own(transcript, item), False)
    item = yield from get_item(ctx.messages_table, keys.message_key(transcript.part, seq))
    return Located(item, True) if item is not None else found


def find(ctx: Context, transcript: Transcript, message_id: str) -> Plan[Located | None]:
    """The session's message with id `message_id` (through the by_message_id index of each partition that
    may hold it, then by its key), or None."""
    seqs: list[int] = []
    seed = transcript.seed
    if seed is not None:
        for source in seed.sources:
            hits = yield from _by_id(ctx, source.part, message_id)
            seqs += [q for q in hits if transcript.pending(q) and q <= source.through]
    own = yield from _by_id(ctx, transcript.part, message_id)
    seqs += own
    if not seqs:
        return None
    found: Located | None = yield from read_at(ctx, transcript, min(seqs))
    return found


def _by_id(ctx: Context, part: str, message_id: str) -> Plan[list[int]]:
    """The sequence numbers under which a partition holds a message of that id."""
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
    return [int(h[keys.SEQ]["N"]) for h in hits]


def _seq(item: Item) -> int:
    return int(item[keys.SEQ]["N"])
