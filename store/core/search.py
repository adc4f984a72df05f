"""Text matching for `search`, shared by every backend: what text a message has, how a hit scores,
and its snippet."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from store.conversation import canonical
from store.core import cursor as cursors
from store.core.timeutil import iso
from store.errors import InvalidInput
from store.models import MessageRecord, SearchHits, Session, SessionHit

SNIPPET_CONTEXT = 60
TITLE_WEIGHT = 3.0


def message_text(record: MessageRecord) -> str:
    """The searchable text of a message: the words of its canonical view (text, reasoning, tool calls'
    names and arguments, tool results, file names), whatever framework wrote it; never JSON keys, ids,
    types or encoded data."""
    return canonical(record).text()


def match(text: str | None, query: str) -> tuple[int, str]:
    """(occurrences of `query` in `text`, case-insensitively; a snippet around the first one)."""
    if not text:
        return 0, ""
    folded = text.casefold()
    count = folded.count(query)
    if not count:
        return 0, ""
    at = folded.find(query)
    start, end = max(0, at - SNIPPET_CONTEXT), min(len(text), at + len(query) + SNIPPET_CONTEXT)
    snippet = ("…" if start else "") + text[start:end].replace("\n", " ") + ("…" if end < len(text) else "")
    return count, snippet


Ranked = tuple[float, str, int, SessionHit]


def session_hits(
    session: Session, messages: Iterable[MessageRecord], needle: str, *, title: bool = True
) -> list[Ranked]:
    """Hits in one session's title (unless `title` is False) and messages for a casefolded `needle`, with
    their ranking keys."""
    stamp = iso(session.updated_at)
    out: list[Ranked] = []
    count, snippet = match(session.title, needle) if title else (0, "")
    if count:
        score = count * TITLE_WEIGHT
        out.append(
            (score, stamp, 0, SessionHit(session_id=session.id, title=session.title, snippet=snippet, score=score))
        )
    for m in messages:
        count, snippet = match(message_text(m), needle)
        if count:
            out.append(
                (
                    float(count),
                    stamp,
                    m.seq,
                    SessionHit(
                        session_id=session.id, title=session.title, seq=m.seq, snippet=snippet, score=float(count)
                    ),
                )
            )
    return out


def rank(hits: list[Ranked], limit: int) -> list[SessionHit]:
    """The best `limit` hits: highest score, then most recently updated session, then latest message."""
    hits.sort(key=lambda h: h[:3], reverse=True)
    return [h[3] for h in hits[:limit]]


# ---------------------------------------------------------------- one bounded call, and its cursor


def sessions_cursor(owner: str, session: Session) -> str:
    """The `list_sessions` cursor that continues after `session` (most recently updated first)."""
    return cursors.encode("sessions", owner, {"g": f"{iso(session.updated_at)}#{session.id}", "i": session.id})


@dataclass(frozen=True)
class SearchStart:
    """Where a search call starts: first the rest of session `partial` (its messages below seq `below`),
    then the owner's sessions after `listing` (a `list_sessions` cursor; None: the newest)."""

    listing: str | None = None
    partial: str | None = None
    below: int = 0


def search_start(cursor: str | None, owner: str) -> SearchStart:
    """The start a search cursor names (InvalidInput when it is not this owner's search cursor)."""
    if cursor is None:
        return SearchStart()
    pos = cursors.decode(cursor, "search", owner)
    listing, partial, below = pos.get("l"), pos.get("p"), pos.get("b", 0)
    if not (listing is None or isinstance(listing, str)) or not (partial is None or isinstance(partial, str)):
        raise InvalidInput("cursor is malformed")
    if isinstance(below, bool) or not isinstance(below, int) or below < 0:
        raise InvalidInput("cursor is malformed")
    return SearchStart(listing, partial, below)


@dataclass(frozen=True)
class Reading:
    """Messages lo..hi (inclusive) of `session` to search, and whether its title is searched too."""

    session: Session
    lo: int
    hi: int
    title: bool


@dataclass(frozen=True)
class SessionToRead:
    """A session a call may read: its messages up to `hi`, and the listing cursor right after it."""

    session: Session
    hi: int
    title: bool
    after: str | None


def allot(
    owner: str, candidates: list[SessionToRead], rest: str | None, messages: int
) -> tuple[list[Reading], str | None]:
    """What one call reads of `candidates` (in order) within `messages` messages (at least 1), each
    session newest messages first, and the cursor of the next call: into the session cut short, after the
    last session read, or at `rest` (the listing's next page; None when there is none: the search is done)."""
    readings: list[Reading] = []
    left, after = messages, None
    for c in candidates:
        if left <= 0 and c.hi > 0:  # nothing left for this session: the next call starts at it
            return readings, cursors.encode("search", owner, {"l": after})
        take = min(c.hi, left)
        readings.append(Reading(c.session, c.hi - take + 1, c.hi, c.title))
        left, after = left - take, c.after
        if take < c.hi:  # cut short: the next call finishes it first
            return readings, cursors.encode("search", owner, {"l": c.after, "p": c.session.id, "b": c.hi - take + 1})
    return readings, None if rest is None else cursors.encode("search", owner, {"l": rest})


def results(hits: list[Ranked], limit: int, readings: list[Reading], next_cursor: str | None) -> SearchHits:
    """The call's best `limit` hits and how far it got."""
    return SearchHits(
        rank(hits, limit),
        next_cursor=next_cursor,
        sessions_searched=len(readings),
        messages_searched=sum(r.hi - r.lo + 1 for r in readings),
    )
