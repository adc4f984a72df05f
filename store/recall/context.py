"""The context for a model's next turn (`SessionStore.context`): a flow of a bounded number of the store's
operations, whatever the session's length, and the choice of what fits (`assemble`, no I/O).

The reads: the session (one), its newest RECENT_READ messages (one query), its running summary (one read: the
summary strategy's memory, when there is one), the session's messages that match the query (the message
index: the head and one or two vector searches) and the owner's memories that match it (one or two vector
searches): six to eight requests on DynamoDB at 100 messages or 100,000.

The choice, under the budget less what the headings cost: the newest message (cut to half the budget if it is
longer); more of the recent window, newest first, up to RECENT_SHARE of the budget; the summary, up to
SUMMARY_SHARE (cut to fit); then the recalled messages (each scored with the messages beside it:
`in_conversation`) and the memories that match the question at least MIN_SCORE, best first, each once (not
a message already shown, not a memory whose source messages are all shown): nothing merely fills room; what
is left goes to the recent window again. A part that does not fit whole is left out (the newest message and
the summary are cut)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store.calls import CALLS
from store.conversation.preview import spoken
from store.core.steps import ask
from store.errors import InvalidInput, SessionNotFound
from store.extraction.steps import Flow
from store.models import ContextPart, MemoryHit, MessageHit, MessageRecord, Session, TurnContext
from store.recall import rendering as r
from store.recall.tokens import METHOD, count_tokens, cut_to

RECENT_READ = 50  # the newest messages read: the recent window is chosen among them
SEARCHED_MESSAGES = 100  # of the session's messages the query recalls, at most
SEARCHED_MEMORIES = 20  # of the owner's memories the query recalls, at most
RECENT_SHARE = 0.15  # of the budget the recent window takes before anything is recalled
SUMMARY_SHARE = 0.15  # of the budget the summary takes at most
MIN_SCORE = 0.1  # a recalled message or memory matches the question at least this well (hybrid: 0 to 1.5, a
# recalled message up to NEIGHBOUR_SHARE times that more: `in_conversation`)
NEIGHBOUR_REACH = 2  # a recalled message is scored with the messages this close to it (by sequence number)
NEIGHBOUR_SHARE = 0.5  # of the best score among them that it gains
MIN_BUDGET = 64  # tokens: less holds no message with its heading
MAX_BUDGET = 200_000
SUMMARY_NAMESPACE = "sessions"  # the summary strategy's: ("sessions", session id), key SUMMARY_KEY
SUMMARY_KEY = "summary"


@dataclass
class Found:
    """What the flow read, for `assemble`."""

    session: Session
    recent: list[MessageRecord]  # newest first
    query: str | None
    summary: MemoryHit | None = None
    messages: list[MessageHit] = field(default_factory=list)
    memories: list[MemoryHit] = field(default_factory=list)


def query_of(recent: Sequence[MessageRecord]) -> str | None:
    """The default query: the newest user message's words (`TurnContext.question`)."""
    for record in recent:
        role, words = spoken(record)
        if role == "user" and record.kind == "message" and words.strip():
            return TurnContext.question(words)
    return None


def _message_part(record: MessageRecord, *, recent: bool, limit: int | None = None) -> ContextPart | None:
    role, words = spoken(record)
    if record.kind != "message" or role == "system" or not words:
        return None
    text = cut_to(words, limit) if limit is not None else words
    return ContextPart(
        kind="message",
        text=text,
        tokens=r.cost("message", text, role),
        role=role,
        session_id=record.session_id,
        seqs=[record.seq],
        recent=recent,
    )


def _sources(value: dict[str, Any]) -> tuple[str | None, list[int]]:
    given = value.get("source")
    source: dict[str, Any] = given if isinstance(given, dict) else {}
    sid = source.get("session_id") if isinstance(source.get("session_id"), str) else None
    seqs = [s for s in source.get("seqs") or [] if isinstance(s, int) and not isinstance(s, bool)]
    return sid, seqs


def _memory_part(hit: MemoryHit) -> ContextPart | None:
    text = hit.value.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    sid, seqs = _sources(hit.value)
    words = " ".join(text.split())
    return ContextPart(
        kind="memory",
        text=words,
        tokens=r.cost("memory", words),
        session_id=sid,
        seqs=seqs,
        namespace=hit.namespace,
        key=hit.key,
        score=hit.score,
    )


def _recalled_part(hit: MessageHit) -> ContextPart:
    return ContextPart(
        kind="message",
        text=hit.text,
        tokens=r.cost("message", hit.text, hit.role),
        role=hit.role,
        session_id=hit.session_id,
        seqs=[hit.seq],
        score=hit.score,
    )


def _covered(seqs: list[int], value: dict[str, Any]) -> list[int]:
    """The first and last message a running summary covers ([] when it names none; `seqs`: its own source's):
    the summary strategy folds each range into the summary so far, so it covers from the first range it kept
    (its oldest version, in its `history`) to the last (its own `source`)."""
    history = [h for h in value.get("history") or [] if isinstance(h, dict)]
    earlier = [s for h in history for s in _sources(h)[1]]
    return [min(seqs + earlier), max(seqs)] if seqs else []


def _summary_part(hit: MemoryHit, before: int, limit: int) -> ContextPart | None:
    """The summary, if it covers messages before the recent window (`before`: its first shown seq)."""
    text = hit.value.get("text")
    sid, seqs = _sources(hit.value)
    covered = _covered(seqs, hit.value)
    if not isinstance(text, str) or not text.strip() or limit <= 0 or (covered and covered[0] >= before):
        return None
    cut = cut_to(" ".join(text.split()), limit)
    if not cut:
        return None
    return ContextPart(
        kind="summary",
        text=cut,
        tokens=r.cost("summary", cut),
        session_id=sid,
        seqs=covered,
        namespace=hit.namespace,
        key=hit.key,
    )


@dataclass
class _Fill:
    """What a context holds so far: the room the budget leaves, the tokens used, the messages shown."""

    room: int
    used: int = 0
    shown: set[int] = field(default_factory=set)

    def fits(self, part: ContextPart, limit: float | None = None) -> bool:
        return self.used + part.tokens <= (self.room if limit is None else limit)

    def take(self, part: ContextPart, into: list[ContextPart]) -> None:
        self.used += part.tokens
        into.append(part)
        if part.kind == "message":
            self.shown.add(part.seqs[0])


def _recent_window(found: Found, fill: _Fill) -> tuple[list[ContextPart], list[ContextPart]]:
    """The newest message (cut to half the room) and the recent window up to RECENT_SHARE; and the window's
    messages left over, newest first."""
    recent: list[ContextPart] = []
    candidates = [p for p in (_message_part(x, recent=True) for x in found.recent) if p is not None]
    if candidates:
        newest = next(x for x in found.recent if x.seq == candidates[0].seqs[0])
        first = _message_part(newest, recent=True, limit=fill.room // 2)
        if first is not None and first.text and first.tokens <= fill.room:
            fill.take(first, recent)
    rest = candidates[1:]
    while rest and fill.fits(rest[0], max(fill.room * RECENT_SHARE, 0)):
        fill.take(rest.pop(0), recent)
    return recent, rest


def in_conversation(hits: Sequence[MessageHit], shown: set[int]) -> list[MessageHit]:
    """Each recalled message scored with the conversation around it: its own score plus NEIGHBOUR_SHARE of the
    best among the recalled messages within NEIGHBOUR_REACH of it that are not `shown` already (an answer sits
    beside the question that matched, an event beside the turn that names it; the question itself, shown as
    the newest message, pulls in nothing); a message without a score keeps none."""
    by_seq = {h.seq: h.score for h in hits if h.score is not None and h.seq not in shown}
    reach = [d for d in range(-NEIGHBOUR_REACH, NEIGHBOUR_REACH + 1) if d]
    scored = []
    for hit in hits:
        if hit.score is None:
            scored.append(hit)
            continue
        near = max(by_seq.get(hit.seq + d, 0.0) for d in reach)
        scored.append(hit.model_copy(update={"score": hit.score + NEIGHBOUR_SHARE * near}))
    return scored


def _pool(found: Found, shown: set[int]) -> list[ContextPart]:
    """The recalled messages not shown (scored `in_conversation`) and the memories (the summary aside) that
    match at least MIN_SCORE, best first."""
    pool: list[ContextPart] = [_recalled_part(h) for h in in_conversation(found.messages, shown) if h.seq not in shown]
    summary_at = ((SUMMARY_NAMESPACE, found.session.id), SUMMARY_KEY)
    pool += [p for p in (_memory_part(h) for h in found.memories if (h.namespace, h.key) != summary_at) if p]
    pool = [p for p in pool if p.score is not None and p.score >= MIN_SCORE]  # nothing that merely fills room
    pool.sort(key=lambda p: -(p.score if p.score is not None else float("-inf")))
    return pool


def _recalled(found: Found, fill: _Fill) -> tuple[list[ContextPart], list[ContextPart]]:
    """The recalled messages and memories that fit, each once (a memory extracted from messages all shown
    left out)."""
    recalled: list[ContextPart] = []
    memories: list[ContextPart] = []
    for part in _pool(found, fill.shown):
        if part.kind == "message" and part.seqs[0] in fill.shown:
            continue
        own = part.session_id == found.session.id
        if part.kind == "memory" and own and part.seqs and set(part.seqs) <= fill.shown:
            continue  # extracted from messages already shown
        if fill.fits(part):
            fill.take(part, recalled if part.kind == "message" else memories)
    return recalled, memories


def assemble(found: Found, budget: int) -> TurnContext:
    """The parts that fit in `budget` (see the module docstring), in the order a model reads them."""
    fill = _Fill(room=budget - r.HEADING_TOKENS)
    recent, rest = _recent_window(found, fill)
    summary = None
    if found.summary is not None:
        oldest = min(fill.shown) if fill.shown else found.session.last_seq + 1
        summary = _summary_part(found.summary, oldest, min(int(fill.room * SUMMARY_SHARE), fill.room - fill.used))
        fill.used += summary.tokens if summary is not None else 0
    recalled, memories = _recalled(found, fill)
    for part in rest:  # what is left goes to the recent window
        if part.seqs[0] in fill.shown or not fill.fits(part):
            break
        fill.take(part, recent)
    headings = sum(
        count_tokens(h) for h, present in zip(r.HEADINGS, (summary, memories, recalled, recent), strict=True) if present
    )
    return TurnContext(
        session_id=found.session.id,
        owner=found.session.owner,
        last_seq=found.session.last_seq,
        query=found.query,
        budget_tokens=budget,
        used_tokens=fill.used + headings,
        token_counting=METHOD,
        summary=summary,
        recent=sorted(recent, key=lambda p: p.seqs[0]),
        recalled=sorted(recalled, key=lambda p: p.seqs[0]),
        memories=memories,
    )


def context_flow(
    session_id: str,
    query: str | None,
    budget: int,
    owner: str | None,
    namespace_prefix: tuple[str, ...],
    memories: bool,
) -> Flow[TurnContext]:
    """The reads (see the module docstring), then `assemble`."""
    session = yield from ask(CALLS.get_session, session_id, owner=owner)
    if session is None:
        raise SessionNotFound(session_id)
    page = yield from ask(CALLS.list_messages, session_id, newest_first=True, limit=RECENT_READ, owner=owner)
    asked = query if query is not None else query_of(page.items)
    found = Found(session=session, recent=list(page.items), query=asked)
    summary_ns = (SUMMARY_NAMESPACE, session_id)
    try:
        summary = yield from ask(CALLS.get_memory, session.owner, summary_ns, SUMMARY_KEY)
        found.summary = MemoryHit(**summary.model_dump()) if summary is not None else None
    except InvalidInput:  # no memories table, or an id that is no namespace label: no summary
        found.summary = None
    if asked is not None:
        try:
            hits = yield from ask(
                CALLS.search_session_messages, session_id, asked, limit=SEARCHED_MESSAGES, owner=session.owner
            )
            found.messages = list(hits.items)
        except InvalidInput:  # a store without long-term memory keeps no message index
            found.messages = []
        if memories:
            try:
                recalled = yield from ask(
                    CALLS.search_memories, session.owner, namespace_prefix, query=asked, limit=SEARCHED_MEMORIES
                )
                found.memories = list(recalled.items)
            except InvalidInput:  # a store without long-term memory
                found.memories = []
    return assemble(found, budget)
