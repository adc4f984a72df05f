"""The in-memory backend: the reference semantics of the public API, for tests and local use.

It is not a model of DynamoDB: it keeps sessions in dicts under one lock. It shares with the DynamoDB
backend everything that is not storage: body encoding and its size limits, cursors, search scoring,
usage arithmetic and the definition of expiry, so both behave the same."""

from __future__ import annotations

import hashlib
import io
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from store import codec
from store import cursor as cursors
from store.artifact_reader import CHUNK, ArtifactReader
from store.backend import INTERRUPT_SLOT, UNSET, Backend, Presign, Unset, records_slot
from store.errors import (
    ArtifactNotFound,
    Conflict,
    InvalidInput,
    MessageNotFound,
    PayloadTooLarge,
    SessionExists,
    SessionNotFound,
)
from store.http_headers import upload_headers
from store.models import (
    ArtifactVersion,
    Checkpoint,
    FullSession,
    Message,
    MessageRecord,
    Page,
    PresignedUpload,
    Session,
    SessionHit,
    StateSnapshot,
    TokenUsage,
)
from store.paging import MessageQuery, SessionQuery
from store.search import Ranked, rank, session_hits
from store.settings import Settings
from store.streams import adrain, is_async_source, read_chunk
from store.timeutil import expiry, is_expired, iso
from store.validation import matches_metadata, new_id


def _read_all(data: Any) -> bytes:
    """All the bytes of artifact data (bytes, a readable stream, or an iterator of chunks)."""
    if isinstance(data, bytes):
        return data
    out = bytearray()
    while chunk := read_chunk(data, CHUNK):
        out += chunk
    return bytes(out)


@dataclass
class _Artifact:
    latest: int = 0
    deleted_through: int = 0
    live: bool = False
    versions: dict[int, tuple[ArtifactVersion, bytes]] = field(default_factory=dict)

    def visible(self) -> list[tuple[ArtifactVersion, bytes]]:
        if not self.live:
            return []
        return [self.versions[v] for v in sorted(self.versions) if v > self.deleted_through]


@dataclass
class _Upload:
    session_id: str
    owner: str
    life: datetime  # the created_at of the session it was issued in
    request: Presign
    expires_at: datetime
    data: bytes | None = None
    version: ArtifactVersion | None = None


@dataclass
class _Idempotency:
    first_seq: int
    count: int
    digest: str
    expires_at: datetime
    first_id: str = ""


@dataclass
class _Session:
    session: Session
    messages: list[MessageRecord] = field(default_factory=list)
    state: StateSnapshot | None = None
    slots: dict[str, Any] = field(default_factory=dict)
    checkpoint: Checkpoint | None = None
    claims: dict[str, _Idempotency] = field(default_factory=dict)
    artifacts: dict[str, _Artifact] = field(default_factory=dict)
    runs: dict[str, list[list[dict[str, Any]]]] = field(default_factory=dict)


class MemoryBackend(Backend):
    """Sessions in a dict, guarded by one re-entrant lock."""

    name = "memory"

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self._lock = threading.RLock()
        self._sessions: dict[str, _Session] = {}
        self._checkpoints: dict[tuple[str, str | None, str], Checkpoint] = {}  # (scope, owner, key)
        self._uploads: dict[str, _Upload] = {}

    def _copy(self, value: Any) -> Any:
        """A deep copy through JSON, exactly as a stored value comes back (the same size limit too)."""
        return codec.decode(*codec.encode(value, limit=self.settings.max_payload_bytes))

    def _encode_all(self, values: list[Any], what: str) -> list[tuple[str, bytes]]:
        limit = self.settings.max_payload_bytes
        return codec.encode_all(values, what, limit, limit)

    # ------------------------------------------------------------ helpers

    def _now(self) -> datetime:
        return self.settings.clock()

    def _live(self, session_id: str, owner: str | None) -> _Session | None:
        entry = self._sessions.get(session_id)
        if entry is None or is_expired(entry.session.expires_at, self._now()):
            return None
        if owner is not None and entry.session.owner != owner:
            return None
        return entry

    def _need(self, session_id: str, owner: str | None) -> _Session:
        entry = self._live(session_id, owner)
        if entry is None:
            raise SessionNotFound(session_id)
        return entry

    def _touch(self, entry: _Session, **changes: Any) -> None:
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

    def _commit(self, entry: _Session, records: list[MessageRecord], **changes: Any) -> None:
        usage = entry.session.usage
        for r in records:
            usage = usage.plus(r.usage)
        entry.messages.extend(records)
        self._touch(entry, last_seq=entry.session.last_seq + len(records), usage=usage, **changes)

    def _find(self, entry: _Session, message_id: str) -> MessageRecord | None:
        return next((m for m in entry.messages if m.id == message_id), None)

    # ------------------------------------------------------------ sessions

    def create_session(
        self,
        owner: str,
        session_id: str,
        title: str | None,
        model: str | None,
        metadata: dict[str, Any],
        retention: timedelta | None,
    ) -> Session:
        with self._lock:
            if self._live(session_id, None) is not None:
                raise SessionExists(session_id)
            now = self._now()
            session = Session(
                id=session_id,
                owner=owner,
                title=title,
                model=model,
                metadata=self._copy(metadata),
                created_at=now,
                updated_at=now,
                retention=retention,
                expires_at=expiry(now, retention) if retention is not None else None,
            )
            self._sessions[session_id] = _Session(session=session)
            return session.model_copy(deep=True)

    def get_session(self, session_id: str, owner: str | None) -> Session | None:
        with self._lock:
            entry = self._live(session_id, owner)
            return None if entry is None else entry.session.model_copy(deep=True)

    def list_sessions(self, owner: str, query: SessionQuery) -> Page[Session]:
        with self._lock:
            live = [e.session for sid in list(self._sessions) if (e := self._live(sid, owner)) is not None]

        def position(s: Session) -> str:
            return f"{iso(s.updated_at)}#{s.id}"

        ordered = sorted(live, key=position, reverse=True)
        if query.cursor is not None:
            after = str(cursors.decode(query.cursor, "sessions", owner).get("g"))
            ordered = [s for s in ordered if position(s) < after]
        chosen = [
            s
            for s in ordered
            if (query.created_after is None or s.created_at > query.created_after)
            and (query.created_before is None or s.created_at < query.created_before)
            and matches_metadata(s.metadata, query.metadata)
        ]
        page = chosen[: query.limit]
        next_cursor = None
        if len(chosen) > query.limit:
            next_cursor = cursors.encode("sessions", owner, {"g": position(page[-1]), "i": page[-1].id})
        return Page[Session](items=[s.model_copy(deep=True) for s in page], next_cursor=next_cursor)

    def update_session(
        self,
        session_id: str,
        owner: str | None,
        title: str | Unset | None,
        model: str | Unset | None,
        metadata: dict[str, Any] | Unset,
    ) -> Session:
        with self._lock:
            entry = self._need(session_id, owner)
            changes: dict[str, Any] = {}
            if title is not UNSET:
                changes["title"] = title
            if model is not UNSET:
                changes["model"] = model
            if metadata is not UNSET:
                changes["metadata"] = self._copy(metadata)
            self._touch(entry, **changes)
            return entry.session.model_copy(deep=True)

    def delete_session(self, session_id: str, owner: str | None) -> None:
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None and (owner is None or entry.session.owner == owner):
                del self._sessions[session_id]

    # ------------------------------------------------------------ messages

    def append_messages(
        self,
        session_id: str,
        owner: str | None,
        messages: list[Message],
        expected_seq: int | None,
        idempotency_key: str | None,
    ) -> list[MessageRecord]:
        with self._lock:
            entry = self._need(session_id, owner)
            records = self._records(session_id, messages, 0, "append_messages")
            digest = codec.digest([m.model_dump(mode="json") for m in messages]) if idempotency_key else ""
            now = self._now()
            claim = entry.claims.get(idempotency_key) if idempotency_key else None
            if claim is not None and not is_expired(claim.expires_at, now):
                if claim.digest != digest:
                    raise Conflict(f"idempotency key {idempotency_key!r} was already used for different messages")
                found = entry.messages[claim.first_seq - 1 : claim.first_seq - 1 + claim.count]
                if len(found) != claim.count or found[0].id != claim.first_id:
                    raise Conflict(
                        f"idempotency key {idempotency_key!r}: the messages it appended were removed by pop_message"
                    )
                return [m.model_copy(deep=True) for m in found]
            if expected_seq is not None and expected_seq != entry.session.last_seq:
                raise Conflict(
                    f"append_messages: expected_seq {expected_seq} is stale; the session is at {entry.session.last_seq}"
                )
            first = entry.session.last_seq + 1
            records = [r.model_copy(update={"seq": first + i}) for i, r in enumerate(records)]
            if idempotency_key:
                entry.claims[idempotency_key] = _Idempotency(
                    first, len(records), digest, expiry(now, self.settings.idempotency_ttl), records[0].id
                )
            self._commit(entry, records)
            return [r.model_copy(deep=True) for r in records]

    def list_messages(self, session_id: str, owner: str | None, query: MessageQuery) -> Page[MessageRecord]:
        with self._lock:
            entry = self._need(session_id, owner)
            lo, hi = query.window(session_id, entry.session.compaction_seq)
            roles = query.roles
            chosen = [m for m in entry.messages if lo <= m.seq <= hi and (roles is None or m.role in roles)]
            if query.newest_first:
                chosen.reverse()
            return query.page(session_id, [m.model_copy(deep=True) for m in chosen[: query.fetch]])

    def last_messages(self, session_id: str, owner: str | None, n: int) -> list[MessageRecord]:
        with self._lock:
            entry = self._need(session_id, owner)
            return [m.model_copy(deep=True) for m in entry.messages[-n:]]

    def get_message(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord | None:
        with self._lock:
            found = self._find(self._need(session_id, owner), message_id)
            return None if found is None else found.model_copy(deep=True)

    def pop_message(self, session_id: str, owner: str | None, expected_seq: int | None) -> MessageRecord | None:
        with self._lock:
            entry = self._need(session_id, owner)
            last = entry.session.last_seq
            if expected_seq is not None and expected_seq != last:
                raise Conflict(f"pop_message: expected_seq {expected_seq} is stale; the session is at {last}")
            if last == 0:
                return None
            if entry.state is not None and entry.state.seq >= last:
                raise Conflict(f"pop_message: the saved state has seen message {last}; pop before saving the state")
            popped = entry.messages.pop()
            changes: dict[str, Any] = {}
            if entry.session.compaction_seq == last:
                earlier = (m.seq for m in reversed(entry.messages) if m.kind == "compaction")
                changes["compaction_seq"] = next(earlier, None)
            usage = entry.session.usage.plus(None, minus=popped.usage)
            self._touch(entry, last_seq=last - 1, usage=usage, **changes)
            return popped.model_copy(deep=True)

    def update_usage(self, session_id: str, owner: str | None, message_id: str, usage: TokenUsage) -> MessageRecord:
        with self._lock:
            entry = self._need(session_id, owner)
            found = self._find(entry, message_id)
            if found is None:
                raise MessageNotFound(session_id, message_id)
            updated = found.model_copy(update={"usage": usage})
            entry.messages[found.seq - 1] = updated
            self._touch(entry, usage=entry.session.usage.plus(usage, minus=found.usage))
            return updated.model_copy(deep=True)

    def mark_compaction(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord:
        with self._lock:
            entry = self._need(session_id, owner)
            found = self._find(entry, message_id)
            if found is None:
                raise MessageNotFound(session_id, message_id)
            marked = found.model_copy(update={"kind": "compaction"})
            entry.messages[found.seq - 1] = marked
            self._touch(entry, compaction_seq=max(found.seq, entry.session.compaction_seq or 0))
            return marked.model_copy(deep=True)

    def get_latest_compaction(self, session_id: str, owner: str | None) -> MessageRecord | None:
        with self._lock:
            entry = self._need(session_id, owner)
            cseq = entry.session.compaction_seq
            return None if cseq is None else entry.messages[cseq - 1].model_copy(deep=True)

    # ------------------------------------------------------------ state

    def save_state(self, session_id: str, owner: str | None, state: Any, expected_version: int | None) -> int:
        with self._lock:
            entry = self._need(session_id, owner)
            stored = self._copy(state)
            version = entry.session.state_version
            if expected_version is not None and expected_version != version:
                raise Conflict(f"save_state: expected_version {expected_version} is stale; the state is at {version}")
            entry.state = StateSnapshot(
                version=version + 1, state=stored, seq=entry.session.last_seq, saved_at=self._now()
            )
            self._touch(entry, state_version=version + 1)
            return version + 1

    def load_state(self, session_id: str, owner: str | None) -> StateSnapshot | None:
        with self._lock:
            entry = self._need(session_id, owner)
            return None if entry.state is None else entry.state.model_copy(deep=True)

    def save_full(
        self, session_id: str, owner: str | None, messages: list[Message], state: Any, expected_seq: int | None
    ) -> StateSnapshot:
        with self._lock:
            entry = self._need(session_id, owner)
            encoded = self._encode_all([*(m.body() for m in messages), state], "save_full")
            if expected_seq is not None and expected_seq != entry.session.last_seq:
                raise Conflict(
                    f"save_full: expected_seq {expected_seq} is stale; the session is at {entry.session.last_seq}"
                )
            records = self._as_records(session_id, messages, encoded[:-1], entry.session.last_seq + 1)
            version = entry.session.state_version + 1
            entry.state = StateSnapshot(
                version=version,
                state=codec.decode(*encoded[-1]),
                seq=entry.session.last_seq + len(records),
                saved_at=self._now(),
            )
            self._commit(entry, records, state_version=version)
            return entry.state.model_copy(deep=True)

    def load_full(self, session_id: str, owner: str | None, since_compaction: bool) -> FullSession:
        with self._lock:
            entry = self._need(session_id, owner)
            lo = entry.session.compaction_seq if since_compaction and entry.session.compaction_seq else 1
            return FullSession(
                session=entry.session.model_copy(deep=True),
                messages=[m.model_copy(deep=True) for m in entry.messages[lo - 1 :]],
                state=entry.state.model_copy(deep=True) if entry.state else None,
            )

    def save_interrupt(self, session_id: str, owner: str | None, interrupt: dict[str, Any]) -> None:
        self._put_slot(session_id, owner, INTERRUPT_SLOT, interrupt)

    def load_interrupt(self, session_id: str, owner: str | None) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._load_slot(session_id, owner, INTERRUPT_SLOT, None)
        return found

    def clear_interrupt(self, session_id: str, owner: str | None) -> None:
        self._put_slot(session_id, owner, INTERRUPT_SLOT, None)

    def save_records(self, session_id: str, owner: str | None, kind: str, records: list[Any]) -> None:
        self._put_slot(session_id, owner, records_slot(kind), records)

    def load_records(self, session_id: str, owner: str | None, kind: str) -> list[Any]:
        found: list[Any] = self._load_slot(session_id, owner, records_slot(kind), [])
        return found

    def _put_slot(self, session_id: str, owner: str | None, slot: str, value: Any) -> None:
        """Store a JSON value in a named slot of the session (None empties it), recording activity."""
        with self._lock:
            entry = self._need(session_id, owner)
            if value is None:
                entry.slots.pop(slot, None)
            else:
                entry.slots[slot] = self._copy(value)
            self._touch(entry)

    def _load_slot(self, session_id: str, owner: str | None, slot: str, default: Any) -> Any:
        """The value in a slot, or `default` when the slot is empty."""
        with self._lock:
            slots = self._need(session_id, owner).slots
            return self._copy(slots[slot]) if slot in slots else default

    # ------------------------------------------------------------ checkpoints

    def save_checkpoint(self, scope: str, key: str, data: Any, ttl: timedelta, owner: str | None) -> Checkpoint:
        with self._lock:
            now = self._now()
            cp = Checkpoint(
                scope=scope,
                key=key,
                data=self._copy(data),
                saved_at=now,
                expires_at=expiry(now, ttl),
            )
            if scope == "session":
                entry = self._need(key, owner)
                cp = cp.model_copy(update={"seq": entry.session.last_seq})
                entry.checkpoint = cp
            else:
                self._checkpoints[(scope, owner, key)] = cp
            return cp.model_copy(deep=True)

    def load_checkpoint(self, scope: str, key: str, owner: str | None) -> Checkpoint | None:
        with self._lock:
            where = (scope, owner, key)
            cp = self._need(key, owner).checkpoint if scope == "session" else self._checkpoints.get(where)
            if cp is None or is_expired(cp.expires_at, self._now()):
                return None
            return cp.model_copy(deep=True)

    def delete_checkpoint(self, scope: str, key: str, owner: str | None) -> None:
        with self._lock:
            if scope == "session":
                self._need(key, owner).checkpoint = None
                return
            self._checkpoints.pop((scope, owner, key), None)

    # ------------------------------------------------------------ artifacts

    def _version(
        self, session_id: str, name: str, data: bytes, content_type: str, md: dict[str, str]
    ) -> ArtifactVersion:
        """Store `data` as the name's next version (under the lock)."""
        entry = self._sessions[session_id]
        art = entry.artifacts.setdefault(name, _Artifact())
        if not art.live:
            art.deleted_through = art.latest
        art.latest += 1
        art.live = True
        av = ArtifactVersion(
            session_id=session_id,
            name=name,
            version=art.latest,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            content_type=content_type,
            metadata=dict(md),
            created_at=self._now(),
        )
        art.versions[art.latest] = (av, data)
        self._touch(entry)
        return av

    def _find_version(
        self, session_id: str, owner: str | None, name: str, version: int | None
    ) -> tuple[ArtifactVersion, bytes] | None:
        art = self._need(session_id, owner).artifacts.get(name)
        visible = art.visible() if art is not None else []
        if not visible:
            return None
        if version is None:
            return visible[-1]
        return next((v for v in visible if v[0].version == version), None)

    def put_artifact(
        self, session_id: str, owner: str | None, name: str, data: Any, content_type: str, metadata: dict[str, str]
    ) -> ArtifactVersion:
        with self._lock:
            self._need(session_id, owner)
        if is_async_source(data):  # the async store's callers: drained on their event loop
            return self._put_drained(session_id, owner, name, data, content_type, metadata)  # type: ignore[return-value]
        content = _read_all(data)
        with self._lock:
            self._need(session_id, owner)
            return self._version(session_id, name, content, content_type, metadata)

    async def _put_drained(
        self, session_id: str, owner: str | None, name: str, data: Any, content_type: str, metadata: dict[str, str]
    ) -> ArtifactVersion:
        return self.put_artifact(session_id, owner, name, await adrain(data), content_type, metadata)

    def get_artifact(self, session_id: str, owner: str | None, name: str, version: int | None) -> bytes | None:
        with self._lock:
            found = self._find_version(session_id, owner, name, version)
            return None if found is None else found[1]

    def open_artifact(
        self, session_id: str, owner: str | None, name: str, version: int | None
    ) -> ArtifactReader | None:
        with self._lock:
            found = self._find_version(session_id, owner, name, version)
        if found is None:
            return None
        stream = io.BytesIO(found[1])
        return ArtifactReader(found[0], stream.read, stream.close)

    def list_artifacts(self, session_id: str, owner: str | None) -> list[ArtifactVersion]:
        with self._lock:
            arts = self._need(session_id, owner).artifacts
            latest = [vis[-1][0] for a in arts.values() if (vis := a.visible())]
            return sorted(latest, key=lambda a: a.name)

    def list_artifact_versions(self, session_id: str, owner: str | None, name: str) -> list[ArtifactVersion]:
        with self._lock:
            art = self._need(session_id, owner).artifacts.get(name)
            return [av for av, _ in (art.visible() if art is not None else [])]

    def delete_artifact(self, session_id: str, owner: str | None, name: str) -> None:
        with self._lock:
            entry = self._need(session_id, owner)
            art = entry.artifacts.get(name)
            if art is None or not art.live:
                return
            art.live, art.deleted_through, art.versions = False, art.latest, {}
            self._touch(entry)

    def presign_artifact(self, session_id: str, owner: str | None, request: Presign) -> str:
        if request.method == "PUT":
            return self.presign_artifact_upload(session_id, owner, request).url
        with self._lock:
            found = self._find_version(session_id, owner, request.name, request.version)
        if found is None:
            raise ArtifactNotFound(session_id, request.name, request.version)
        av = found[0]
        return f"memory://artifacts/{session_id}/{av.sha256}?version={av.version}&expires_in={request.expires_in}"

    def presign_artifact_upload(self, session_id: str, owner: str | None, request: Presign) -> PresignedUpload:
        with self._lock:
            session = self._need(session_id, owner).session
            upload_id = new_id()
            expires = self._now() + timedelta(seconds=request.expires_in)
            self._uploads[upload_id] = _Upload(session_id, session.owner, session.created_at, request, expires)
        return PresignedUpload(
            url=f"memory://uploads/{upload_id}",
            upload_id=upload_id,
            session_id=session_id,
            name=request.name,
            expires_at=expires,
            headers=upload_headers(request.content_type, request.size, request.sha256),
            max_size=request.max_size,
            size=request.size,
            sha256=request.sha256,
        )

    def receive_upload(self, url: str, data: bytes) -> None:
        """What an HTTP PUT to a presigned URL, with the headers it was issued with, does at S3 (for tests of
        the memory backend): store the bytes, unless the URL has expired, the upload already holds bytes
        (If-None-Match), or they are not the declared size or SHA-256 (signed headers S3 checks)."""
        with self._lock:
            pending = self._uploads.get(url.rstrip("/").rsplit("/", 1)[-1])
            if pending is None or is_expired(pending.expires_at, self._now()):
                raise InvalidInput("no such upload URL, or it has expired")
            if pending.data is not None or pending.version is not None:
                raise InvalidInput("precondition failed: the upload already holds its bytes")
            wanted = pending.request
            if wanted.size is not None and len(data) != wanted.size:
                raise InvalidInput("the body is not the size the URL was signed for")
            if wanted.sha256 is not None and hashlib.sha256(data).hexdigest() != wanted.sha256:
                raise InvalidInput("the body does not match the SHA-256 the URL was signed for")
            pending.data = bytes(data)

    def confirm_artifact_upload(self, session_id: str, owner: str | None, name: str, upload_id: str) -> ArtifactVersion:
        with self._lock:
            session = self._need(session_id, owner).session
            pending = self._uploads.get(upload_id)
            if pending is None:
                raise InvalidInput("no pending upload with that id (it expired, or was never issued)")
            if pending.session_id != session_id or pending.request.name != name:
                raise InvalidInput("upload does not belong to this session and artifact name")
            if (pending.owner, pending.life) != (session.owner, session.created_at):
                del self._uploads[upload_id]  # issued in a session that no longer exists: nobody can confirm it
                raise InvalidInput("upload was issued for an earlier session with this id; it has been discarded")
            if pending.version is not None:
                return pending.version
            if pending.data is None:
                raise InvalidInput("nothing has been uploaded to that URL yet")
            if len(pending.data) > pending.request.max_size:
                pending.data = None
                raise PayloadTooLarge(
                    f"the upload holds more than its limit of {pending.request.max_size} bytes; it was discarded"
                )
            request = pending.request
            pending.version = self._version(session_id, name, pending.data, request.content_type, request.metadata)
            pending.data = None
            return pending.version

    # ------------------------------------------------------------ traces

    def append_trace_events(self, session_id: str, owner: str | None, run_id: str, events: list[dict[str, Any]]) -> int:
        with self._lock:
            entry = self._need(session_id, owner)
            stored = self._copy(events)
            batches = entry.runs.setdefault(run_id, [])
            batches.append(stored)
            self._touch(entry)
            return len(batches)

    def load_trace_events(self, session_id: str, owner: str | None, run_id: str | None) -> list[dict[str, Any]]:
        with self._lock:
            runs = self._need(session_id, owner).runs
            chosen = [runs.get(run_id, [])] if run_id is not None else list(runs.values())
            return [self._copy(e) for batches in chosen for batch in batches for e in batch]

    def list_trace_runs(self, session_id: str, owner: str | None) -> list[str]:
        with self._lock:
            return list(self._need(session_id, owner).runs)

    # ------------------------------------------------------------ search and health

    def search(self, owner: str, query: str, limit: int) -> list[SessionHit]:
        needle = query.casefold()
        hits: list[Ranked] = []
        with self._lock:
            for sid in list(self._sessions):
                entry = self._live(sid, owner)
                if entry is not None:
                    hits.extend(session_hits(entry.session, entry.messages, needle))
        return rank(hits, limit)

    def health_check(self) -> None:
        return None
