"""Windows and pages of a transcript, shared by every backend: which sequence numbers a listing covers,
and how a page and its cursor are cut."""

from __future__ import annotations

from store import cursor as cursors
from store.errors import InvalidInput
from store.models import MessageRecord, Page

MAX_SEQ = 2**53


def message_window(
    session_id: str,
    after_seq: int | None,
    before_seq: int | None,
    compaction_seq: int | None,
    cursor: str | None,
    newest_first: bool,
) -> tuple[int, int]:
    """(lo, hi), the inclusive sequence numbers a listing covers: after `after_seq`, before `before_seq`,
    from `compaction_seq` (when listing since the latest compaction) and past the cursor's position."""
    lo = 1 if after_seq is None else after_seq + 1
    hi = MAX_SEQ if before_seq is None else before_seq - 1
    if compaction_seq is not None:
        lo = max(lo, compaction_seq)
    if cursor is not None:
        pos = cursors.decode(cursor, "messages", session_id)
        if pos.get("d") != newest_first or not isinstance(pos.get("q"), int):
            raise InvalidInput("cursor was made for the other direction")
        if newest_first:
            hi = min(hi, pos["q"] - 1)
        else:
            lo = max(lo, pos["q"] + 1)
    return lo, hi


def message_page(
    session_id: str, found: list[MessageRecord], limit: int | None, newest_first: bool
) -> Page[MessageRecord]:
    """A page of at most `limit` records from `found` (which holds up to limit + 1, in listing order);
    the cursor is set only when more records follow."""
    if limit is None or len(found) <= limit:
        return Page[MessageRecord](items=found)
    page = found[:limit]
    return Page[MessageRecord](
        items=page, next_cursor=cursors.encode("messages", session_id, {"q": page[-1].seq, "d": newest_first})
    )
