"""The plan for search over an owner's sessions: one bounded call, newest sessions first."""

from __future__ import annotations

from store.aws import keys
from store.aws.attrs import Item
from store.aws.calls import Call, Parallel, Plan
from store.aws.items import Head, head_from_item, record_from_item
from store.aws.plans.base import Context, get_item, query
from store.aws.plans.partitions import Span
from store.aws.plans.payloads import resolve
from store.aws.plans.sessions import list_heads
from store.core.paging import SessionQuery
from store.core.search import (
    Ranked,
    Reading,
    SearchStart,
    SessionToRead,
    allot,
    results,
    search_start,
    session_hits,
    sessions_cursor,
)
from store.models import SearchHits
from store.requests import ListSessions, Search


def search(ctx: Context, request: Search) -> Plan[SearchHits]:
    """Case-insensitive search of one owner's titles and message text, bounded per call: the rest of the
    session the cursor was cut in (1 GetItem of its head), then up to `settings.search_sessions` sessions
    newest first (1 Query of the by_owner index), reading at most `settings.search_messages` messages,
    each session's newest first (1 Query per session, all at once; + 1 per 1 MB beyond the first page;
    + 1 S3 GET per spilled message). Messages are read strongly consistently; the listing, through the
    index, is eventually consistent (a session updated in the last moment may be found at its old place).
    A session whose transcript is still being copied in is found by its title only."""
    owner, needle, settings = request.owner, request.query.casefold(), ctx.settings
    start = search_start(request.cursor, owner)
    candidates, where, listing_cursor = yield from _sessions_to_read(ctx, owner, start)
    readings, next_cursor = allot(owner, candidates, listing_cursor, settings.search_messages)
    by_session = yield from _read(ctx, readings, where)
    hits: list[Ranked] = []
    for reading in readings:
        resolved = yield from resolve(ctx, by_session.get(reading.session.id, []))
        messages = (record_from_item(m) for m in resolved)
        hits.extend(session_hits(reading.session, messages, needle, title=reading.title))
    return results(hits, request.limit, readings, next_cursor)


def _sessions_to_read(
    ctx: Context, owner: str, start: SearchStart
) -> Plan[tuple[list[SessionToRead], dict[str, Head], str | None]]:
    """The sessions a call may read, in order: the rest of the one the cursor was cut in (while it is live),
    then a page of the owner's newest; their heads by id; the listing's next cursor."""
    candidates: list[SessionToRead] = []
    where: dict[str, Head] = {}
    if start.partial is not None and start.below > 1:
        item = yield from get_item(ctx.sessions_table, keys.head_key(start.partial))
        head = head_from_item(item) if item is not None else None
        if head is not None and head.live(ctx.now(), owner):
            candidates.append(SessionToRead(head.session, start.below - 1, False, start.listing))
            where[head.session.id] = head
    wanted = SessionQuery(limit=max(1, ctx.settings.search_sessions - len(candidates)), cursor=start.listing)
    heads, listing_cursor = yield from list_heads(ctx, ListSessions(owner=owner, query=wanted))
    candidates += [SessionToRead(h.session, h.session.last_seq, True, sessions_cursor(owner, h.session)) for h in heads]
    where.update((h.session.id, h) for h in heads)
    return candidates, where, listing_cursor


def _read(ctx: Context, readings: list[Reading], where: dict[str, Head]) -> Plan[dict[str, list[Item]]]:
    """Each reading's messages (newest first), the sessions' first pages all at once, then what a 1 MB page
    left out; a session still being copied in is read by its title only (no messages)."""
    spans = [
        (r, Span(where[r.session.id].part, r.lo, r.hi, newest_first=True, limit=r.hi - r.lo + 1))
        for r in readings
        if r.hi >= r.lo and where[r.session.id].seed is None
    ]
    ranges = [(reading, span.reader(), span.query(ctx)) for reading, span in spans]
    responses = yield Parallel(tuple(Call("query", params) for _, _, params in ranges))
    by_session: dict[str, list[Item]] = {}
    for (reading, read, params), resp in zip(ranges, responses, strict=True):
        items: list[Item] = [m for i in resp.get("Items", []) for m in read(i)]
        wanted_items = reading.hi - reading.lo + 1
        if resp.get("LastEvaluatedKey") and len(items) < wanted_items:  # a page of 1 MB did not hold them
            more = yield from query(
                {**params, "ExclusiveStartKey": resp["LastEvaluatedKey"]},
                limit=wanted_items - len(items),
                expand=read,
            )
            items += more
        by_session[reading.session.id] = items
    return by_session
