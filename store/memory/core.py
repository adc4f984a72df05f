"""The in-memory backend's core: its records (sessions, artifacts, uploads, idempotency claims) and the
helpers every domain shares (the lock, copies through JSON, liveness, touching a session)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from store.artifact_reader import CHUNK
from store.conversation.preview import preview_of
from store.core import codec, rules
from store.core.streams import read_chunk
from store.core.timeutil import expiry, is_expired
from store.core.validation import new_id
from store.errors import SessionNotFound
from store.models import ArtifactVersion, Checkpoint, Message, MessageRecord, Session, StateSnapshot
from store.requests import Presign
from store.settings import Settings


def read_all(data: Any) -> bytes:
    """All the bytes of artifact data (bytes, a readable stream, or an iterator of chunks)."""
    if isinstance(data, bytes):
        return data
    out = bytearray()
    while chunk := read_chunk(data, CHUNK):
        out += chunk
    return bytes(out)


@dataclass
class ArtifactEntry:
    latest: int = 0
    deleted_through: int = 0
    live: bool = False
    versions: dict[int, tuple[ArtifactVersion, bytes]] = field(default_factory=dict)

    def visible(self) -> list[tuple[ArtifactVersion, bytes]]:
        if not self.live:
            return []
        return [self.versions[v] for v in sorted(self.versions) if v > self.deleted_through]


@dataclass
class UploadEntry:
    session_id: str
    owner: str
    life: datetime  # the created_at of the session it was issued in
    request: Presign
    expires_at: datetime
    data: bytes | None = None
    version: ArtifactVersion | None = None


@dataclass
class IdempotencyClaim:
    first_seq: int
    count: int
    digest: str
    expires_at: datetime
    first_id: str = ""


@dataclass
class BranchEntry:
    """A line of the transcript kept aside (`rewind_session`), with what goes with it."""

    messages: list[MessageRecord]
    from_seq: int
    created_at: datetime
    usage: Any  # TokenUsage: the totals of its messages
    compaction_seq: int | None
    preview: str | None  # the session's preview when it was the session's transcript
    state: StateSnapshot | None


@dataclass
class CopyJob:
    """A transcript being copied into a session, a step at a time (`step_copies`): `pending`, the messages
    still to bring in as they were when the copy began, out of `source` (the session whose pin keeps them
    unchanged meanwhile; None for a rewind's copy out of the session's own branch)."""

    pending: list[MessageRecord]
    source: str | None


@dataclass
class SessionEntry:
    session: Session
    messages: list[MessageRecord] = field(default_factory=list)
    state: StateSnapshot | None = None
    slots: dict[str, Any] = field(default_factory=dict)
    checkpoint: Checkpoint | None = None
    claims: dict[str, IdempotencyClaim] = field(default_factory=dict)
    artifacts: dict[str, ArtifactEntry] = field(default_factory=dict)
    runs: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)
    branches: dict[str, BranchEntry] = field(default_factory=dict)
    states_kept: dict[int, StateSnapshot] = field(default_factory=dict)  # save_full's states, by ring slot
    copy: CopyJob | None = None  # the copy into this session still going on
    pins: dict[str, int] = field(default_factory=dict)  # copies out of it still going on: target -> last message

    @property
    def pinned(self) -> int:
        """The last message a copy out of the session still takes (0: none)."""
        return max(self.pins.values(), default=0)

    def inventory(self, sid: str) -> list[str]:
        """What the session holds, named as `MemoryBackend.inventory` names it."""
        found = [f"session:{sid}"]
        found += [f"message:{sid}/{m.seq}" for m in self.messages]
        found += [f"state:{sid}"] if self.state is not None else []
        found += [f"slot:{sid}/{name}" for name in self.slots]
        found += [f"checkpoint:session/{sid}"] if self.checkpoint is not None else []
        found += [f"claim:{sid}/{key}" for key in self.claims]
        for name, art in self.artifacts.items():
            found += [f"artifact:{sid}/{name}/{v}" for v in art.versions]
        for run, batches in self.runs.items():
            found += [f"trace:{sid}/{run}/{n}" for n in range(len(batches))]
        for name, branch in self.branches.items():
            found += [f"message:{sid}/{name}/{m.seq}" for m in branch.messages]
        found += [f"state:{sid}/kept/{slot}" for slot in self.states_kept]
        return found


COPY_STEP_SECONDS = 0.25  # how often a copy going on takes a step by itself (the stack's copy job: about a second)


class MemoryCore:
    """Sessions in a dict, guarded by one re-entrant lock; the domains' operations build on it.

    `copies_in_background` (True): a long fork's or rewind's copy goes on by itself after its call, a step
    every COPY_STEP_SECONDS on a thread of its own (ended when no copy is left), as the stack's copy function
    carries it on; False leaves each step to `reclaim` (a test driving the copy, as the DynamoDB tests drive
    the stack's functions)."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.copies_in_background = True
        self._copier: threading.Thread | None = None
        self._lock = threading.RLock()
        self._sessions: dict[str, SessionEntry] = {}
        self._checkpoints: dict[tuple[str, str | None, str], Checkpoint] = {}  # (scope, owner, key)
        self._uploads: dict[str, UploadEntry] = {}
        self._memories: dict[str, dict[str, Any]] = {}  # owner -> sort key -> memory (store/memory/memories.py)
        self._owner_records: dict[tuple[str, str], Any] = {}  # (owner, kind) -> its records (owner records)

    def _copy(self, value: Any) -> Any:
        """A deep copy through JSON, exactly as a stored value comes back (the same size limit too)."""
        return codec.decode(*codec.encode(value, limit=self.settings.max_payload_bytes))

    def _encode_all(self, values: list[Any], what: str) -> list[tuple[str, bytes]]:
        limit = self.settings.max_payload_bytes
        return codec.encode_all(values, what, limit, limit)

    # ------------------------------------------------------------ helpers

    def _now(self) -> datetime:
        return self.settings.clock()

    def _drop_index_of(self, owner: str, session_id: str) -> None:
        """Remove a deleted session's message index (the backend that keeps one says how)."""

    def _live(self, session_id: str, owner: str | None) -> SessionEntry | None:
        entry = self._sessions.get(session_id)
        if entry is None or is_expired(entry.session.expires_at, self._now()):
            return None
        if owner is not None and entry.session.owner != owner:
            return None
        return entry

    def _need(self, session_id: str, owner: str | None, *, copying_ok: bool = False) -> SessionEntry:
        """The live session (SessionNotFound otherwise); a Conflict while its transcript is still being copied
        in, unless `copying_ok`."""
        entry = self._live(session_id, owner)
        if entry is None:
            raise SessionNotFound(session_id)
        if entry.copy is not None and not copying_ok:
            raise rules.still_copying(session_id, entry.session.copied, entry.session.last_seq)
        return entry

    # ------------------------------------------------------------ copies (a long fork's or rewind's)

    def _copy_later(self) -> None:
        """A copy has begun: see that it goes on by itself (unless `copies_in_background` is off)."""
        with self._lock:
            if not self.copies_in_background or self._copier is not None:
                return
            self._copier = threading.Thread(target=self._copy_in_background, name="agent-store-copies", daemon=True)
            self._copier.start()

    def _copy_in_background(self) -> None:
        """Step every copy going on, a step every COPY_STEP_SECONDS, until none is left (or background copies
        are turned off)."""
        while True:
            time.sleep(COPY_STEP_SECONDS)
            with self._lock:
                if not self.copies_in_background or not any(e.copy is not None for e in self._sessions.values()):
                    self._copier = None
                    return
                self.step_copies()

    def step_copies(self) -> None:
        """One step of every copy going on (at most COPY_PAGE messages each), as the stack's copy job takes
        them (`reclaim` runs it). A copy that has everything is over: the session is an ordinary one, and its
        source's pin goes."""
        with self._lock:
            for session_id, entry in list(self._sessions.items()):
                if entry.copy is not None:
                    self._copy_step(session_id, entry, entry.copy)

    def _copy_step(self, session_id: str, entry: SessionEntry, job: CopyJob) -> None:
        taken, job.pending = job.pending[: rules.COPY_PAGE], job.pending[rules.COPY_PAGE :]
        moved = [m.model_copy(update={"session_id": session_id}, deep=True) for m in taken]
        entry.messages.extend(moved)
        usage = entry.session.usage
        for m in moved:
            usage = usage.plus(m.usage)
        changes: dict[str, Any] = {"usage": usage, "copied": len(entry.messages)}
        if not job.pending:
            entry.copy = None
            changes.update(copying=False, copied=None)
            source = self._sessions.get(job.source) if job.source is not None else None
            if source is not None:
                source.pins.pop(session_id, None)
        entry.session = entry.session.model_copy(update=changes)

    def _finish_copies_out_of(self, entry: SessionEntry) -> None:
        """Bring every copy out of `entry`'s transcript to its end (before the source goes)."""
        for target in list(entry.pins):
            copying = self._sessions.get(target)
            while copying is not None and copying.copy is not None:
                self._copy_step(target, copying, copying.copy)
            entry.pins.pop(target, None)

    def _let_go(self, entry: SessionEntry, session_id: str) -> None:
        """A session whose copy will not finish (it is being deleted) lets go of its source's pin."""
        if entry.copy is not None and entry.copy.source is not None:
            source = self._sessions.get(entry.copy.source)
            if source is not None:
                source.pins.pop(session_id, None)

    def _touch(self, entry: SessionEntry, **changes: Any) -> None:
        now = self._now()
        ret = entry.session.retention
        changes["updated_at"] = now
        if ret is not None:
            changes["expires_at"] = expiry(now, ret)
        entry.session = entry.session.model_copy(update=changes)

    def _records(self, session_id: str, messages: list[Message], first_seq: int, what: str) -> list[MessageRecord]:
        encoded = self._encode_all([m.body() for m in messages], what)
        return self._as_records(session_id, messages, encoded, first_seq)

    def _as_records(
        self, session_id: str, messages: list[Message], encoded: list[tuple[str, bytes]], first_seq: int
    ) -> list[MessageRecord]:
        now = self._now()
        return [
            MessageRecord.model_validate(
                {
                    **codec.decode(*enc),
                    "role": m.role,
                    "id": m.id or new_id(),
                    "seq": first_seq + i,
                    "session_id": session_id,
                    "created_at": now,
                    "kind": "message",
                    "usage": m.usage.model_dump(exclude_none=True) if m.usage else None,
                }
            )
            for i, (m, enc) in enumerate(zip(messages, encoded, strict=True))
        ]

    def _commit(self, entry: SessionEntry, records: list[MessageRecord], **changes: Any) -> None:
        """Add `records` to the transcript with the head's changes: everything is worked out first, so a
        failure changes nothing."""
        usage = entry.session.usage
        for r in records:
            usage = usage.plus(r.usage)
        if entry.session.preview is None and (preview := preview_of(records)) is not None:
            changes["preview"] = preview
        self._touch(entry, last_seq=entry.session.last_seq + len(records), usage=usage, **changes)
        entry.messages.extend(records)

    def _find(self, entry: SessionEntry, message_id: str) -> MessageRecord | None:
        return next((m for m in entry.messages if m.id == message_id), None)
