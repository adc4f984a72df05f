"""Windows and pages of a transcript, shared by every backend: which sequence numbers a listing covers,
and how a page and its cursor are cut."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from store.core import cursor as cursors
from store.errors import InvalidInput
from store.models import Branch, Branches, MessageRecord, Page

MAX_SEQ = 2**53


@dataclass(frozen=True)
class SessionQuery:
    """A validated `list_sessions` request (after the owner)."""

    limit: int = 50
    cursor: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: dict[str, str] = field(default_factory=dict)  # key -> canonical JSON of the wanted value
    conversations_only: bool = False  # leave out the sessions adapters keep for themselves


def cursor_scope(session_id: str, branch: str | None) -> str:
    """What a listing's cursors are bound to: the session, or one branch of it."""
    return session_id if branch is None else f"{session_id}/{branch}"


@dataclass(frozen=True)
class MessageQuery:
    """A validated `list_messages` request (after the session)."""

    after_seq: int | None = None
    before_seq: int | None = None
    limit: int | None = None
    newest_first: bool = False
    since_compaction: bool = False
    roles: frozenset[str] | None = None
    cursor: str | None = None

    @property
    def fetch(self) -> int | None:
        """How many records to fetch: one more than a page, to know whether another page follows."""
        return None if self.limit is None else self.limit + 1

    def window(self, session_id: str, compaction_seq: int | None) -> tuple[int, int]:
        """(lo, hi), the inclusive sequence numbers this listing covers: after `after_seq`, before
        `before_seq`, from the latest compaction when asked, and past the cursor's position."""
        lo = 1 if self.after_seq is None else self.after_seq + 1
        hi = MAX_SEQ if self.before_seq is None else self.before_seq - 1
        if self.since_compaction and compaction_seq is not None:
            lo = max(lo, compaction_seq)
        if self.cursor is not None:
            pos = cursors.decode(self.cursor, "messages", session_id)
            if pos.get("d") != self.newest_first or not isinstance(pos.get("q"), int):
                raise InvalidInput("cursor was made for the other direction")
            if self.newest_first:
                hi = min(hi, pos["q"] - 1)
            else:
                lo = max(lo, pos["q"] + 1)
        return lo, hi

    def page(self, session_id: str, found: list[MessageRecord]) -> Page[MessageRecord]:
        """A page of at most `limit` records from `found` (up to `fetch` records, in listing order);
        the cursor is set only when more records follow."""
        if self.limit is None or len(found) <= self.limit:
            return Page[MessageRecord](items=found)
        page = found[: self.limit]
        position = {"q": page[-1].seq, "d": self.newest_first}
        return Page[MessageRecord](items=page, next_cursor=cursors.encode("messages", session_id, position))


def branch_page(session_id: str, branches: list[Branch], limit: int, cursor: str | None) -> Branches:
    """A page of a session's branches (all of them given, at most `rules.MAX_BRANCHES`), oldest first: at most
    `limit` after the cursor's branch, with a cursor when more follow."""
    ordered = sorted(branches, key=lambda b: (b.created_at, b.id))
    if cursor is not None:
        after = cursors.decode(cursor, "branches", session_id)
        if not isinstance(after.get("t"), str) or not isinstance(after.get("i"), str):
            raise InvalidInput("cursor is not a cursor of this listing")
        ordered = [b for b in ordered if (b.created_at.isoformat(), b.id) > (after["t"], after["i"])]
    page = ordered[:limit]
    if len(ordered) <= limit:
        return Branches(page)
    last = page[-1]
    return Branches(
        page, next_cursor=cursors.encode("branches", session_id, {"t": last.created_at.isoformat(), "i": last.id})
    )
