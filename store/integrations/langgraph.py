"""LangGraph: a checkpointer (`BaseCheckpointSaver`) kept in this store.

    from langgraph.graph import StateGraph
    from store import SessionStore
    from store.integrations.langgraph import SessionStoreSaver

    graph = builder.compile(checkpointer=SessionStoreSaver(SessionStore.from_env(), owner=user_id))
    graph.invoke(inputs, {"configurable": {"thread_id": "trip-1"}})

How LangGraph's records map onto the store (owner: `owner`, or "langgraph"):
- a thread is a store session, `scoped_id(owner, thread_id)` (so the owner reads it over HTTP under the
  thread's id); its state names the generation of the thread's log, `<thread>.g<n>`, another session;
- the log's transcript holds, in order, one message per checkpoint (role `lg.c.<namespace digest>`: the
  checkpoint with its channel values and its metadata, each value as JSON when it reads back exactly, else
  through LangGraph's serde: `langgraph_values`), the writes of the step's tasks in it (`put_writes` waits a
  moment for the checkpoint that follows it: `langgraph_held`), and one message per `put_writes` call no
  checkpoint took (role `lg.w.<namespace digest>`), each appended with `expected_seq` (the log's position
  is the guard: a rewrite of the log never loses a write, see below; a call this saver made already is not
  appended again), so an append is one transaction of two items. A put never rewrites an earlier
  checkpoint; bodies over the item limit go to S3 through the store's spill;
- at a run's end (a step's checkpoint that triggers no node, `_idle`, or the writes after which a run stops)
  the log's state says its tail: the latest root checkpoint and its pending writes as of the log's last
  sequence number (`_Tail`), in the same transaction; a new process then reads the thread in one
  `load_full` (`_resumed`), and reads the log only when the log has moved since;
- the thread's conversation (its own session) is a view of the root graph's `messages` channel, written
  when the run answers (an AI message without tool calls), stops (an interrupt, an error), has VIEW_BATCH
  messages since its last answer, or starts after a run that stopped short: a turn's messages in one
  append. The checkpoints hold every message first, at each super-step;
- a checkpoint's pending writes are the writes put for it before its first child checkpoint;
- `prune`, `delete_for_runs` rewrite a log: the kept messages are copied to generation n+1, the old log
  is sealed with a last message (appended with `expected_seq`, so a writer that got in first is copied
  too, and every later writer finds the seal and moves on), the thread's state moves to n+1, and the old
  log is deleted with everything it held;
- each run's threads are listed in a session of the run's own (`lg-run.<run id>`), made with the run's
  first checkpoint in a thread, so `delete_for_runs` finds them without a scan.
Sync and async methods both work on a `SessionStore` or an `AsyncSessionStore`. An `AsyncSessionStore`
serves the sync methods from the saver's own event loop (or `runner`): give such a saver a store whose
clients are first used there (aiobotocore clients stay bound to their loop).
Install with `pip install agent-session-store[langgraph]`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import threading
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ParamSpec, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from store.async_session_store import AsyncSessionStore
from store.calls import CALLS
from store.conversation.dialects import with_reported_usage
from store.core.lru import Lru
from store.core.rules import FORKED_FROM
from store.core.scoped_ids import scoped_id
from store.core.steps import Stepper, StoreCall, ask
from store.errors import Conflict, SessionExists, SessionNotFound
from store.integrations._calls import CHANGE_ATTEMPTS, Runner, SyncBridge, as_async
from store.integrations.langgraph_held import Held, HeldWrites, finish_all
from store.integrations.langgraph_messages import (
    Known,
    channel_ids,
    entries_of,
    line_of,
    message_id,
    rebuild,
    runs,
)
from store.integrations.langgraph_values import dumps_value, loads_value
from store.models import MessageRecord
from store.session_store import APPEND_MAX, SessionStore

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")
AnyStore = SessionStore | AsyncSessionStore

FRAMEWORK = "langgraph"
DEFAULT_OWNER = "langgraph"
SEAL = "lg.seal"
MESSAGES_CHANNEL = "messages"  # LangGraph's MessagesState channel: the conversation
CONVERSATION_LOOKBACK = 100
PAGE = 200
RESUME_LAST = 1_000  # the conversation's messages a new reader's first read takes at most (`_resumed`)
LATEST_PAGE = 3  # the first page read for the latest checkpoint: it and the writes put after it
LOCK_STALE = timedelta(minutes=15)
VIEW_BATCH = 16  # messages since the last answer that are written to the conversation view without waiting for it
WRITES_WAIT = 0.02  # seconds a step's checkpoint waits at most for its tasks' writes to arrive (`_follows_writes`)
WRITES_POLL = 0.001  # seconds between looks for them
FOLDED = "pw"  # a checkpoint record's field: the writes put for its parent just before it (langgraph_held)
IDLE_UNLESS = frozenset({"__start__", "__pregel_tasks"})  # channels whose value means a node runs next
STOPS = frozenset({"__error__", "__interrupt__"})  # writes after which a run stops: its view is written then


# ---------------------------------------------------------------- flows: the saver's logic, written once


Flow = Generator[StoreCall, Any, T]


# ---------------------------------------------------------------- the stored forms


def _digest(*parts: str, size: int = 40) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:size]


def checkpoint_role(ns: str) -> str:
    return f"lg.c.{_digest(ns, size=16)}"


def writes_role(ns: str) -> str:
    return f"lg.w.{_digest(ns, size=16)}"


def _is_checkpoint(record: MessageRecord) -> bool:
    return record.role.startswith("lg.c.")


def _is_writes(record: MessageRecord) -> bool:
    return record.role.startswith("lg.w.")


ROOT_CHECKPOINT, ROOT_WRITES = checkpoint_role(""), writes_role("")


@dataclass
class _View:
    """What a thread's conversation view waits for: the latest root checkpoint this saver put and its
    messages not shown yet, and a checkpoint whose run stopped before it was put (LangGraph's background saves
    may put a stop's writes first)."""

    checkpoint: str = ""
    unviewed: list[BaseMessage] = field(default_factory=list)
    stopped_at: str = ""
    tail: _Tail | None = None  # the log from its latest root checkpoint on, as this saver appended it


@dataclass(frozen=True)
class _Tail:
    """The thread's log from its latest root checkpoint to its end: that checkpoint's record body (without
    the writes folded into it, which are its parent's), the bodies of the root writes put for it after it,
    and the log's last sequence number. What a resume needs, kept in the log's state at a run's end."""

    checkpoint: dict[str, Any]
    writes: tuple[dict[str, Any], ...]
    seq: int

    def snapshot(self) -> dict[str, Any]:
        """The log's state that says this tail (`_resumed` reads it back, with the log's last sequence number)."""
        return {"seq": self.seq, "checkpoint": self.checkpoint, "writes": list(self.writes)}


@dataclass(frozen=True)
class _Listing:
    """What a `list` call returns of each thread: its namespace (None: every one), the checkpoints before
    `before_id` (None: all), those whose metadata holds `filter`."""

    ns: str | None
    before_id: str | None
    filter: dict[str, Any]


class SessionStoreSaver(BaseCheckpointSaver[str]):
    """LangGraph's checkpointer on this store: every capability of the conformance suite (put, put_writes,
    get_tuple, list, delete_thread, delete_for_runs, copy_thread, prune), sync and async."""

    def __init__(
        self,
        store: AnyStore,
        *,
        owner: str | None = None,
        retention: timedelta | int | None = None,
        serde: SerializerProtocol | None = None,
        runner: Runner | None = None,
    ) -> None:
        """Threads belong to `owner` (default "langgraph"; another owner's threads are absent) and expire
        after `retention` without activity when given. `runner` runs the store's coroutines for the sync
        methods when `store` is an AsyncSessionStore (default: a loop of the saver's own)."""
        super().__init__(serde=serde)
        self.store = store
        self.owner = owner or DEFAULT_OWNER
        self.retention = retention
        self._call_sync = _bridge_step(SyncBridge(store, runner))
        self._async_store = as_async(store)  # the async methods' store, whichever was given
        self._generations: dict[str, int] = {}  # thread -> generation of its log
        self._last_seq: dict[str, int] = {}  # log session id -> its last sequence number, as last seen
        self._indexed: set[tuple[str, str]] = set()  # (run, thread) pairs already in the run index
        self._conversation_tail: Lru[tuple[str, int]] = Lru(4096)  # thread -> its conversation's last (id, seq)
        self._knowns: Lru[Known] = Lru(16)  # thread -> what this saver knows of its conversation (bounded)
        self._views: Lru[_View] = Lru(4096)  # thread -> what its conversation view waits for
        self._appended: Lru[bool] = Lru(4096)  # (log session, key) of the records this saver appended
        self._locks: dict[str, threading.Lock] = {}
        self._async_locks: dict[tuple[int, str], asyncio.Lock] = {}
        self._locks_guard = threading.Lock()
        self._held = HeldWrites()  # task writes waiting for their step's checkpoint

    # ------------------------------------------------------------ running flows

    def _run_sync(self, flow: Flow[T]) -> T:
        """The flow driven to its result (`store.core.steps.Stepper`, as the AWS drivers drive plans): each
        store call performed on the sync store, a failure thrown into the flow where it asked."""
        stepper = Stepper(flow)
        while not stepper.done:
            try:
                outcome: Any = self._perform_sync(stepper.current)
            except Exception as exc:
                outcome = exc
            stepper.advance(outcome)
        return stepper.result

    async def _run_async(self, flow: Flow[T]) -> T:
        """`_run_sync`, each store call awaited on the async store."""
        stepper = Stepper(flow)
        while not stepper.done:
            try:
                outcome: Any = await self._perform_async(stepper.current)
            except Exception as exc:
                outcome = exc
            stepper.advance(outcome)
        return stepper.result

    def _perform_sync(self, step: StoreCall) -> Any:
        return self._call_sync(step)

    async def _perform_async(self, step: StoreCall) -> Any:
        return await getattr(self._async_store, step.method)(*step.args, **step.kwargs)

    # ------------------------------------------------------------ ids and generations

    def thread_session_id(self, thread_id: str) -> str:
        """The store session of a thread (its state names its log's generation)."""
        return scoped_id(self.owner, thread_id)

    def extract_memories(self, thread_id: str, **options: Any) -> Any:
        """Distil the thread's conversation into its owner's memories now (`SessionStore.extract_memories` on
        the thread's session: `strategies`, `model`; awaitable when the saver's store is an
        AsyncSessionStore). Without a call, the stack's extraction function does it as the thread grows."""
        return self.store.extract_memories(self.thread_session_id(thread_id), owner=self.owner, **options)

    def log_session_id(self, thread_id: str, generation: int) -> str:
        return scoped_id(self.owner, f"{thread_id}.g{generation}")

    def _run_session_id(self, run_id: str) -> str:
        return scoped_id(self.owner, f"lg-run.{run_id}")

    def _lock(self, thread_id: str) -> threading.Lock:
        """Appends to one thread's log from this saver go one at a time (threads)."""
        with self._locks_guard:
            return self._locks.setdefault(thread_id, threading.Lock())

    def _async_lock(self, thread_id: str) -> asyncio.Lock:
        """Appends to one thread's log from this saver go one at a time (tasks of the running loop): they
        would only lose the race for the log's position to each other."""
        key = (id(asyncio.get_running_loop()), thread_id)
        with self._locks_guard:
            return self._async_locks.setdefault(key, asyncio.Lock())

    def _generation(self, thread_id: str, *, refresh: bool = False, log_missing: bool = False) -> Flow[int | None]:
        """The generation of the thread's log, or None when the thread does not exist. With `log_missing` (the
        log of the generation last known was not found), a thread that is a fork made by the store (the API,
        the CLI, the console: `fork_session` of the thread's session) is first given its log (`_adopt`)."""
        if not refresh and thread_id in self._generations:
            return self._generations[thread_id]
        try:
            snapshot = yield from ask(CALLS.load_state, self.thread_session_id(thread_id), owner=self.owner)
        except SessionNotFound:
            self._generations.pop(thread_id, None)
            return None
        generation = _generation_of(snapshot.state if snapshot is not None else None)
        if log_missing:
            yield from self._adopt(thread_id, generation)
        self._generations[thread_id] = generation
        return generation

    def _adopt(self, thread_id: str, generation: int) -> Flow[None]:
        """Give a thread forked by the store its own log, once: the thread's session is a fork of another
        thread's conversation at message k (its metadata still names the source thread, and `forked_from`),
        and its log becomes the source's log up to the latest checkpoint whose conversation is a prefix of
        the fork's (a fork point inside a step resumes from the step before it: the conversation's messages
        past that checkpoint are taken off the fork, so that the graph and the conversation agree)."""
        sid = self.thread_session_id(thread_id)
        session = yield from ask(CALLS.get_session, sid, owner=self.owner)
        source = session.metadata.get("langgraph_thread") if session is not None else None
        if session is None or not isinstance(source, str) or source == thread_id:
            return
        if not isinstance(session.metadata.get(FORKED_FROM), dict):
            return
        source_generation = yield from self._generation(source, refresh=True)
        if source_generation is None:
            raise Conflict(f"langgraph: thread {thread_id!r} is a fork of {source!r}, which no longer exists")
        conversation: list[str] = []
        cursor: str | None = None
        while True:
            page = yield from ask(CALLS.list_messages, sid, limit=PAGE, cursor=cursor, owner=self.owner)
            conversation += [message_id(r) for r in page.items]
            if (cursor := page.next_cursor) is None:
                break
        held: dict[int, int | None] = {}  # a checkpoint's seq -> its messages, when they begin the conversation

        def prefix(record: MessageRecord) -> int | None:
            if record.seq not in held:
                ids = self._channel_ids(record.content, conversation)
                held[record.seq] = len(ids) if ids is not None and ids == conversation[: len(ids)] else None
            return held[record.seq]

        records = yield from self._records(
            source,
            newest_first=True,
            roles=[checkpoint_role("")],
            enough=lambda read: any(prefix(r) is not None for r in read),
            first_page=LATEST_PAGE,
        )
        chosen = next(((r.seq, n) for r in records if (n := prefix(r)) is not None), (0, 0))
        at_seq, kept = chosen
        with contextlib.suppress(SessionExists):  # another saver adopted it first: its log is the same
            yield from ask(
                CALLS.fork_session,
                self.log_session_id(source, source_generation),
                at_seq=at_seq,
                new_session_id=self.log_session_id(thread_id, generation),
                metadata={"framework": FRAMEWORK, "langgraph_thread": thread_id, "langgraph": "log"},
                owner=self.owner,
            )
        for _ in range(len(conversation) - kept):
            yield from ask(CALLS.pop_message, sid, owner=self.owner)
        metadata = {**session.metadata, "langgraph_thread": thread_id}
        yield from ask(CALLS.update_session, sid, metadata=metadata, owner=self.owner)
        self._conversation_tail.drop(thread_id)

    def _ensure_thread(self, thread_id: str) -> Flow[int]:
        """The thread's generation, creating the thread (and its first log) if needed."""
        generation = yield from self._generation(thread_id)
        if generation is not None:
            return generation
        meta = {"framework": FRAMEWORK, "langgraph_thread": thread_id}
        for sid, kind in ((self.log_session_id(thread_id, 0), "log"), (self.thread_session_id(thread_id), "thread")):
            with contextlib.suppress(SessionExists):
                yield from ask(
                    CALLS.create_session,
                    self.owner,
                    session_id=sid,
                    title=thread_id if kind == "thread" else None,
                    metadata={**meta, "langgraph": kind},
                    retention=self.retention,
                )
        self._generations[thread_id] = 0
        return 0

    # ------------------------------------------------------------ reading the log

    def _records(
        self,
        thread_id: str,
        *,
        newest_first: bool,
        roles: list[str] | None,
        after_seq: int | None = None,
        enough: Callable[[list[MessageRecord]], bool] | None = None,
        first_page: int = PAGE,
    ) -> Flow[list[MessageRecord]]:
        """The thread's log in the order asked (empty when there is no log): every record, or the first
        pages until `enough(records so far)` holds; pages start at `first_page` and grow to PAGE (a reader
        that wants the latest checkpoint reads a few messages, not the whole history).

        A new reader of a thread, newest first (a resume), does not read the thread's state for its log's
        generation first: it reads generation 0's log, where a thread never rewritten keeps it, and a seal
        there (the newest message of a rewritten log) sends it to the thread's state: 2 requests, not 3."""
        for attempt in range(2):
            guess = attempt == 0 and newest_first and roles is not None and thread_id not in self._generations
            asked = [*roles, SEAL] if guess and roles is not None else roles  # a seal says the guess is stale
            generation: int | None = 0
            if not guess:
                generation = yield from self._generation(thread_id, refresh=attempt > 0, log_missing=attempt > 0)
            if generation is None:
                return []
            sid = self.log_session_id(thread_id, generation)
            records: list[MessageRecord] = []
            cursor: str | None = None
            limit = first_page
            try:
                while True:
                    page = yield from ask(
                        CALLS.list_messages,
                        sid,
                        limit=limit,
                        newest_first=newest_first,
                        roles=asked,
                        after_seq=after_seq,
                        cursor=cursor,
                        owner=self.owner,
                    )
                    if guess and not records and page.items and page.items[0].role == SEAL:
                        break  # generation 0 was rewritten: the thread's state names the current one
                    records += _unfolded([r for r in page.items if r.role != SEAL], newest_first)
                    cursor = page.next_cursor
                    if cursor is None or (enough is not None and enough(records)):
                        return records
                    limit = min(PAGE, limit * 4)
            except SessionNotFound:
                continue  # rewritten meanwhile: read the new generation from the start
        return []

    # ------------------------------------------------------------ decoding

    def _dumps(self, value: Any) -> list[Any]:
        return dumps_value(self.serde, value)

    def _loads(self, stored: list[Any]) -> Any:
        return loads_value(self.serde, stored)

    def _tuple(self, thread_id: str, body: dict[str, Any], writes: Sequence[dict[str, Any]]) -> Flow[CheckpointTuple]:
        """The checkpoint's tuple as LangGraph reads it (its `messages` channel rebuilt, `_rebuilt`), from its
        record's body and those of its pending writes."""
        checkpoint = yield from self._rebuilt(thread_id, body)
        ns, cid, parent = body["ns"], body["id"], body.get("parent")
        config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}}
        parent_config: RunnableConfig | None = None
        if parent:
            parent_config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent}}
        return CheckpointTuple(
            config=config,
            checkpoint=checkpoint,
            metadata=self._loads(body["md"]),
            parent_config=parent_config,
            pending_writes=self._pending(writes),
        )

    def _pending(self, bodies: Sequence[dict[str, Any]]) -> list[tuple[str, str, Any]]:
        """The writes of records `bodies` (in log order) as LangGraph reads them: one per (task, index), the
        first for a regular channel, the last for a special one (errors, interrupts), in `writes_sort_key` order."""
        chosen: dict[tuple[str, int], tuple[str, str, int, str, list[Any]]] = {}
        for body in bodies:
            for idx, channel, value in body["w"]:
                key = (body["task"], idx)
                if key in chosen and idx >= 0:
                    continue
                chosen[key] = (body["task"], body.get("path", ""), idx, channel, value)
        ordered = sorted(chosen.values(), key=lambda w: writes_sort_key(w[1], w[0], w[2]))
        return [(task, channel, self._loads(value)) for task, _, _, channel, value in ordered]

    # ------------------------------------------------------------ get_tuple

    def _get_tuple(self, config: RunnableConfig) -> Flow[CheckpointTuple | None]:
        thread_id = str(config["configurable"]["thread_id"])
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        cid = get_checkpoint_id(config)
        if cid is None and not ns and thread_id not in self._generations:  # a new reader: at a run's end, the
            resumed = yield from self._resumed(thread_id)  # log's state says its tail
            if resumed is not None:
                return resumed
        if cid is None:
            return (yield from self._latest(thread_id, ns))
        return (yield from self._at_checkpoint(thread_id, ns, cid))

    def _latest(self, thread_id: str, ns: str) -> Flow[CheckpointTuple | None]:
        """The namespace's latest checkpoint: newest first, the writes for it come before it."""

        def reached(records: list[MessageRecord]) -> bool:
            return any(_is_checkpoint(r) and r.content["ns"] == ns for r in records)

        roles = [checkpoint_role(ns), writes_role(ns)]
        records = yield from self._records(
            thread_id, newest_first=True, roles=roles, enough=reached, first_page=LATEST_PAGE
        )
        writes: list[MessageRecord] = []
        for record in records:
            if _is_checkpoint(record) and record.content["ns"] == ns:
                self._held.seen(thread_id, ns, record.content["id"])  # (writes for it need not wait for it)
                mine = [w.content for w in reversed(writes) if w.content["cp"] == record.content["id"]]
                return (yield from self._tuple(thread_id, record.content, mine))
            if _is_writes(record) and record.content["ns"] == ns:
                writes.append(record)
        return None

    def _at_checkpoint(self, thread_id: str, ns: str, cid: str) -> Flow[CheckpointTuple | None]:
        """The checkpoint `cid` and its pending writes: those put for it before its first child."""
        found = yield from self._find(thread_id, ns, cid)
        if found is None:
            return None

        def is_child(r: MessageRecord) -> bool:
            return _is_checkpoint(r) and r.content.get("parent") == cid and r.content["ns"] == ns

        def child_reached(records: list[MessageRecord]) -> bool:
            return any(is_child(r) for r in records)

        later = yield from self._records(
            thread_id,
            newest_first=False,
            roles=[checkpoint_role(ns), writes_role(ns)],
            after_seq=found.seq,
            enough=child_reached,
            first_page=LATEST_PAGE,
        )
        mine = []
        for record in later:
            if is_child(record):
                break
            if _is_writes(record) and record.content["cp"] == cid and record.content["ns"] == ns:
                mine.append(record.content)
        return (yield from self._tuple(thread_id, found.content, mine))

    def _resumed(self, thread_id: str) -> Flow[CheckpointTuple | None]:
        """The thread's latest root checkpoint as a new reader finds it in 2 requests, when the log's state says
        the log's tail (written at a run's end, `_Tail`) and the log has not moved since: the conversation (the
        messages the checkpoint refers to), the thread's state (the log's generation), the log's state and the
        log's head (its last sequence number), all as of one instant (`load_full(with_states=...)`). None
        otherwise (a crash mid-run, a rewritten log): the log is read then, of the generation the thread's state
        names, and the conversation read here serves its rebuild. The conversation is read up to its last
        RESUME_LAST messages: a checkpoint that refers to older ones reads those too (`_rebuilt`)."""
        log = self.log_session_id(thread_id, 0)
        try:
            full = yield from ask(
                CALLS.load_full,
                self.thread_session_id(thread_id),
                last=RESUME_LAST,
                with_states={log: self.owner},
                owner=self.owner,
            )
        except SessionNotFound:
            return None
        generation = _generation_of(full.state.state if full.state is not None else None)
        self._generations.setdefault(thread_id, generation)
        self._known(thread_id).learn(full.messages)
        last = full.messages[-1] if full.messages else None
        self._conversation_tail.put(thread_id, (message_id(last), last.seq) if last is not None else ("", 0))
        found, head = full.states.get(log), full.sessions.get(log)
        tail = _said_tail(found.state if found is not None else None)
        if generation != 0 or head is None or tail is None or tail.seq != head.last_seq:
            return None
        self._last_seq.setdefault(log, head.last_seq)
        self._view(thread_id).tail = tail
        self._held.seen(thread_id, "", tail.checkpoint["id"])
        return (yield from self._tuple(thread_id, tail.checkpoint, tail.writes))

    def _find(self, thread_id: str, ns: str, cid: str) -> Flow[MessageRecord | None]:
        """The checkpoint's record in the thread's log, by its message id."""
        for attempt in range(2):
            generation = yield from self._generation(thread_id, refresh=attempt > 0, log_missing=attempt > 0)
            if generation is None:
                return None
            try:
                record = yield from ask(
                    CALLS.get_message,
                    self.log_session_id(thread_id, generation),
                    _checkpoint_mid(ns, cid),
                    owner=self.owner,
                )
            except SessionNotFound:
                continue
            return record if record is not None and _is_checkpoint(record) else None
        return None

    # ------------------------------------------------------------ list

    def _list(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> Flow[list[CheckpointTuple]]:
        if config is None:
            threads = yield from self._threads()
        else:
            threads = [str(config["configurable"]["thread_id"])]
        ns = None if config is None else config["configurable"].get("checkpoint_ns")
        wanted = _Listing(ns, get_checkpoint_id(before) if before is not None else None, filter or {})
        out: list[CheckpointTuple] = []
        for thread_id in threads:
            left = None if limit is None else limit - len(out)
            out += yield from self._list_thread(thread_id, wanted, left)
            if limit is not None and len(out) >= limit:
                break
        return out

    def _listed(self, record: MessageRecord, wanted: _Listing) -> bool:
        """Whether a checkpoint's record is one the listing returns (its namespace, before `before`, its
        metadata matching the filter: read before its messages are rebuilt)."""
        if wanted.ns is not None and record.content["ns"] != wanted.ns:
            return False
        if wanted.before_id is not None and record.content["id"] >= wanted.before_id:
            return False
        md = self._loads(record.content["md"]) if wanted.filter else {}
        return all(md.get(k) == v for k, v in wanted.filter.items())

    def _list_thread(self, thread_id: str, wanted: _Listing, limit: int | None) -> Flow[list[CheckpointTuple]]:
        """One thread's checkpoints the listing returns, newest first, at most `limit`."""

        def enough(records: list[MessageRecord]) -> bool:
            """Enough checkpoints read for `limit` (counting those `before` and `filter` let through)."""
            return (
                limit is not None and sum(1 for r in records if _is_checkpoint(r) and self._listed(r, wanted)) >= limit
            )

        # one page more than the checkpoints wanted: their writes come just before them, newest first
        first = PAGE if limit is None else min(PAGE, max(LATEST_PAGE, 2 * limit + 2))
        roles = None if wanted.ns is None else [checkpoint_role(wanted.ns), writes_role(wanted.ns)]
        records = yield from self._records(thread_id, newest_first=True, roles=roles, enough=enough, first_page=first)
        writes: dict[tuple[str, str], list[MessageRecord]] = {}
        out: list[CheckpointTuple] = []
        for record in records:
            if wanted.ns is not None and record.content.get("ns") != wanted.ns:
                continue
            if _is_writes(record):
                writes.setdefault((record.content["ns"], record.content["cp"]), []).append(record)
            elif _is_checkpoint(record) and self._listed(record, wanted):
                mine = [w.content for w in reversed(writes.get((record.content["ns"], record.content["id"]), []))]
                out.append((yield from self._tuple(thread_id, record.content, mine)))
                if limit is not None and len(out) >= limit:
                    break
        return out

    def _threads(self) -> Flow[list[str]]:
        """Every thread of the owner (for `list(None)`), through the owner's session listing."""
        threads: list[str] = []
        cursor = None
        while True:
            page = yield from ask(
                CALLS.list_sessions,
                self.owner,
                limit=100,
                cursor=cursor,
                metadata={"framework": FRAMEWORK, "langgraph": "thread"},
            )
            threads += [s.metadata["langgraph_thread"] for s in page.items]
            cursor = page.next_cursor
            if cursor is None:
                return threads

    # ------------------------------------------------------------ writing

    def _append(
        self,
        thread_id: str,
        messages: list[dict[str, Any]],
        key: str | None,
        also: Sequence[str] = (),
        *,
        snapshot: bool = False,
    ) -> Flow[bool]:
        """Append to the thread's log as of the sequence number last seen there (no idempotency claim: the
        position is the guard, and what this saver already appended there under `key` is not appended
        again: False); when the log moved (another writer's progress), learn where it is now (or, when it
        was sealed by a rewrite, move to the next generation) and try again at once. With `snapshot` (a run's
        end), the log's state says its tail in the same transaction (`_Tail`), when this saver knows it."""
        for _ in range(CHANGE_ATTEMPTS):
            generation = yield from self._ensure_thread(thread_id)
            sid = self.log_session_id(thread_id, generation)
            if key is not None and self._appended.get(f"{sid}\x00{key}"):
                return False  # put again (a re-sent call): stored once
            try:
                if sid not in self._last_seq:  # learn where the log is from its last message: it may be a seal
                    tail = yield from ask(CALLS.last_messages, sid, 1, owner=self.owner)
                    if tail and tail[-1].role == SEAL:
                        self._generations[thread_id] = int(tail[-1].content["next"])
                        continue
                    self._last_seq[sid] = tail[-1].seq if tail else 0
                expected = self._last_seq[sid]
                view = self._view(thread_id)
                after = _tail_after(view.tail, expected, messages, expected + len(messages))
                if snapshot and after is not None and generation == 0:  # (a resume reads generation 0's log)
                    yield from ask(
                        CALLS.save_full,
                        sid,
                        messages,
                        after.snapshot(),
                        expected_seq=expected,
                        owner=self.owner,
                        keep_state=False,
                    )
                else:
                    yield from ask(CALLS.append_messages, sid, messages, expected_seq=expected, owner=self.owner)
            except SessionNotFound:  # the log was rewritten and removed (the thread names its successor), or
                self._last_seq.pop(sid, None)  # the thread is a fork the store made, whose log is to be made
                yield from self._generation(thread_id, refresh=True, log_missing=True)
                continue
            except Conflict:
                tail = yield from ask(CALLS.last_messages, sid, 1, owner=self.owner)
                if tail and tail[-1].role == SEAL:
                    self._generations[thread_id] = int(tail[-1].content["next"])
                else:  # another writer appended first: at once, after it (the store backs off contention itself)
                    self._last_seq[sid] = tail[-1].seq if tail else 0
                continue
            self._last_seq[sid] = expected + len(messages)
            view.tail = after
            for appended in [key, *also] if key is not None else also:
                self._appended.put(f"{sid}\x00{appended}", True)
            return True
        raise Conflict(f"langgraph: the log of thread {thread_id!r} kept moving; nothing was written")

    def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        folded: Sequence[Held] = (),
    ) -> Flow[RunnableConfig]:
        """Append the checkpoint to the thread's log, with the writes `folded` into its record (the writes
        put for its parent just before it, `langgraph_held`: read back as records of their own, `_unfolded`),
        then the thread's conversation view when it is due."""
        thread_id = str(config["configurable"]["thread_id"])
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        parent = get_checkpoint_id(config)
        stored_metadata = get_serializable_checkpoint_metadata(config, metadata)
        run_id = stored_metadata.get("run_id")
        if run_id:
            yield from self._index_run(str(run_id), thread_id)
        messages = _channel_messages(checkpoint)
        body = self._record_body(thread_id, ns, checkpoint, messages, {"parent": parent, "md": stored_metadata})
        if folded:
            body[FOLDED] = [held.body for held in folded]
        message = {"role": checkpoint_role(ns), "id": _checkpoint_mid(ns, checkpoint["id"]), "content": body}
        key = _digest("c", ns, checkpoint["id"])
        view = self._view(thread_id)
        stopped = not ns and view.stopped_at == checkpoint["id"]  # its run stopped (its writes came first)
        source = str(stored_metadata.get("source", ""))
        due = not ns and (stopped or _view_due(messages, source))
        ends = not ns and (stopped or (source == "loop" and _idle(checkpoint)))  # a run's end, likely
        also = [held.key for held in folded]
        written = yield from self._append(thread_id, [message], key, also, snapshot=ends)
        if folded and not written:  # the checkpoint was stored already (a put sent again): its writes alone
            for held in folded:
                yield from self._append(thread_id, [{"role": writes_role(ns), "content": held.body}], held.key)
        if not ns:  # the graph's own messages channel is the thread's conversation (a subgraph's is not)
            view.checkpoint, view.unviewed = checkpoint["id"], messages
            if due:
                view.stopped_at = ""
                yield from self._converse(thread_id)
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    def _record_body(
        self, thread_id: str, ns: str, checkpoint: Checkpoint, messages: list[BaseMessage], given: dict[str, Any]
    ) -> dict[str, Any]:
        """A checkpoint's record: its namespace, id, parent and metadata (`given`), and the checkpoint; a root
        checkpoint whose `messages` channel holds only messages, on a thread whose conversation this saver
        knows, refers to the conversation's messages instead of holding them (`entries_of`)."""
        body: dict[str, Any] = {"ns": ns, "id": checkpoint["id"], "parent": given["parent"]}
        known = self._knowns.get(thread_id)
        only_messages = bool(messages) and len(messages) == len(checkpoint["channel_values"][MESSAGES_CHANNEL])
        if not ns and known is not None and only_messages:  # by reference to the conversation
            values = {k: v for k, v in checkpoint["channel_values"].items() if k != MESSAGES_CHANNEL}
            body["cp"] = self._dumps({**checkpoint, "channel_values": values})
            body["refs"] = {MESSAGES_CHANNEL: entries_of(messages, known, self._dumps)}
        else:
            body["cp"] = self._dumps(checkpoint)
        body["md"] = self._dumps(given["md"])
        return body

    def _converse(self, thread_id: str) -> Flow[None]:
        """Append the messages of the latest root checkpoint's `messages` channel this saver put that the
        thread's conversation does not hold yet to the thread's own session, as LangChain messages
        (`message_to_dict`, with the usage they report), so the thread the user named reads as its
        conversation. New messages are those after the last one the conversation holds; when that one is no
        longer in the channel (a time-travel fork, a removed message), those the conversation's latest
        CONVERSATION_LOOKBACK do not hold. The checkpoints hold every message first: this is a view of them."""
        view = self._view(thread_id)
        messages, view.unviewed = view.unviewed, []
        if not messages:
            return
        sid = self.thread_session_id(thread_id)
        ids = [m.id for m in messages]
        for _ in range(CHANGE_ATTEMPTS):
            known_tail = self._conversation_tail.get(thread_id)
            if known_tail is None:
                tail = yield from ask(CALLS.last_messages, sid, 1, owner=self.owner)
                known_tail = (message_id(tail[-1]), tail[-1].seq) if tail else ("", 0)
            last, seq = known_tail
            if not last and not seq:
                new = messages
            elif last in ids:
                new = messages[ids.index(last) + 1 :]
            else:
                held = yield from ask(CALLS.last_messages, sid, CONVERSATION_LOOKBACK, owner=self.owner)
                self._known(thread_id).learn(held)
                viewed = {message_id(r) for r in held}
                new = [m for m in messages if m.id not in viewed]
            stored = [with_reported_usage({"role": m.type[:64], "content": message_to_dict(m)}) for m in new]
            try:  # as of the conversation's end last seen: a write that got in first is read, then skipped
                for start in range(0, len(stored), APPEND_MAX):
                    part = stored[start : start + APPEND_MAX]
                    written = yield from ask(CALLS.append_messages, sid, part, expected_seq=seq, owner=self.owner)
                    self._known(thread_id).learn(written)
                    seq = written[-1].seq
            except Conflict:
                self._conversation_tail.drop(thread_id)
                continue
            self._conversation_tail.put(thread_id, (str(messages[-1].id or ""), seq))
            return
        raise Conflict(f"langgraph: the conversation of thread {thread_id!r} kept moving")

    def _view(self, thread_id: str) -> _View:
        """What the thread's conversation view waits for (made empty when nothing yet)."""
        return self._views.get_or_make(thread_id, _View)

    def _known(self, thread_id: str) -> Known:
        """What this saver knows of the thread's conversation (made empty when it knows nothing yet)."""
        return self._knowns.get_or_make(thread_id, Known)

    def _rebuilt(self, thread_id: str, body: dict[str, Any]) -> Flow[Checkpoint]:
        """A stored checkpoint with its `messages` channel rebuilt from its entries: each run of the
        conversation from what this saver knows, else from the conversation's current line (read once, for
        the span of every run), else from a branch of it that holds that run (a rewind kept it there).
        Conflict when no line holds one: a message it needs was popped or its branch deleted."""
        checkpoint: Checkpoint = self._loads(body["cp"])
        entries = (body.get("refs") or {}).get(MESSAGES_CHANNEL)
        if entries is None:
            return checkpoint
        known = self._known(thread_id)
        messages = rebuild(entries, [known.by_seq], self._loads)
        wanted = runs(entries)
        if messages is None and wanted:
            first, last = min(r[0] for r in wanted), max(r[1] for r in wanted)
            unknown = [s for a, b, _ in wanted for s in range(a, b + 1) if s not in known.by_seq]
            if unknown:  # what this saver has not seen (another process's turns): read those first
                known.learn((yield from self._conversation_records(thread_id, min(unknown), max(unknown), None)))
                messages = rebuild(entries, [known.by_seq], self._loads)
            read_whole = bool(unknown) and (min(unknown), max(unknown)) == (first, last)
            if messages is None and not read_whole:  # what it knew was changed meanwhile (a rewind)
                known.learn((yield from self._conversation_records(thread_id, first, last, None)))
                messages = rebuild(entries, [known.by_seq], self._loads)
            if messages is None:
                sid = self.thread_session_id(thread_id)
                branches = yield from ask(CALLS.list_branches, sid, owner=self.owner)
                lines = [known.by_seq]
                for branch in reversed(branches):  # the latest first; a session keeps at most 100: one page
                    records = yield from self._conversation_records(thread_id, first, last, branch.id)
                    lines.append(line_of(records))
                    if (messages := rebuild(entries, lines, self._loads)) is not None:
                        break
        if messages is None:
            raise Conflict(
                f"langgraph: checkpoint {body['id']!r} of thread {thread_id!r} holds messages its conversation "
                "no longer has (popped, or a deleted branch)"
            )
        checkpoint["channel_values"][MESSAGES_CHANNEL] = messages
        return checkpoint

    def _conversation_records(
        self, thread_id: str, first: int, last: int, branch: str | None
    ) -> Flow[list[MessageRecord]]:
        """The thread conversation's messages `first`..`last` (of `branch`, or of its current line)."""
        records: list[MessageRecord] = []
        cursor: str | None = None
        while True:
            page = yield from ask(
                CALLS.list_messages,
                self.thread_session_id(thread_id),
                after_seq=first - 1,
                before_seq=last + 1,
                cursor=cursor,
                branch=branch,
                owner=self.owner,
            )
            records += page.items
            if (cursor := page.next_cursor) is None:
                return records

    def _channel_ids(self, body: dict[str, Any], conversation: list[str]) -> list[str] | None:
        """The message ids of a stored checkpoint's `messages` channel, its runs read in `conversation` (the
        message ids of a conversation by position); None when a run is not there."""
        entries = (body.get("refs") or {}).get(MESSAGES_CHANNEL)
        if entries is None:
            channel = (self._loads(body["cp"]).get("channel_values") or {}).get(MESSAGES_CHANNEL)
            return [str(m.id or "") for m in channel or [] if isinstance(m, BaseMessage)]
        return channel_ids(
            entries, lambda seq: conversation[seq - 1] if 0 < seq <= len(conversation) else None, self._loads
        )

    def _writes_record(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> tuple[dict[str, Any], str]:
        """The record body of a task's writes for the checkpoint `config` names, and its key."""
        ns = str(config["configurable"].get("checkpoint_ns", ""))
        cid = str(config["configurable"]["checkpoint_id"])
        stored = [
            [WRITES_IDX_MAP.get(channel, i), channel, self._dumps(value)] for i, (channel, value) in enumerate(writes)
        ]
        body = {"ns": ns, "cp": cid, "task": task_id, "path": task_path, "w": stored}
        return body, _digest("w", ns, cid, task_id, repr(stored))

    @contextlib.contextmanager
    def _taking(
        self, config: RunnableConfig, checkpoint: Checkpoint, loop: asyncio.AbstractEventLoop | None
    ) -> Iterator[list[Held]]:
        """Around a put: the writes waiting for this checkpoint (`langgraph_held`), taken to be written in its
        record; each of their calls is then told how the put ended (its error, if it raised)."""
        thread_id, ns, parent = _checkpoint_of(config)
        self._held.begin(thread_id, ns, checkpoint["id"])
        taken = self._held.take(thread_id, ns, parent, loop)
        try:
            yield taken
        except BaseException as exc:
            self._held.end(thread_id, ns, checkpoint["id"])
            finish_all(taken, exc)
            raise
        self._held.end(thread_id, ns, checkpoint["id"])
        finish_all(taken, None)

    def _hold(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
        loop: asyncio.AbstractEventLoop | None,
    ) -> Held | None:
        """The writes held for the checkpoint that follows them (`langgraph_held`; writes after which the run
        stops only until the checkpoint they were put for is stored); None for a call that names no checkpoint."""
        if not writes or not config["configurable"].get("checkpoint_id"):
            return None
        body, key = self._writes_record(config, writes, task_id, task_path)
        thread_id = str(config["configurable"]["thread_id"])
        fold = not any(channel in STOPS for channel, _ in writes)
        return self._held.hold(Held(thread_id, body["ns"], body["cp"], body, key, loop, fold=fold))

    def _put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str,
        held: Held | None = None,
    ) -> Flow[None]:
        """Append a task's writes as a record of their own (`held`: as they were held, already encoded)."""
        thread_id = str(config["configurable"]["thread_id"])
        body, key = (
            (held.body, held.key) if held is not None else self._writes_record(config, writes, task_id, task_path)
        )
        ns, cid = body["ns"], body["cp"]
        stops = not ns and any(channel in STOPS for channel, _ in writes)
        yield from self._append(thread_id, [{"role": writes_role(ns), "content": body}], key, snapshot=stops)
        if stops:  # the run stops: its conversation is shown
            view = self._view(thread_id)
            if view.checkpoint == cid:
                yield from self._converse(thread_id)
            else:  # LangGraph's background saves may put the checkpoint the run stopped at after its writes
                view.stopped_at = cid

    def _index_run(self, run_id: str, thread_id: str) -> Flow[None]:
        """Record that `run_id` has checkpoints in `thread_id` (once per pair), in the run's own session."""
        if (run_id, thread_id) in self._indexed:
            return
        sid = self._run_session_id(run_id)
        try:
            yield from ask(
                CALLS.create_session,
                self.owner,
                session_id=sid,
                metadata={"framework": FRAMEWORK, "langgraph": "run", "threads": [thread_id]},
                retention=self.retention,
            )
        except SessionExists:
            for _ in range(CHANGE_ATTEMPTS):
                found = yield from ask(CALLS.get_session, sid, owner=self.owner)
                if found is None or thread_id in found.metadata.get("threads", []):
                    break
                threads = [*found.metadata.get("threads", []), thread_id]
                yield from ask(
                    CALLS.update_session, sid, metadata={**found.metadata, "threads": threads}, owner=self.owner
                )
        self._indexed.add((run_id, thread_id))

    # ------------------------------------------------------------ deleting, copying, rewriting

    def _delete_thread(self, thread_id: str) -> Flow[None]:
        generation = yield from self._generation(thread_id, refresh=True)
        for n in range(0, (generation or 0) + 2):  # a crashed rewrite may have left generation n + 1
            yield from ask(CALLS.delete_session, self.log_session_id(thread_id, n), owner=self.owner)
        yield from ask(CALLS.delete_session, self.thread_session_id(thread_id), owner=self.owner)
        self._generations.pop(thread_id, None)
        for cache in (self._views, self._conversation_tail, self._knowns):
            cache.drop(thread_id)  # a thread made again under this id is another one

    def _copy_thread(self, source: str, target: str) -> Flow[None]:
        """A new target thread is a fork of the source's: its log (every checkpoint and write, however many:
        the store's `fork_session` is bounded) and its conversation, in a few requests. Into a thread that
        exists, the source's checkpoints are appended to its log."""
        generation = yield from self._generation(source, refresh=True)
        if generation is None:
            return
        yield from self._converse(source)  # the conversation copied is the source's whole view
        existing = yield from self._generation(target, refresh=True)
        if existing is None and (yield from self._fork_thread(source, target, generation)):
            return
        records = yield from self._records(source, newest_first=False, roles=None)
        messages = []
        for record in records:
            if record.role == SEAL:
                continue
            message = _as_message(record)
            if _is_checkpoint(record) and "refs" in record.content:  # the target's conversation is another one
                body = {k: v for k, v in record.content.items() if k != "refs"}
                body["cp"] = self._dumps((yield from self._rebuilt(source, record.content)))
                message = {**message, "content": body}
            messages.append(message)
        for start in range(0, len(messages), APPEND_MAX):
            yield from self._append(target, messages[start : start + APPEND_MAX], None)

    def _fork_thread(self, source: str, target: str, generation: int) -> Flow[bool]:
        """Fork the source thread's log, then its session (conversation, and the state naming the log's
        generation), under the target's ids; False when the target was made meanwhile (nothing forked)."""
        meta = {"framework": FRAMEWORK, "langgraph_thread": target}
        try:
            yield from ask(
                CALLS.fork_session,
                self.log_session_id(source, generation),
                new_session_id=self.log_session_id(target, generation),
                metadata={**meta, "langgraph": "log"},
                owner=self.owner,
            )
        except SessionExists:
            return False
        try:
            yield from ask(
                CALLS.fork_session,
                self.thread_session_id(source),
                new_session_id=self.thread_session_id(target),
                title=target,
                metadata={**meta, "langgraph": "thread"},
                owner=self.owner,
            )
        except SessionExists:  # the thread was made meanwhile: its own log is another generation's
            yield from ask(CALLS.delete_session, self.log_session_id(target, generation), owner=self.owner)
            return False
        self._generations[target] = generation
        return True

    def _rewrite(self, thread_id: str, keep: Callable[[list[MessageRecord]], list[MessageRecord]]) -> Flow[None]:
        """Replace the thread's log by the records `keep` chooses of it (see the module docstring)."""
        generation = yield from self._generation(thread_id, refresh=True)
        if generation is None:
            return
        anchor = self.thread_session_id(thread_id)
        snapshot = yield from ask(CALLS.load_state, anchor, owner=self.owner)
        state = dict(snapshot.state or {}) if snapshot is not None else {}
        lock = state.get("rewriting")
        if lock and datetime.fromisoformat(lock) > datetime.now(UTC) - LOCK_STALE:
            raise Conflict(f"langgraph: thread {thread_id!r} is being rewritten by another call; try again")
        version = snapshot.version if snapshot is not None else 0
        # take the thread for this rewrite (a crashed one's lock goes stale)
        version = yield from ask(
            CALLS.save_state,
            anchor,
            {**state, "generation": generation, "rewriting": datetime.now(UTC).isoformat()},
            expected_version=version,
            owner=self.owner,
        )
        old, new = self.log_session_id(thread_id, generation), self.log_session_id(thread_id, generation + 1)
        yield from ask(CALLS.delete_session, new, owner=self.owner)  # what a crashed rewrite left
        yield from ask(
            CALLS.create_session,
            self.owner,
            session_id=new,
            metadata={"framework": FRAMEWORK, "langgraph_thread": thread_id, "langgraph": "log"},
            retention=self.retention,
        )
        copied = 0
        records = yield from self._records(thread_id, newest_first=False, roles=None)
        while True:
            last = records[-1].seq if records else copied
            kept = [_as_message(r) for r in keep(records) if r.role != SEAL]
            for start in range(0, len(kept), APPEND_MAX):
                yield from ask(CALLS.append_messages, new, kept[start : start + APPEND_MAX], owner=self.owner)
            copied = last
            try:  # seal the old log where it was read; a writer that got in first is copied next
                yield from ask(
                    CALLS.append_messages,
                    old,
                    [{"role": SEAL, "content": {"next": generation + 1}}],
                    expected_seq=last,
                    owner=self.owner,
                )
                break
            except Conflict:
                page = yield from ask(CALLS.list_messages, old, after_seq=last, owner=self.owner)
                records = page.items
        state.pop("rewriting", None)
        yield from ask(
            CALLS.save_state,
            anchor,
            {**state, "generation": generation + 1},
            expected_version=version,
            owner=self.owner,
        )
        self._generations[thread_id] = generation + 1
        self._last_seq.pop(old, None)
        yield from ask(CALLS.delete_session, old, owner=self.owner)

    def _prune(self, thread_ids: Sequence[str], strategy: str) -> Flow[None]:
        for thread_id in thread_ids:
            if strategy == "delete":
                yield from self._delete_thread(thread_id)
            else:
                yield from self._rewrite(thread_id, _latest_per_namespace)

    def _delete_for_runs(self, run_ids: Sequence[str]) -> Flow[None]:
        doomed = set(run_ids)
        for run_id in run_ids:
            sid = self._run_session_id(run_id)
            found = yield from ask(CALLS.get_session, sid, owner=self.owner)
            for thread_id in found.metadata.get("threads", []) if found is not None else []:
                yield from self._rewrite(thread_id, lambda records: self._without_runs(records, doomed))
            yield from ask(CALLS.delete_session, sid, owner=self.owner)
            self._indexed = {pair for pair in self._indexed if pair[0] != run_id}

    def _without_runs(self, records: list[MessageRecord], runs: set[str]) -> list[MessageRecord]:
        """The records but the checkpoints of those runs and their writes."""
        gone = {
            (r.content["ns"], r.content["id"])
            for r in records
            if _is_checkpoint(r) and self._loads(r.content["md"]).get("run_id") in runs
        }
        return [
            r
            for r in records
            if not (_is_checkpoint(r) and (r.content["ns"], r.content["id"]) in gone)
            and not (_is_writes(r) and (r.content["ns"], r.content["cp"]) in gone)
        ]

    # ------------------------------------------------------------ LangGraph's interface

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._run_sync(self._get_tuple(config))

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._run_async(self._get_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        yield from self._run_sync(self._list(config, filter, before, limit))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for tup in await self._run_async(self._list(config, filter, before, limit)):
            yield tup

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id, ns, parent = _checkpoint_of(config)
        deadline = time.monotonic() + WRITES_WAIT if _follows_writes(checkpoint, metadata) else 0.0
        while self._held.expects_writes(thread_id, ns, parent) and time.monotonic() < deadline:
            time.sleep(WRITES_POLL)  # its step's tasks' writes come first: they are waited for a moment
        with self._taking(config, checkpoint, None) as taken, self._lock(thread_id):
            return self._run_sync(self._put(config, checkpoint, metadata, taken))

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        thread_id, ns, parent = _checkpoint_of(config)
        deadline = time.monotonic() + WRITES_WAIT if _follows_writes(checkpoint, metadata) else 0.0
        while self._held.expects_writes(thread_id, ns, parent) and time.monotonic() < deadline:
            await asyncio.sleep(WRITES_POLL)
        with self._taking(config, checkpoint, asyncio.get_running_loop()) as taken:
            async with self._async_lock(thread_id):
                return await self._run_async(self._put(config, checkpoint, metadata, taken))

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        held = self._hold(config, writes, task_id, task_path, None)
        if held is not None:
            while (left := self._held.left(held)) > 0 and not held.done.wait(left):
                pass
            if not self._held.release(held):  # its checkpoint took it: stored with it
                held.done.wait()
                if held.error is not None:
                    raise held.error
                return
        with self._lock(str(config["configurable"]["thread_id"])):
            self._run_sync(self._put_writes(config, writes, task_id, task_path, held))

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        held = self._hold(config, writes, task_id, task_path, asyncio.get_running_loop())
        if held is not None:
            try:
                while (left := self._held.left(held)) > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(held.done_async.wait(), left)
                        break
            finally:  # (cancelled while waiting: no longer waiting)
                mine = self._held.release(held)
            if not mine:  # its checkpoint took it: stored with it
                await held.done_async.wait()
                if held.error is not None:
                    raise held.error
                return
        async with self._async_lock(str(config["configurable"]["thread_id"])):
            await self._run_async(self._put_writes(config, writes, task_id, task_path, held))

    def delete_thread(self, thread_id: str) -> None:
        self._run_sync(self._delete_thread(str(thread_id)))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._run_async(self._delete_thread(str(thread_id)))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._run_sync(self._delete_for_runs(list(run_ids)))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._run_async(self._delete_for_runs(list(run_ids)))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._run_sync(self._copy_thread(str(source_thread_id), str(target_thread_id)))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._run_async(self._copy_thread(str(source_thread_id), str(target_thread_id)))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._run_sync(self._prune([str(t) for t in thread_ids], strategy))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._run_async(self._prune([str(t) for t in thread_ids], strategy))

    def get_next_version(self, current: str | None, channel: None) -> str:
        """Versions that sort as strings and never collide across branches (as LangGraph's own savers)."""
        number = 0 if current is None else int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():.16f}"  # nosec B311: a tie-breaker, not a secret


def _channel_messages(checkpoint: Checkpoint) -> list[BaseMessage]:
    """The messages of a checkpoint's `messages` channel (none when it has no such channel)."""
    channel = (checkpoint.get("channel_values") or {}).get(MESSAGES_CHANNEL)
    return [m for m in channel if isinstance(m, BaseMessage)] if isinstance(channel, list) else []


def _view_due(messages: list[BaseMessage], source: str) -> bool:
    """Whether the conversation view is written at a checkpoint holding `messages`: at an answer (an AI
    message without tool calls ends the channel), when VIEW_BATCH messages have come since the last answer,
    and at a run's input when an earlier run stopped before its answer (a crash): not at every super-step."""
    waiting = _waiting(messages)
    return waiting == 0 or waiting >= VIEW_BATCH or (source == "input" and waiting > 1)


def _idle(checkpoint: Checkpoint) -> bool:
    """Whether a step's checkpoint triggers no node: no trigger channel (`branch:to:<node>`, the input's
    `__start__`, sent tasks) holds a value. LangGraph then ends the run there, unless a graph of its own kind
    triggers nodes otherwise: a wrong guess costs a write of the log's tail, never a wrong read (`_resumed`
    takes the tail only while the log has not moved)."""
    return not any(
        channel.startswith("branch:to:") or channel in IDLE_UNLESS for channel in checkpoint["channel_values"]
    )


def _waiting(messages: list[BaseMessage]) -> int:
    """How many messages of a `messages` channel came after its last answer (an AI message without tool
    calls): 0 when it ends with one."""
    answered = [i for i, m in enumerate(messages) if isinstance(m, AIMessage) and not m.tool_calls]
    return len(messages) - (answered[-1] + 1 if answered else 0)


def _bridge_step(bridge: SyncBridge) -> Callable[[StoreCall], Any]:
    """Perform a flow's store call synchronously, on either store."""
    return lambda step: bridge(step.method, *step.args, **step.kwargs)


def _checkpoint_mid(ns: str, cid: str) -> str:
    """The message id of a checkpoint: stable, one per (namespace, checkpoint id)."""
    return "c" + _digest(ns, cid)


def _as_message(record: MessageRecord) -> dict[str, Any]:
    """A stored record as a message to append elsewhere (same role, id and content; a record `_unfolded`
    made has no id of its own)."""
    if not record.id:
        return {"role": record.role, "content": record.content}
    return {"role": record.role, "id": record.id, "content": record.content}


def _unfolded(records: list[MessageRecord], newest_first: bool) -> list[MessageRecord]:
    """The log's records as if each write folded into a checkpoint's record (`_put`) were a record of its
    own, just before that checkpoint (in the order asked; it has the checkpoint's seq and no id)."""
    out: list[MessageRecord] = []
    for record in records:
        folded = record.content.get(FOLDED) if _is_checkpoint(record) else None
        if not folded:
            out.append(record)
            continue
        body = {k: v for k, v in record.content.items() if k != FOLDED}
        writes = [record.model_copy(update={"role": writes_role(w["ns"]), "content": w, "id": ""}) for w in folded]
        checkpoint = record.model_copy(update={"content": body})
        out += [checkpoint, *reversed(writes)] if newest_first else [*writes, checkpoint]
    return out


def _checkpoint_of(config: RunnableConfig) -> tuple[str, str, str | None]:
    """(thread, namespace, parent checkpoint id) of a `put`'s config."""
    conf = config["configurable"]
    return str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")), get_checkpoint_id(config)


def _latest_per_namespace(records: list[MessageRecord]) -> list[MessageRecord]:
    """The latest checkpoint of each namespace and the writes put for it."""
    latest: dict[str, str] = {}
    for record in records:
        if _is_checkpoint(record):
            latest[record.content["ns"]] = record.content["id"]
    kept = {(ns, cid) for ns, cid in latest.items()}
    return [
        r
        for r in records
        if (_is_checkpoint(r) and (r.content["ns"], r.content["id"]) in kept)
        or (_is_writes(r) and (r.content["ns"], r.content["cp"]) in kept)
    ]


def _tail_after(tail: _Tail | None, expected: int, messages: list[dict[str, Any]], seq: int) -> _Tail | None:
    """The log's tail once `messages` are appended at `expected` (the log then ends at `seq`), from `tail`
    (as this saver knew it); None when the log had moved from it (another writer's records may be in it)
    and no root checkpoint starts it again."""
    current = tail if tail is not None and tail.seq == expected else None
    for message in messages:
        role, body = message["role"], message["content"]
        if role == ROOT_CHECKPOINT:
            current = _Tail({k: v for k, v in body.items() if k != FOLDED}, (), seq)
        elif current is not None and role == ROOT_WRITES and body["cp"] == current.checkpoint["id"]:
            current = _Tail(current.checkpoint, (*current.writes, body), seq)
    return None if current is None else _Tail(current.checkpoint, current.writes, seq)


def _follows_writes(checkpoint: Checkpoint, metadata: CheckpointMetadata) -> bool:
    """Whether a checkpoint is a step's, made of the writes of that step's tasks (which LangGraph puts first,
    unless its durability is "exit"): the step's tasks' writes are then to be folded into it."""
    return metadata.get("source") == "loop" and bool(checkpoint.get("updated_channels"))


def _said_tail(said: Any) -> _Tail | None:
    """The tail a log's state says (`_Tail.snapshot`), or None when it says none or is not one (a state
    written by something else is never taken for a checkpoint)."""
    if not isinstance(said, dict) or not isinstance(said.get("seq"), int):
        return None
    checkpoint, writes = said.get("checkpoint"), said.get("writes")
    if not isinstance(checkpoint, dict) or checkpoint.get("ns") != "" or not isinstance(writes, list):
        return None
    if not all(isinstance(checkpoint.get(k), str | list) for k in ("id", "cp", "md")):
        return None
    if not all(
        isinstance(w, dict) and w.get("cp") == checkpoint["id"] and isinstance(w.get("w"), list) for w in writes
    ):
        return None
    return _Tail(checkpoint, tuple(writes), said["seq"])


def _generation_of(state: Any) -> int:
    """The generation of its log a thread's state names (0 when it names none)."""
    return int(state.get("generation", 0)) if isinstance(state, dict) else 0
