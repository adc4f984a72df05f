"""The requests that cross the backend boundary: one frozen record per public operation.

A public front (`store/front/`) checks and normalises a caller's arguments, builds the operation's
record and hands it to its backend's `execute`; nothing else crosses. Every field is keyword-only, so two
fields of the same type cannot be swapped by position, and a record is never changed after it is built.
`Request[R]` says what the operation returns: `Backend.execute(GetSession(...))` is a `Session | None`.

Each record's `operation` is the public method's name, and the name of the plan (`store/aws/plans/`) and
of the memory backend's method that carry it out: one name at every layer."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Generic, TypeVar

from store.artifact_reader import ArtifactReader
from store.core.forgetting import ForgetReducers
from store.core.forking import UNSET as UNSET
from store.core.forking import Unset as Unset
from store.core.memories import Indexed
from store.core.message_index import IndexEntry
from store.core.message_index import search_prefix as mi_prefix
from store.core.paging import MessageQuery, SessionQuery
from store.core.rules import MAX_BRANCHES, RECLAIM_JOBS
from store.models import (
    ArtifactVersion,
    Branches,
    Checkpoint,
    FullSession,
    MemoryHits,
    MemoryItem,
    Message,
    MessageHits,
    MessageRecord,
    Page,
    PresignedUpload,
    SearchHits,
    Session,
    StateSnapshot,
    TokenUsage,
)

R = TypeVar("R", covariant=True)


@dataclass(frozen=True, kw_only=True)
class Request(Generic[R]):
    """A checked request for one operation, whose result is an `R`."""

    operation: ClassVar[str]


@dataclass(frozen=True, kw_only=True)
class InSession(Request[R]):
    """A request about one session: `owner`, when given, must own it (else the session is not found)."""

    session_id: str
    owner: str | None = None


@dataclass(frozen=True)
class Presign:
    """A checked `presign_artifact` request: GET `version` of `name` (the latest when None), or PUT a new
    upload of it with `content_type` and `metadata`; valid `expires_in` seconds. An upload holds at most
    `max_size` bytes, exactly `size` when declared, whose SHA-256 (hex) is `sha256` when declared."""

    name: str
    version: int | None
    method: str
    expires_in: int
    content_type: str
    metadata: dict[str, str]
    max_size: int = 0
    size: int | None = None
    sha256: str | None = None


# sessions


@dataclass(frozen=True, kw_only=True)
class CreateSession(Request[Session]):
    operation = "create_session"
    owner: str
    session_id: str
    title: str | None = None
    model: str | None = None
    metadata: dict[str, Any]
    retention: timedelta | None = None


@dataclass(frozen=True, kw_only=True)
class GetSession(InSession[Session | None]):
    operation = "get_session"


@dataclass(frozen=True, kw_only=True)
class ListSessions(Request[Page[Session]]):
    operation = "list_sessions"
    owner: str
    query: SessionQuery


@dataclass(frozen=True, kw_only=True)
class UpdateSession(InSession[Session]):
    operation = "update_session"
    title: str | Unset | None = UNSET
    model: str | Unset | None = UNSET
    metadata: dict[str, Any] | Unset = UNSET


@dataclass(frozen=True, kw_only=True)
class DeleteSession(InSession[None]):
    operation = "delete_session"


# forks and branches


@dataclass(frozen=True, kw_only=True)
class ForkSession(InSession[Session]):
    """A new session `new_session_id` of the source's owner holding its messages 1..`at_seq` (all when
    None), its state (or `state`, when not UNSET), its records and artifacts; `title` and `metadata`
    replace the source's when not UNSET (the metadata gains `forked_from` either way)."""

    operation = "fork_session"
    new_session_id: str
    at_seq: int | None = None
    title: str | Unset | None = UNSET
    metadata: dict[str, Any] | Unset = UNSET
    state: Any = UNSET


@dataclass(frozen=True, kw_only=True)
class RewindSession(InSession[Session]):
    """The session continues from `to_seq`; the transcript as it was is kept as the branch `branch`."""

    operation = "rewind_session"
    to_seq: int
    branch: str
    metadata: dict[str, Any] | Unset = UNSET  # the session's metadata from then on, set in the same write


@dataclass(frozen=True, kw_only=True)
class ListBranches(InSession[Branches]):
    """A page of the session's branches, oldest first: at most `limit`, after the `cursor`'s."""

    operation = "list_branches"
    limit: int = MAX_BRANCHES
    cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class RestoreBranch(InSession[Session]):
    """The branch becomes the session's transcript (and state); the transcript it replaces is kept as the
    branch `keep_as` (which may be the restored branch's own name)."""

    operation = "restore_branch"
    branch: str
    keep_as: str
    metadata: dict[str, Any] | Unset = UNSET  # the session's metadata from then on, set in the same write


@dataclass(frozen=True, kw_only=True)
class DeleteBranch(InSession[None]):
    operation = "delete_branch"
    branch: str


# messages


@dataclass(frozen=True, kw_only=True)
class AppendMessages(InSession[list[MessageRecord]]):
    operation = "append_messages"
    messages: list[Message]
    expected_seq: int | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True, kw_only=True)
class ListMessages(InSession[Page[MessageRecord]]):
    """A page of the transcript, or of the branch `branch` when given."""

    operation = "list_messages"
    query: MessageQuery
    branch: str | None = None


@dataclass(frozen=True, kw_only=True)
class LastMessages(InSession[list[MessageRecord]]):
    operation = "last_messages"
    n: int


@dataclass(frozen=True, kw_only=True)
class GetMessage(InSession[MessageRecord | None]):
    operation = "get_message"
    message_id: str


@dataclass(frozen=True, kw_only=True)
class PopMessage(InSession[MessageRecord | None]):
    operation = "pop_message"
    expected_seq: int | None = None


@dataclass(frozen=True, kw_only=True)
class UpdateUsage(InSession[MessageRecord]):
    operation = "update_usage"
    message_id: str
    usage: TokenUsage


@dataclass(frozen=True, kw_only=True)
class MarkCompaction(InSession[MessageRecord]):
    operation = "mark_compaction"
    message_id: str


@dataclass(frozen=True, kw_only=True)
class GetLatestCompaction(InSession[MessageRecord | None]):
    operation = "get_latest_compaction"


# state, interrupts and records


@dataclass(frozen=True, kw_only=True)
class SaveState(InSession[int]):
    operation = "save_state"
    state: Any
    expected_version: int | None = None


@dataclass(frozen=True, kw_only=True)
class LoadState(InSession[StateSnapshot | None]):
    operation = "load_state"


@dataclass(frozen=True, kw_only=True)
class SaveFull(InSession[StateSnapshot]):
    operation = "save_full"
    messages: list[Message]
    state: Any
    expected_seq: int | None = None
    keep_state: bool = True  # keep a copy of the state for a rewind to this point to bring back


@dataclass(frozen=True, kw_only=True)
class LoadFull(InSession[FullSession]):
    """The messages of the window (`store/core/windows.py`): from the latest compaction when
    `since_compaction`, the last `last` when given, after the sequence number the state holds at
    `after_seq_at` when it holds one, widened so that no tool exchange is cut; and the states of the sessions
    `with_states` names (id, owner: None for the request's) and those sessions, None for one absent to that
    owner."""

    operation = "load_full"
    since_compaction: bool = False
    last: int | None = None
    after_seq_at: str | None = None  # a dotted path into the state: only the messages after the seq it holds
    with_states: tuple[tuple[str, str | None], ...] = ()  # other sessions' states, read in the same instant


@dataclass(frozen=True, kw_only=True)
class SaveInterrupt(InSession[None]):
    """Store the session's pending interrupt (replacing any), recording activity."""

    operation = "save_interrupt"
    interrupt: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class LoadInterrupt(InSession[dict[str, Any] | None]):
    """The pending interrupt, or None."""

    operation = "load_interrupt"


@dataclass(frozen=True, kw_only=True)
class ClearInterrupt(InSession[None]):
    """Remove the pending interrupt (idempotently), recording activity."""

    operation = "clear_interrupt"


@dataclass(frozen=True, kw_only=True)
class SaveRecords(InSession[None]):
    """Replace the session's records of `kind`, recording activity."""

    operation = "save_records"
    kind: str
    records: list[Any]


@dataclass(frozen=True, kw_only=True)
class LoadRecords(InSession[list[Any]]):
    """The session's records of `kind` (empty when none were saved)."""

    operation = "load_records"
    kind: str


# checkpoints


@dataclass(frozen=True, kw_only=True)
class SaveCheckpoint(Request[Checkpoint]):
    operation = "save_checkpoint"
    scope: str
    key: str
    data: Any
    ttl: timedelta
    owner: str | None = None


@dataclass(frozen=True, kw_only=True)
class LoadCheckpoint(Request[Checkpoint | None]):
    operation = "load_checkpoint"
    scope: str
    key: str
    owner: str | None = None


@dataclass(frozen=True, kw_only=True)
class DeleteCheckpoint(Request[None]):
    operation = "delete_checkpoint"
    scope: str
    key: str
    owner: str | None = None


# artifacts


@dataclass(frozen=True, kw_only=True)
class PutArtifact(InSession[ArtifactVersion]):
    """Store `data` (bytes, a readable stream or an iterator of bytes) as the name's next version."""

    operation = "put_artifact"
    name: str
    data: Any
    content_type: str
    metadata: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class GetArtifact(InSession[bytes | None]):
    operation = "get_artifact"
    name: str
    version: int | None = None


@dataclass(frozen=True, kw_only=True)
class OpenArtifact(InSession[ArtifactReader | None]):
    """A streaming reader (under an async driver, its reader reads with `await`)."""

    operation = "open_artifact"
    name: str
    version: int | None = None


@dataclass(frozen=True, kw_only=True)
class ListArtifacts(InSession[list[ArtifactVersion]]):
    operation = "list_artifacts"


@dataclass(frozen=True, kw_only=True)
class ListArtifactVersions(InSession[list[ArtifactVersion]]):
    operation = "list_artifact_versions"
    name: str


@dataclass(frozen=True, kw_only=True)
class DeleteArtifact(InSession[None]):
    operation = "delete_artifact"
    name: str


@dataclass(frozen=True, kw_only=True)
class PresignArtifact(InSession[str]):
    """A GET URL of a version (ArtifactNotFound when absent), or the PUT URL of a new upload."""

    operation = "presign_artifact"
    presign: Presign


@dataclass(frozen=True, kw_only=True)
class PresignArtifactUpload(InSession[PresignedUpload]):
    """The PUT URL of a new upload (`presign.method` is "PUT"), with what the client must send."""

    operation = "presign_artifact_upload"
    presign: Presign


@dataclass(frozen=True, kw_only=True)
class ConfirmArtifactUpload(InSession[ArtifactVersion]):
    operation = "confirm_artifact_upload"
    name: str
    upload: str


# traces and the reclaim of released objects


@dataclass(frozen=True, kw_only=True)
class AppendTraceEvents(InSession[int]):
    operation = "append_trace_events"
    run_id: str
    events: list[dict[str, Any]]


@dataclass(frozen=True, kw_only=True)
class AppendTraceRuns(InSession[dict[str, int]]):
    """One batch for each of several runs, in one write."""

    operation = "append_trace_runs"
    runs: dict[str, list[dict[str, Any]]]


@dataclass(frozen=True, kw_only=True)
class LoadTraceEvents(InSession[list[dict[str, Any]]]):
    operation = "load_trace_events"
    run_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class ListTraceRuns(InSession[list[str]]):
    operation = "list_trace_runs"


@dataclass(frozen=True, kw_only=True)
class Reclaim(Request[int]):
    """Act on the tables' stream records (purge removed sessions, delete released objects, carry copies and an
    owner's forget on)."""

    operation = "reclaim"
    records: list[dict[str, Any]]
    jobs: frozenset[str] = RECLAIM_JOBS  # which of the stream's jobs to do (rules.RECLAIM_JOBS)
    reduce: ForgetReducers = field(default_factory=dict)  # for the forget job, as ForgetOwner's


# across sessions


@dataclass(frozen=True, kw_only=True)
class Search(Request[SearchHits]):
    """One bounded call (`settings.search_sessions`, `settings.search_messages`), from `cursor` if given."""

    operation = "search"
    owner: str
    query: str
    limit: int = 20
    cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class HealthCheck(Request[None]):
    operation = "health_check"


# long-term memory (an owner's, not a session's)


@dataclass(frozen=True, kw_only=True)
class PutMemory(Request[MemoryItem]):
    """Put `value` as the memory `key` of the owner's `namespace`: `text` is what keyword search matches,
    `indexed` its embedding (None: not searchable by meaning); it expires `ttl` after the put (None: never)."""

    operation = "put_memory"
    owner: str
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    text: str
    indexed: Indexed | None = None
    ttl: timedelta | None = None
    index: tuple[str, ...] | bool | None = None  # the fields asked for, as given (a backend that forwards it)


@dataclass(frozen=True, kw_only=True)
class GetMemory(Request[MemoryItem | None]):
    """The memory, or None; with `refresh_ttl`, an expiring memory's TTL starts again."""

    operation = "get_memory"
    owner: str
    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = False


@dataclass(frozen=True, kw_only=True)
class DeleteMemory(Request[None]):
    operation = "delete_memory"
    owner: str
    namespace: tuple[str, ...]
    key: str


@dataclass(frozen=True, kw_only=True)
class SearchMemories(Request[MemoryHits]):
    """A page of the owner's memories under `prefix`: ranked by `mode` ("auto", "semantic", "keyword",
    "hybrid": `core.memories.resolve_mode`) against `query` (and `indexed`, its embedding), those whose value
    has the `filter`'s fields; every one in key order when there is no query."""

    operation = "search_memories"
    owner: str
    prefix: tuple[str, ...]
    query: str | None = None
    indexed: Indexed | None = None
    filter: dict[str, Any] = field(default_factory=dict)
    mode: str = "auto"
    limit: int = 10
    cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class ListNamespaces(Request[Page[tuple[str, ...]]]):
    """The owner's namespaces that hold memories, in order: under `prefix`, ending with `suffix`, cut to
    `max_depth` labels (each once)."""

    operation = "list_namespaces"
    owner: str
    prefix: tuple[str, ...] | None = None
    suffix: tuple[str, ...] | None = None
    max_depth: int | None = None
    limit: int = 100
    cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class WriteMessageIndex(InSession[int]):
    """Add `entries` to the session's message index, each replacing what it had at its seq; with `restart`, the
    index is emptied first (its transcript changed under it). How many entries it holds then is not counted:
    the result is the number written."""

    operation = "write_message_index"
    entries: tuple[IndexEntry, ...]
    restart: bool = False


@dataclass(frozen=True, kw_only=True)
class DropMessageIndex(Request[bool]):
    """Remove the message index of the owner's session `session_id` (its id as stored), a bounded number of
    entries a call: True when nothing is left."""

    operation = "drop_message_index"
    owner: str
    session_id: str


@dataclass(frozen=True, kw_only=True)
class SearchSessionMessages(InSession[MessageHits]):
    """A page of the session's indexed messages ranked against `query` (and `indexed`, its embedding) by `mode`
    (as `SearchMemories`)."""

    operation = "search_session_messages"
    query: str
    indexed: Indexed | None = None
    mode: str = "auto"
    limit: int = 10
    cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class SearchMessages(Request[MessageHits]):
    """A page of the owner's indexed messages, every live session's, ranked against `query` by `mode`."""

    operation = "search_messages"
    owner: str
    query: str
    indexed: Indexed | None = None
    mode: str = "auto"
    limit: int = 10
    cursor: str | None = None


@dataclass(frozen=True, kw_only=True)
class ForgetOwner(Request[bool]):
    """Remove the owner's memories, a bounded number a call: True when none is left, False when some are."""

    operation = "forget_owner"
    owner: str
    reduce: ForgetReducers = field(default_factory=dict)  # session record kinds a forget rewrites (core.forgetting)


@dataclass(frozen=True, kw_only=True)
class SaveOwnerRecords(Request[None]):
    """Replace the owner's records of `kind`: what a layer above the store keeps for an owner rather than for a
    session (memory extraction's choice, say). `forget_owner` leaves them: an owner's settings, not memories."""

    operation = "save_owner_records"
    owner: str
    kind: str
    records: list[Any]


@dataclass(frozen=True, kw_only=True)
class LoadOwnerRecords(Request[list[Any]]):
    """The owner's records of `kind` (empty when none were saved)."""

    operation = "load_owner_records"
    owner: str
    kind: str


def operations() -> dict[str, type[Request[Any]]]:
    """Every operation's name and its request type."""
    found: dict[str, type[Request[Any]]] = {}
    pending: list[type[Request[Any]]] = [Request]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "operation" in vars(cls):
            found[cls.operation] = cls
    return found


def memory_search_of(request: SearchSessionMessages | SearchMessages, owner: str) -> SearchMemories:
    """The memory search a message search is (`core.message_index`): under the session's index namespace, or
    the owner's whole index."""
    session = request.session_id if isinstance(request, SearchSessionMessages) else None
    return SearchMemories(
        owner=owner,
        prefix=mi_prefix(session),
        query=request.query,
        indexed=request.indexed,
        mode=request.mode,
        limit=request.limit,
        cursor=request.cursor,
    )
