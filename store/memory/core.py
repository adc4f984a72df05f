"""The in-memory backend's core: its records (sessions, artifacts, uploads, idempotency claims) and the
helpers every domain shares (the lock, copies through JSON, liveness, touching a session)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from store.artifact_reader import CHUNK
from store.conversation.preview import preview_of
from store.core import codec
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


class MemoryCore:
    """Sessions in a dict, guarded by one re-entrant lock; the domains' operations build on it."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._lock = threading.RLock()
        self._sessions: dict[str, SessionEntry] = {}
        self._checkpoints: dict[tuple[str, str | None, str], Checkpoint] = {}  # (scope, owner, key)
        self._uploads: dict[str, UploadEntry] = {}

    def _copy(self, value: Any) -> Any:
        """A deep copy through JSON, exactly as a stored value comes back (the same size limit too)."""
        return codec.decode(*codec.encode(value, limit=self.settings.max_payload_bytes))

    def _encode_all(self, values: list[Any], what: str) -> list[tuple[str, bytes]]:
        limit = self.settings.max_payload_bytes
        return codec.encode_all(values, what, limit, limit)

    # ------------------------------------------------------------ helpers

    def _now(self) -> datetime:
        return self.settings.clock()

    def _live(self, session_id: str, owner: str | None) -> SessionEntry | None:
        entry = self._sessions.get(session_id)
        if entry is None or is_expired(entry.session.expires_at, self._now()):
            return None
        if owner is not None and entry.session.owner != owner:
            return None
        return entry

    def _need(self, session_id: str, owner: str | None) -> SessionEntry:
        entry = self._live(session_id, owner)
        if entry is None:
            raise SessionNotFound(session_id)
        return entry

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
