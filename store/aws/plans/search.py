"""The plan for search over an owner's sessions."""

from __future__ import annotations

from store.aws import keys
from store.aws.calls import Plan
from store.aws.items import head_from_item, record_from_item
from store.aws.plans.base import Context, batch_get
from store.aws.plans.messages import query_range
from store.aws.plans.payloads import resolve
from store.aws.plans.sessions import owner_index
from store.models import SessionHit
from store.requests import Search
from store.search import Ranked, rank, session_hits


def search(ctx: Context, request: Search) -> Plan[list[SessionHit]]:
    """Case-insensitive search of one owner's titles and message text. Reads are strongly consistent,
    so everything written before the call is seen. Cost: one Query of the owner index, one BatchGetItem
    per 100 sessions, one Query per 1 MB of each live session's transcript, and one S3 GET per spilled
    message."""
    owner, query, limit = request.owner, request.query, request.limit
    needle = query.casefold()
    ids = yield from owner_index(ctx, owner)
    heads = yield from batch_get(ctx, ctx.sessions_table, [keys.head_key(i) for i in ids])
    now = ctx.now()
    hits: list[Ranked] = []
    for item in heads:
        head = head_from_item(item)
        if head.live(now, owner):
            messages = yield from query_range(
                ctx, head.session.id, 1, head.session.last_seq, newest_first=False, limit=None
            )
            resolved = yield from resolve(ctx, messages)
            hits.extend(session_hits(head.session, (record_from_item(m) for m in resolved), needle))
    return rank(hits, limit)
