"""Public data models (pydantic v2). Field names are part of the contract; every model round-trips
through JSON (`Model.model_validate_json(m.model_dump_json()) == m`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictStr, model_validator

from store.recall import rendering

T = TypeVar("T")

MessageKind = Literal["message", "compaction"]
CheckpointScope = Literal["session", "run", "workflow"]

_USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens", "cost")


class TokenUsage(BaseModel):
    """Token counts and cost of one model call, or a session's totals (which add field by field)."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost: float | None = None

    @model_validator(mode="after")
    def _derive_total(self) -> TokenUsage:
        """`total_tokens`, when not reported, is input plus output (when either is known): a call that
        reports only its parts still counts in every total, and totals add up field by field."""
        if self.total_tokens is None and (self.input_tokens is not None or self.output_tokens is not None):
            self.total_tokens = (self.input_tokens or 0) + (self.output_tokens or 0)
        return self

    @staticmethod
    def fields() -> tuple[str, ...]:
        """The numeric fields, in a fixed order."""
        return _USAGE_FIELDS

    def numbers(self) -> dict[str, int | float]:
        """The fields that are set."""
        return {f: v for f in _USAGE_FIELDS if (v := getattr(self, f)) is not None}

    def plus(self, other: TokenUsage | None, *, minus: TokenUsage | None = None) -> TokenUsage:
        """`self + other - minus`, field by field, in decimal arithmetic (as DynamoDB's ADD does), so
        every backend arrives at the same totals. A field stays None only when no operand sets it."""
        out: dict[str, int | float | None] = {}
        for f in _USAGE_FIELDS:
            vals = [getattr(u, f) if u is not None else None for u in (self, other, minus)]
            if all(v is None for v in vals):
                out[f] = None
                continue
            a, b, c = (Decimal(str(v)) if v is not None else Decimal(0) for v in vals)
            total = a + b - c
            out[f] = float(total) if f == "cost" else int(total)
        return TokenUsage.model_validate(out)


class Message(BaseModel):
    """What callers append. `content` is a string or any JSON (OpenAI, Anthropic, Bedrock Converse and
    Strands shapes all fit); fields this model does not name are kept and returned unchanged."""

    model_config = ConfigDict(extra="allow")

    role: StrictStr = Field(min_length=1, max_length=64)
    content: Any = None
    id: StrictStr | None = None
    name: StrictStr | None = None
    tool_call_id: StrictStr | None = None
    metadata: dict[str, Any] | None = None
    usage: TokenUsage | None = None

    def body(self) -> dict[str, Any]:
        """What is stored as the message body: every field but the role, id, usage and record fields
        (unset optional fields are left out; unknown fields are kept exactly). Python-mode values, so
        the codec's strict JSON encoder refuses what is not JSON (NaN, sets, bytes) instead of it being
        converted silently."""
        body = self.model_dump(exclude=_NOT_BODY)
        for key in ("content", "name", "tool_call_id", "metadata"):
            if body.get(key) is None:
                body.pop(key, None)
        return body


_NOT_BODY = {"id", "usage", "role", "seq", "session_id", "created_at", "kind"}


class MessageRecord(Message):
    """A stored message: the message plus its place in the transcript."""

    id: str
    seq: int
    session_id: str
    created_at: datetime
    kind: MessageKind = "message"


class Session(BaseModel):
    """A session's head: who owns it, what it is, where its transcript stands, and its usage totals.
    In JSON, `retention` is a number of seconds (ISO 8601 durations with years are ambiguous)."""

    model_config = ConfigDict(ser_json_timedelta="float")

    id: str
    owner: str
    title: str | None = None
    model: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    last_seq: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    expires_at: datetime | None = None
    retention: timedelta | None = None
    state_version: int = 0
    compaction_seq: int | None = None
    preview: str | None = None  # the start of the first user message: what a session without a title shows
    # True while a fork's (or a rewind's) transcript is still being copied in (docs/decisions.md, "Fork and
    # rewind"): the session can be looked at (`get_session`, listings) and deleted, and every other call on it
    # is a retryable Conflict until the copy is over; `copied` is how many of its `last_seq` messages are in
    copying: bool = False
    copied: int | None = None


class Branch(BaseModel):
    """A line of a session's transcript kept aside by `rewind_session` (or by `restore_branch`, which keeps
    the line it replaces): the whole transcript as it was, messages 1..`last_seq`, of which those after
    `from_seq` are its own (the session went on from `from_seq` without them). `restore_branch` makes it
    the session's transcript again."""

    id: str
    session_id: str
    from_seq: int
    last_seq: int
    created_at: datetime
    usage: TokenUsage = Field(default_factory=TokenUsage)  # the totals of its messages
    preview: str | None = None  # the start of its first user message after `from_seq`


class Page(BaseModel, Generic[T]):
    """One page of results; `next_cursor` is None on the last page."""

    items: list[T]
    next_cursor: str | None = None


class StateSnapshot(BaseModel):
    """A version of a session's state, and the last message sequence number it saw."""

    version: int
    state: Any
    seq: int
    saved_at: datetime | None = None


class FullSession(BaseModel):
    """A session, its transcript and its state, as of one instant."""

    session: Session
    messages: list[MessageRecord]
    state: StateSnapshot | None = None
    states: dict[str, StateSnapshot | None] = Field(default_factory=dict)  # `with_states`: by session id
    sessions: dict[str, Session | None] = Field(default_factory=dict)  # `with_states`: the sessions themselves


class Checkpoint(BaseModel):
    """A hot checkpoint. `seq` is the session's last sequence number at save (session scope only):
    a checkpoint points into the transcript rather than copying it."""

    scope: CheckpointScope
    key: str
    data: Any
    saved_at: datetime
    expires_at: datetime
    seq: int | None = None


class SessionHit(BaseModel):
    """A search result: a session whose title (seq None) or message (seq set) matched."""

    session_id: str
    title: str | None = None
    seq: int | None = None
    snippet: str
    score: float


class SearchHits(list[SessionHit]):
    """One call's search results, best first (a list of `SessionHit`), and how far the call got: it read
    `sessions_searched` sessions (newest first) and `messages_searched` messages; `next_cursor`, when set,
    continues into older sessions (`search(..., cursor=hits.next_cursor)`), None when every session was read."""

    def __init__(
        self,
        hits: list[SessionHit] | None = None,
        *,
        next_cursor: str | None = None,
        sessions_searched: int = 0,
        messages_searched: int = 0,
    ) -> None:
        super().__init__(hits or [])
        self.next_cursor = next_cursor
        self.sessions_searched = sessions_searched
        self.messages_searched = messages_searched


class SearchPage(BaseModel):
    """`SearchHits` as a model (for an answer's schema): the hits, best first, and how far the call got."""

    items: list[SessionHit]
    next_cursor: str | None = None
    sessions_searched: int = 0
    messages_searched: int = 0

    @classmethod
    def of(cls, found: SearchHits) -> Self:
        """The page `found` is."""
        return cls(
            items=list(found),
            next_cursor=found.next_cursor,
            sessions_searched=found.sessions_searched,
            messages_searched=found.messages_searched,
        )


class Branches(list[Branch]):
    """One page of a session's branches, oldest first (a list of `Branch`); `next_cursor`, when set, continues
    with the next page (`list_branches(..., cursor=branches.next_cursor)`), None on the last."""

    def __init__(self, branches: list[Branch] | None = None, *, next_cursor: str | None = None) -> None:
        super().__init__(branches or [])
        self.next_cursor = next_cursor


class ArtifactVersion(BaseModel):
    """One stored version of a named artifact (versions count 1, 2, 3, ... per name)."""

    session_id: str
    name: str
    version: int
    size: int
    sha256: str
    content_type: str
    metadata: dict[str, str] = Field(default_factory=dict)
    created_at: datetime


class PresignedUpload(BaseModel):
    """A presigned PUT: upload the bytes to `url` once, sending exactly `headers` (they are signed: the
    content type, the condition that the upload does not exist yet, and the declared size and SHA-256
    when given), before `expires_at`; then confirm with `confirm_artifact_upload(session_id, name,
    upload_id)` to make them a version. At most `max_size` bytes are accepted."""

    url: str
    upload_id: str
    session_id: str
    name: str
    expires_at: datetime
    headers: dict[str, str] = Field(default_factory=dict)
    max_size: int = 0
    size: int | None = None
    sha256: str | None = None


class MemoryItem(BaseModel):
    """A memory of an owner: its namespace (a tuple of labels), key and value (a JSON object); when it was
    made and last put, and when it expires (None: never)."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None


class MemoryHit(MemoryItem):
    """A memory a search found, and how well it matched: higher is better, whatever the distance function
    (cosine similarity for meaning, the share of the query's words for keywords); None when the search had
    no query."""

    score: float | None = None


class MessageHit(BaseModel):
    """A session's message that a message search found: which session and where in it (`seq`), who said it
    (`role`, as the conversation view shows it), the words the index holds (`text`: what a person would read,
    tool calls and results included), and how well it matched (higher is better)."""

    session_id: str
    seq: int
    role: str
    text: str
    score: float | None = None


class MessageHits(Page[MessageHit]):
    """A page of a message search, best first, and the mode it ran in (as `MemoryHits.mode`)."""

    mode: Literal["semantic", "keyword", "hybrid"] | None = None


class MessageIndexState(BaseModel):
    """Where a session's message index stands: whose session it is, its last message (`last_seq`) and the last
    one the index holds (`indexed_seq`: every message up to it is indexed), and whether the owner has it on."""

    session_id: str
    owner: str
    last_seq: int
    indexed_seq: int
    indexed_id: str = ""  # the id of message `indexed_seq` when it was indexed (a changed transcript shows)
    enabled: bool = True


class ContextPart(BaseModel):
    """One piece of a turn's context, with its provenance and its cost: a `message` of the session (`role`, its
    `seqs` one sequence number; `recent` when it is of the recent window, else recalled by the query), the
    session's running `summary` (`seqs` the first and last message it covers) or an owner's `memory`
    (`namespace` and `key`; `seqs` the messages it was extracted from, when its source names them). `tokens`
    is what it costs as rendered (`store.recall.tokens`); `score` how well it matched the query (a recalled
    message's with a share of the messages' beside it: `store.recall.context.in_conversation`)."""

    kind: Literal["summary", "message", "memory"]
    text: str
    tokens: int
    role: str | None = None
    session_id: str | None = None
    seqs: list[int] = Field(default_factory=list)
    namespace: tuple[str, ...] | None = None
    key: str | None = None
    score: float | None = None
    recent: bool = False


class TurnContext(BaseModel):
    """What a model should see for its next turn in a session, never over `budget_tokens`: the session's
    running `summary` (None without one), the `recent` messages that fit (oldest first), the older messages of
    the session (`recalled`, oldest first) and the owner's `memories` (best first) that matter to `query`
    (the last user message unless one was given), each once. `used_tokens` is what the rendering costs
    (`as_text`; `token_counting` says how tokens are counted)."""

    session_id: str
    owner: str
    last_seq: int = 0  # the session's last message when the context was assembled
    query: str | None = None
    budget_tokens: int
    used_tokens: int
    token_counting: str
    summary: ContextPart | None = None
    recent: list[ContextPart] = Field(default_factory=list)
    recalled: list[ContextPart] = Field(default_factory=list)
    memories: list[ContextPart] = Field(default_factory=list)

    @property
    def window_start(self) -> int:
        """The sequence number of the oldest recent message (past the last message when none is recent): what
        a framework keeps of its own messages, from there on."""
        return min((p.seqs[0] for p in self.recent), default=self.last_seq + 1)

    @staticmethod
    def question(text: str | None) -> str | None:
        """`text` as a context's question: whitespace collapsed, at most 2,048 characters (None when blank)."""
        return " ".join((text or "").split())[:2048] or None

    def background(self) -> str:
        """The summary, memories and recalled messages as one text block ("" when there are none)."""
        return rendering.background(self)

    def as_text(self) -> str:
        """The whole context as one text block: the background, then the recent messages ("[seq] role: text")."""
        return rendering.as_text(self)

    def as_messages(self) -> list[dict[str, Any]]:
        """The context as framework-neutral messages: a system message with the background (when there is
        any), then the recent messages as `{"role", "content"}`."""
        return rendering.as_messages(self)


class MemoryHits(Page[MemoryHit]):
    """A page of a memory search, best first, and the mode the search ran in: `semantic`, `keyword` or
    `hybrid` (what `auto` became: semantic when the store has an embedder, else keyword); None when it had no
    query (every memory under the prefix, in namespace and key order)."""

    mode: Literal["semantic", "keyword", "hybrid"] | None = None
