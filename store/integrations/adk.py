"""Google ADK: a `BaseSessionService` and a `BaseArtifactService` kept in this store.

    from google.adk.runners import Runner
    from store import SessionStore
    from store.integrations.adk import StoreArtifactService, StoreSessionService

    store = SessionStore.from_env()
    runner = Runner(
        app_name="travel", agent=agent,
        session_service=StoreSessionService(store), artifact_service=StoreArtifactService(store),
    )

How ADK's records map onto the store (owner = ADK's `user_id`, so the store's owner checks and the HTTP
API see the same user's sessions):
- an ADK session is a store session whose id is the ADK session id in the user's namespace (the session
  the user finds under the name they chose), or `adk.<app>.<session id>` when another app of the user's
  has that id and for sessions written before (`store.core.scoped_ids.scoped_id`; hashed when the ids do not
  make a store id), with the three ids in its metadata; each event is one message (author as role, the
  event as JSON content);
  session-scoped state is the session's state, saved with the event in one transaction (`save_full`,
  conditioned on the transcript not having moved, retried from a fresh read when it has): concurrent
  appends never lose a state change or an event;
- `user:` state and user-scoped artifacts (`user:` file names) belong to one store session per (app,
  user); `app:` state to one per app, which also keeps the app's users (for listing without a user);
  both are changed with optimistic versioning; `temp:` state is never stored (ADK trims it);
- an artifact is a store artifact (bytes in S3, versioned): inline data keeps its MIME type as the
  object's content type, text is UTF-8 `text/plain`, other parts (file references) are stored as
  their JSON. ADK numbers versions from 0 for the live versions of a name; the store's numbers are
  never reused, so version `i` is the `i`-th live version.
Install with `pip install agent-session-store[adk]`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import ArtifactVersion, BaseArtifactService, ensure_part
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig, ListSessionsResponse
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from google.genai import types
from pydantic_core import to_jsonable_python

from store.conversation.dialects import with_reported_usage
from store.core.lru import Lru
from store.core.scoped_ids import scoped_id
from store.core.validation import new_id
from store.errors import Conflict, InvalidInput, SessionExists, SessionNotFound, StoreError
from store.integrations._calls import CHANGE_ATTEMPTS, AnyStore, as_async, ensure_session, or_missing
from store.models import ArtifactVersion as StoredVersion
from store.models import FullSession, MessageRecord, StateSnapshot
from store.session_store import SAVE_FULL_MAX

FRAMEWORK = "adk"
KNOWN_PLACES = 4096
ROLE_MAX = 64
PAGE = 100
TEXT_TYPE = "text/plain; charset=utf-8"
PART_TYPE = "application/vnd.adk.part+json"
TOMBSTONE_TYPE = "application/octet-stream"  # with no bytes: ADK's rewind marker, loaded as absent
# Kept in a session's stored state beside ADK's keys: the last event's id and timestamp. ADK never
# persists `temp:` keys, so no key of an application's can be this one; it is stripped on every read.
LAST_EVENT = "temp:adk.last_event"
TURN = "turn"  # durability: a turn's events written together when its final response is appended
EVENT = "event"  # durability: each event written as it is appended
DEFAULT_FLUSH_EVERY = 16  # in turn durability, the most events held before they are written anyway


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:40]


def _local(*parts: str) -> str:
    """A local id from `parts` joined by dots, readable when no part but the last has a dot (so the joined
    form names one tuple); otherwise a form `scoped_id` hashes."""
    return ".".join(parts) if not any("." in p for p in parts[:-1]) else "\x00".join(parts)


def session_store_id(app_name: str, user_id: str, session_id: str) -> str:
    """The store session an ADK session has when its own id is taken by another app of the user's, or was
    written before sessions took their own names: `adk.<app>.<session>` in the user's namespace."""
    return scoped_id(user_id, _local("adk", app_name, session_id))


def named_store_id(user_id: str, session_id: str) -> str:
    """The store session an ADK session has in the user's namespace under its own id: the session the user
    finds under the name they chose (`sessions show <session id>`, the console)."""
    return scoped_id(user_id, session_id)


class _Names:
    """Where each ADK session lives: under its own id in the user's namespace (`named_store_id`) unless that
    id is another app's, or the session was written before that layout (`session_store_id`). Learned with
    one read of the session's head, then kept (the place of a session never changes)."""

    def __init__(self, store: AnyStore) -> None:
        self.store = store
        self._store = as_async(store)  # typed calls, on either store
        self._known: Lru[str] = Lru(KNOWN_PLACES)

    def known(self, key: str) -> str | None:
        """Where the session of `key` (app, user and session ids joined by NUL) was found, if it was."""
        return self._known.get(key)

    def remember(self, key: str, place: str) -> None:
        self._known.put(key, place)

    async def sid(self, app_name: str, user_id: str, session_id: str) -> str:
        key = "\x00".join((app_name, user_id, session_id))
        known = self._known.get(key)
        if known is not None:
            return known
        named, fallback = named_store_id(user_id, session_id), session_store_id(app_name, user_id, session_id)
        head = await or_missing(None, self._store.get_session(named, owner=user_id))
        if head is not None and head.metadata.get("adk_app") == app_name:
            place = named
        elif head is not None:  # another app's session (or the user's own) has that name
            place = fallback
        else:
            old = await or_missing(None, self._store.get_session(fallback, owner=user_id))
            if old is None:
                return named  # nothing yet: a new session takes its own name (not kept until it exists)
            place = fallback
        self._known.put(key, place)
        return place


def user_store_id(app_name: str, user_id: str) -> str:
    """The store session holding a user's `user:` state and user-scoped artifacts in an app."""
    return scoped_id(user_id, _local("adk-user", app_name))


def app_store_id(app_name: str) -> str:
    """The store session holding an app's `app:` state and the list of its users."""
    return f"adk-app-{_digest(app_name)}"


def app_owner(app_name: str) -> str:
    return f"adk-app:{app_name}"[:256]


def _split(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(app, user, session) parts of a state or state delta; `temp:` keys are dropped."""
    app: dict[str, Any] = {}
    user: dict[str, Any] = {}
    session: dict[str, Any] = {}
    for key, value in state.items():
        if key.startswith(State.APP_PREFIX):
            app[key.removeprefix(State.APP_PREFIX)] = value
        elif key.startswith(State.USER_PREFIX):
            user[key.removeprefix(State.USER_PREFIX)] = value
        elif not key.startswith(State.TEMP_PREFIX):
            session[key] = value
    return app, user, session


def _changes_shared(event: Event) -> bool:
    """Whether the event's state delta sets `app:` or `user:` state (which other sessions read)."""
    delta = event.actions.state_delta if event.actions and event.actions.state_delta else {}
    return any(k.startswith((State.APP_PREFIX, State.USER_PREFIX)) for k in delta)


def _state_of(snapshot: StateSnapshot | None) -> dict[str, Any]:
    """A stored state as a dict of its own ({} when there is none)."""
    return {} if snapshot is None else dict(snapshot.state)


def _session_state(head: Any, snapshot: Any, last_event: Event | None = None) -> tuple[dict[str, Any], float]:
    """(ADK session state, last update time) of a stored session: the time of its last event, as ADK's own
    services report it: `last_event`'s when it was read, else the one the state recorded when no event came
    after it (a turn that changes no state is written without it), else the session's last write's."""
    state = _state_of(snapshot)
    last = state.pop(LAST_EVENT, None)
    if last_event is not None:
        return state, last_event.timestamp
    when = last.get("timestamp") if isinstance(last, dict) else None
    current = snapshot is not None and snapshot.seq >= head.last_seq
    return state, float(when) if isinstance(when, int | float) and current else head.updated_at.timestamp()


def _json(value: dict[str, Any]) -> dict[str, Any]:
    """State values as JSON (datetimes, models and the like serialised; anything else as its str)."""
    return to_jsonable_python(value, fallback=str)  # type: ignore[no-any-return]


class _Scoped:
    """Store calls shared by both services: sessions created on demand, states changed with versions (from
    the version this service last read or wrote, when it has one: a change that finds another version reads
    the state again and is applied to it)."""

    def __init__(self, store: AnyStore, retention: Any = None) -> None:
        self.store = store
        self._store = as_async(store)  # typed calls, on either store
        self.retention = retention
        self._seen: Lru[tuple[int, dict[str, Any]]] = Lru(KNOWN_PLACES)  # session -> (state version, state)

    async def ensure(self, sid: str, owner: str, metadata: dict[str, Any]) -> None:
        """Create the store session unless it exists."""
        await ensure_session(self._store, owner, sid, {"framework": FRAMEWORK, **metadata}, self.retention)

    def saw(self, sid: str, snapshot: StateSnapshot | None) -> None:
        """Keep the state a read of the session found (a session with no state yet is left unknown)."""
        if snapshot is not None:
            self._seen.put(sid, (snapshot.version, _state_of(snapshot)))

    async def state(self, sid: str, owner: str) -> dict[str, Any]:
        snapshot = await or_missing(None, self._store.load_state(sid, owner=owner))
        self.saw(sid, snapshot)
        return _state_of(snapshot)

    async def change(
        self, sid: str, owner: str, metadata: dict[str, Any], change: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> dict[str, Any]:
        """Apply `change` to the session's state (created if absent) with optimistic versioning."""
        seen = self._seen.get(sid)
        for _ in range(CHANGE_ATTEMPTS):
            if seen is None:
                try:
                    snapshot = await self._store.load_state(sid, owner=owner)
                except SessionNotFound:
                    await self.ensure(sid, owner, metadata)
                    snapshot = None
                seen = (0, {}) if snapshot is None else (snapshot.version, _state_of(snapshot))
            version, state = seen
            new = change(dict(state))
            try:
                saved = await self._store.save_state(sid, new, expected_version=version, owner=owner)
            except (Conflict, SessionNotFound):  # changed, or gone, since it was seen: read it again
                self._seen.drop(sid)
                seen = None
                continue
            self._seen.put(sid, (saved, new))
            return new
        raise Conflict(f"state of {sid}: gave up after {CHANGE_ATTEMPTS} concurrent updates")


@dataclass
class _Turn:
    """Events of one session to be written together, with their state changes merged in order."""

    app_name: str
    user_id: str
    session_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    app: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    last: dict[str, Any] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.messages)

    def then(self, later: _Turn) -> _Turn:
        """This turn's events followed by `later`'s, their state changes applied in that order."""
        self.messages += later.messages
        self.app.update(later.app)
        self.user.update(later.user)
        self.session.update(later.session)
        self.last = later.last or self.last
        return self

    def add(self, event: Event) -> _Turn:
        """Add an event (already without `temp:` keys); a re-delivery of the latest one adds nothing."""
        if event.id and self.last.get("id") == event.id:
            return self
        delta = dict(event.actions.state_delta) if event.actions and event.actions.state_delta else {}
        app, user, session = _split(_json(delta))
        self.app.update(app)
        self.user.update(user)
        self.session.update(session)
        content = event.model_dump(mode="json", exclude_none=True)
        self.messages.append(with_reported_usage({"role": (event.author or "event")[:ROLE_MAX], "content": content}))
        self.last = {"id": event.id, "timestamp": event.timestamp}
        return self


@dataclass(frozen=True)
class _Tail:
    """Where a session's transcript ends, as this service last read or wrote it: its last sequence number, its
    stored state (with LAST_EVENT) and the id of its latest event."""

    seq: int
    state: dict[str, Any]
    last_event: str | None

    @staticmethod
    def of(full: FullSession) -> _Tail:
        """The tail a `load_full` read (of at least the latest event, when there is one)."""
        state = _state_of(full.state)
        latest = full.messages[-1].content if full.messages else None
        last = latest.get("id") if isinstance(latest, dict) else (state.get(LAST_EVENT) or {}).get("id")
        return _Tail(full.session.last_seq, state, last)


class StoreSessionService(BaseSessionService):
    """ADK sessions, events and state in this store."""

    def __init__(
        self, store: AnyStore, *, retention: Any = None, durability: str = TURN, flush_every: int | None = None
    ) -> None:
        """Sessions (not the app's and users' shared state) expire after `retention` idle, if given.

        `durability="turn"` (the default): a turn's events are written in one transaction, held until the
        turn's final response, `flush_every` (16) of them, or `flush()`; an event that changes `app:` or
        `user:` state is written at once, with those held before it, so that other sessions see that state as
        soon as it is appended (as under ADK's own services). What it trades: held events are lost if the
        process dies first (as if the turn had not happened; ADK's default InMemorySessionService loses every
        turn; docs/decisions.md compares it with DatabaseSessionService), and other readers see a turn's other
        events once it is written; reads through this service flush the session's held events first.
        `durability="event"`: each event is written as it is appended (as ADK's database service does),
        several times the write units."""
        if durability not in (TURN, EVENT):
            raise InputValidationError(f"durability must be {TURN!r} or {EVENT!r}")
        if durability == EVENT and flush_every is not None:
            raise InputValidationError("flush_every holds events back: it has no meaning with durability='event'")
        if durability == TURN and flush_every is None:
            flush_every = DEFAULT_FLUSH_EVERY
        if flush_every is not None and (
            isinstance(flush_every, bool) or not isinstance(flush_every, int) or not 1 <= flush_every <= SAVE_FULL_MAX
        ):
            raise InputValidationError(f"flush_every must be an integer from 1 to {SAVE_FULL_MAX}")
        self.store = store
        self._store = as_async(store)  # typed calls, on either store
        self.flush_every = flush_every
        self._held: dict[str, _Turn] = {}
        self._tails: Lru[_Tail] = Lru(KNOWN_PLACES)  # where each session's transcript ends, as last seen here
        self._scoped = _Scoped(store)
        self._names = _Names(store)
        self._sessions = _Scoped(store, retention)

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id = (session_id or "").strip() or new_id()
        app_delta, user_delta, session_state = _split(_json(state or {}))
        sid = await self._names.sid(app_name, user_id, session_id)
        await self._remember_user(app_name, user_id)
        metadata = {"framework": FRAMEWORK, "adk_app": app_name, "adk_user": user_id, "adk_session": session_id}
        created = await self._claim(sid, user_id, session_id, metadata)
        try:
            await self._apply_shared(app_name, user_id, app_delta, user_delta)
            if session_state:
                await self._store.save_state(sid, session_state, expected_version=0, owner=user_id)
            if not created:  # an adopted session is marked last, so a failure leaves it as it was
                await self._store.update_session(sid, metadata=metadata, owner=user_id)
        except BaseException:
            if created:  # nothing half-made: without its initial state the session goes, and a retry can create it
                with contextlib.suppress(StoreError):
                    await self._store.delete_session(sid, owner=user_id)
            raise
        found = await self.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        if found is None:  # deleted by another caller in the meantime
            raise SessionNotFoundError(f"Session {session_id} not found.")
        return found

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        session_id = session_id.strip()
        full = await self._read_whole(app_name, user_id, session_id, config)
        shared: dict[str, StateSnapshot | None] | None = None
        if full is not None:  # the session, its state, its events and the shared states as of one instant: 2 requests
            head, snapshot, shared = full.session, full.state, full.states
            events = [self._event(r) for r in full.messages]
        else:
            sid = await self._names.sid(app_name, user_id, session_id)
            await self._flush(sid)  # this service's own held events are read back
            try:
                found, snapshot = await asyncio.gather(
                    self._store.get_session(sid, owner=user_id),
                    self._store.load_state(sid, owner=user_id),
                )
            except SessionNotFound:
                return None
            if found is None:
                return None
            head = found
            events = await self._events(sid, user_id, config)
        state, updated = _session_state(head, snapshot, events[-1] if events else None)
        return Session(
            id=session_id.strip(),
            app_name=app_name,
            user_id=user_id,
            state=await self._merged(app_name, user_id, state, shared),
            events=events,
            last_update_time=updated,
        )

    async def _read_whole(
        self, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None
    ) -> FullSession | None:
        """The session read whole (`load_full`: head and state in one request, its events in one Query per
        1 MB), when the config asks for every event or the latest N; None when it asks otherwise, or the
        session is not where a session takes its own name (the caller then finds it as before)."""
        if config is not None and (config.after_timestamp is not None or config.num_recent_events == 0):
            return None
        last = config.num_recent_events if config is not None else None
        key = "\x00".join((app_name, user_id, session_id))
        sid = self._names.known(key) or named_store_id(user_id, session_id)
        if sid in self._held:
            await self._flush(sid)  # this service's own held events are read back
        shared = {app_store_id(app_name): app_owner(app_name), user_store_id(app_name, user_id): user_id}
        try:  # the app: and user: states in the same request
            full = await self._store.load_full(sid, last=last, with_states=shared, owner=user_id)
        except (SessionNotFound, Conflict):  # none there, or its transcript is still being copied in
            return None
        if full.session.metadata.get("adk_app") != app_name or full.session.metadata.get("adk_session") != session_id:
            return None
        self._names.remember(key, sid)
        if last != 0 and (full.messages or full.session.last_seq == 0):
            self._tails.put(sid, _Tail.of(full))  # the next write of this session reads nothing first
        if last is not None:  # exactly the latest N, as ADK's services return them (the window may widen)
            full.messages = full.messages[-last:]
        return full

    async def _claim(self, sid: str, user_id: str, session_id: str, metadata: dict[str, Any]) -> bool:
        """Create the ADK session's store session (True), or find an artifacts-only one to adopt (False:
        artifacts were saved before the session was created); AlreadyExistsError for an ADK session."""
        try:
            await self._store.create_session(
                user_id, session_id=sid, metadata=metadata, retention=self._sessions.retention
            )
            return True
        except SessionExists:
            existing = await self._store.get_session(sid, owner=user_id)
            if existing is None or "adk_session" in existing.metadata:
                raise AlreadyExistsError(f"Session with id {session_id} already exists.") from None
            return False
        except InvalidInput as exc:
            raise InputValidationError(str(exc)) from exc

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The app's sessions (of one user, or of every user), without events, each with its own state
        merged with the app: and user: state, as ADK's own services list them; oldest update first."""
        await self.flush()
        users = [user_id] if user_id is not None else await self._users(app_name)
        sessions: list[Session] = []
        for user in users:
            shared = await self._merged(app_name, user, {})
            cursor = None
            while True:
                page = await self._store.list_sessions(user, metadata={"adk_app": app_name}, cursor=cursor, limit=PAGE)
                heads = [head for head in page.items if "adk_session" in head.metadata]
                snapshots = await asyncio.gather(
                    *(or_missing(None, self._store.load_state(head.id, owner=user)) for head in heads)
                )
                for head, snapshot in zip(heads, snapshots, strict=True):
                    state, updated = _session_state(head, snapshot)
                    sessions.append(
                        Session(
                            id=head.metadata["adk_session"],
                            app_name=app_name,
                            user_id=user,
                            state={**state, **shared},
                            events=[],
                            last_update_time=updated,
                        )
                    )
                cursor = page.next_cursor
                if cursor is None:
                    break
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session with its events, state and session-scoped artifacts (idempotent)."""
        sid = await self._names.sid(app_name, user_id, session_id.strip())
        self._held.pop(sid, None)
        self._tails.drop(sid)
        await self._store.delete_session(sid, owner=user_id)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        return await self._scoped.state(user_store_id(app_name, user_id), user_id)

    async def append_event(self, session: Session, event: Event) -> Event:
        """Store the event and its state delta (app:, user: and session keys; `temp:` ones apply to the
        in-memory session only and are not stored, in the event either), then apply them to `session` as
        ADK's base service does; `session.last_update_time` becomes the event's timestamp, as it is when
        the session is read again. A re-delivery of the latest event (same id: a retried call) is stored
        once. Concurrent appends to one session all land, each on the state the one before it left.

        With `flush_every`, the event is held (and applied to `session` at once) and written with the
        others of its turn when the turn's final response is appended, once `flush_every` are held, at
        `flush()`, or at once (with those held before it) when it changes `app:` or `user:` state, which
        other sessions read: the user's other sessions and every user's see it as soon as it is appended, as
        under ADK's own services. A SessionNotFoundError then comes from the append that writes."""
        if event.partial:
            return event
        if event.actions and event.actions.state_delta:  # temp: state is for this invocation only
            delta = dict(event.actions.state_delta)
            session.state.update({k: v for k, v in delta.items() if k.startswith(State.TEMP_PREFIX)})
            event.actions.state_delta = {k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)}
        sid = await self._names.sid(session.app_name, session.user_id, session.id)
        if self.flush_every is None:
            await self._write(sid, _Turn(session.app_name, session.user_id, session.id).add(event))
        else:
            held = self._held.setdefault(sid, _Turn(session.app_name, session.user_id, session.id))
            turn_ends = event.author != "user" and event.is_final_response()  # an agent's final answer
            if held.add(event).size >= self.flush_every or turn_ends or _changes_shared(event):
                await self._flush(sid)
        await super().append_event(session=session, event=event)
        session.last_update_time = event.timestamp
        return event

    async def flush(self) -> None:
        """Write every held event (ADK's Runner calls this when it closes)."""
        for sid in list(self._held):
            await self._flush(sid)

    async def _flush(self, sid: str) -> None:
        """Write the session's held events; taken from the hold first, so that two flushes at once (appends
        on one service, concurrently) never write them twice; put back, before any held meanwhile, on failure."""
        held = self._held.pop(sid, None)
        if held is None:
            return
        try:
            await self._write(sid, held)
        except BaseException:
            later = self._held.pop(sid, None)
            self._held[sid] = held if later is None else held.then(later)
            raise

    async def _write(self, sid: str, turn: _Turn) -> None:
        """Store a turn's events and its state changes, the events with the session's state in one
        transaction (merged onto whatever landed meanwhile). Where the session's tail is known (this service
        read or wrote it last), nothing is read first: a write that finds the transcript moved reads it and
        merges again."""
        owner = turn.user_id
        await self._apply_shared(turn.app_name, owner, turn.app, turn.user)
        for _ in range(CHANGE_ATTEMPTS):
            tail = self._tails.get(sid)
            if tail is None:
                try:  # the head and state, and the latest event (a re-delivery of it is not stored again)
                    tail = _Tail.of(await self._store.load_full(sid, last=1, owner=owner))
                except SessionNotFound:
                    raise SessionNotFoundError(f"Session {turn.session_id} not found.") from None
            if turn.last["id"] and tail.last_event == turn.last["id"]:
                return  # these very events were stored by an earlier delivery
            state = {**tail.state, **turn.session}
            try:
                if state == tail.state:  # no state change: the events alone (one write less)
                    await self._store.append_messages(sid, turn.messages, expected_seq=tail.seq, owner=owner)
                else:
                    state[LAST_EVENT] = turn.last
                    await self._store.save_full(  # ADK rewinds by its events' deltas: no state copy kept
                        sid, turn.messages, state, expected_seq=tail.seq, owner=owner, keep_state=False
                    )
            except Conflict:
                self._tails.drop(sid)
                continue  # another event landed first: merge onto its state
            except SessionNotFound:
                self._tails.drop(sid)
                raise SessionNotFoundError(f"Session {turn.session_id} not found.") from None
            self._tails.put(sid, _Tail(tail.seq + len(turn.messages), state, turn.last["id"]))
            return
        raise Conflict(f"append_event to {turn.session_id}: gave up after {CHANGE_ATTEMPTS} concurrent appends")

    # -- helpers ----------------------------------------------------------------------------------
    async def _events(self, sid: str, owner: str, config: GetSessionConfig | None) -> list[Event]:
        recent = config.num_recent_events if config else None
        after = config.after_timestamp if config else None
        if recent == 0:
            return []
        if recent is not None:
            records: list[MessageRecord] = await self._store.last_messages(sid, recent, owner=owner)
        else:
            records = []
            cursor = None
            while True:  # newest first, so a timestamp filter stops at the first older event
                page = await self._store.list_messages(sid, newest_first=True, limit=PAGE, cursor=cursor, owner=owner)
                batch = list(page.items)
                records.extend(batch)
                cursor = page.next_cursor
                if cursor is None or (after is not None and batch and self._event(batch[-1]).timestamp < after):
                    break
            records.reverse()
        events = [self._event(r) for r in records]
        if after is not None:
            events = [e for e in events if e.timestamp >= after]
        return events

    @staticmethod
    def _event(record: MessageRecord) -> Event:
        return Event.model_validate(record.content)

    async def _merged(
        self,
        app_name: str,
        user_id: str,
        state: dict[str, Any],
        shared: dict[str, StateSnapshot | None] | None = None,
    ) -> dict[str, Any]:
        """`state` with the app: and user: states merged in: from `shared` (read with the session), else read."""
        app_sid, user_sid = app_store_id(app_name), user_store_id(app_name, user_id)
        if shared is not None and app_sid in shared and user_sid in shared:
            app_state, user_state = _state_of(shared[app_sid]), _state_of(shared[user_sid])
            self._scoped.saw(app_sid, shared[app_sid])
            self._scoped.saw(user_sid, shared[user_sid])
        else:
            app_state, user_state = await asyncio.gather(
                self._scoped.state(app_sid, app_owner(app_name)), self._scoped.state(user_sid, user_id)
            )
        merged = dict(state)
        merged.update({State.APP_PREFIX + k: v for k, v in app_state.get("state", {}).items()})
        merged.update({State.USER_PREFIX + k: v for k, v in user_state.items()})
        return merged

    async def _apply_shared(
        self, app_name: str, user_id: str, app_delta: dict[str, Any], user_delta: dict[str, Any]
    ) -> None:
        if app_delta:
            await self._scoped.change(
                app_store_id(app_name),
                app_owner(app_name),
                {"adk_scope": "app"},
                lambda s: {**s, "state": {**s.get("state", {}), **app_delta}},
            )
        if user_delta:
            await self._scoped.change(
                user_store_id(app_name, user_id), user_id, {"adk_scope": "user"}, lambda s: {**s, **user_delta}
            )

    async def _remember_user(self, app_name: str, user_id: str) -> None:
        users = set(await self._users(app_name))
        if user_id not in users:
            await self._scoped.change(
                app_store_id(app_name),
                app_owner(app_name),
                {"adk_scope": "app"},
                lambda s: {**s, "users": sorted({*s.get("users", []), user_id})},
            )

    async def _users(self, app_name: str) -> list[str]:
        state = await self._scoped.state(app_store_id(app_name), app_owner(app_name))
        return list(state.get("users", []))


class StoreArtifactService(BaseArtifactService):
    """ADK artifacts as this store's versioned artifacts (bytes in S3, index in DynamoDB)."""

    def __init__(self, store: AnyStore) -> None:
        self.store = store
        self._store = as_async(store)  # typed calls, on either store
        self._scoped = _Scoped(store)
        self._names = _Names(store)

    async def _where(self, app_name: str, user_id: str, filename: str, session_id: str | None) -> str:
        if filename.startswith(State.USER_PREFIX):
            return user_store_id(app_name, user_id)
        if session_id is None:
            raise InputValidationError("Session ID must be provided for session-scoped artifacts.")
        return await self._names.sid(app_name, user_id, session_id)

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        part = ensure_part(artifact)
        sid = await self._where(app_name, user_id, filename, session_id)
        if part.inline_data is not None:
            data, content_type, kind = part.inline_data.data or b"", part.inline_data.mime_type, "inline"
        elif part.text is not None:
            data, content_type, kind = part.text.encode(), TEXT_TYPE, "text"
        elif part.file_data is not None:
            if artifact_util.is_artifact_ref(part):  # a reference may not leave the caller's app, user, session
                parsed = artifact_util.parse_artifact_uri(str(part.file_data.file_uri))
                if parsed is None:
                    raise InputValidationError(f"Invalid artifact reference URI: {part.file_data.file_uri}")
                artifact_util.validate_artifact_reference_scope(
                    app_name=app_name, user_id=user_id, session_id=session_id, parsed_uri=parsed
                )
            data, content_type, kind = part.model_dump_json(exclude_none=True).encode(), PART_TYPE, "part"
        else:
            raise InputValidationError("Not supported artifact type.")
        metadata = {"adk_kind": kind, "adk_custom": json.dumps(_json(custom_metadata or {}))}
        # a store session made here holds artifacts only, until StoreSessionService creates the ADK session
        await self._scoped.ensure(sid, user_id, {"adk_app": app_name, "adk_user": user_id, "adk_scope": "artifacts"})
        try:
            stored = await self._store.put_artifact(
                sid,
                filename,
                data,
                content_type=content_type or "application/octet-stream",
                metadata=metadata,
                owner=user_id,
            )
        except InvalidInput as exc:
            raise InputValidationError(str(exc)) from exc
        live = await self._live(sid, user_id, filename)
        return next(i for i, v in enumerate(live) if v.version == stored.version)

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        return await self._load(
            app_name, user_id, filename, session_id, version, artifact_util._MAX_ARTIFACT_REFERENCE_DEPTH
        )

    async def _load(
        self, app_name: str, user_id: str, filename: str, session_id: str | None, version: int | None, depth: int
    ) -> types.Part | None:
        sid = await self._where(app_name, user_id, filename, session_id)
        located = await self._version(sid, user_id, filename, version)
        if located is None:
            return None
        found = located[1]
        data = await self._store.get_artifact(sid, filename, version=found.version, owner=user_id)
        if data is None:
            return None
        kind = found.metadata.get("adk_kind")
        if kind == "text":
            return types.Part(text=data.decode())
        if kind == "inline":
            if not data and found.content_type == TOMBSTONE_TYPE:
                return None  # what a session rewind saves to remove an artifact: absent
            return types.Part(inline_data=types.Blob(data=data, mime_type=found.content_type))
        part = types.Part.model_validate_json(data)
        if artifact_util.is_artifact_ref(part) and part.file_data is not None:
            ref = artifact_util.resolve_artifact_reference(
                file_uri=str(part.file_data.file_uri),
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                remaining_depth=depth,
            )
            return await self._load(ref.app_name, ref.user_id, ref.filename, ref.session_id, ref.version, depth - 1)
        return part

    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str | None = None) -> list[str]:
        scopes = [user_store_id(app_name, user_id)]
        if session_id is not None:
            scopes.append(await self._names.sid(app_name, user_id, session_id))
        names: set[str] = set()
        for sid in scopes:
            names.update(a.name for a in await or_missing([], self._store.list_artifacts(sid, owner=user_id)))
        return sorted(names)

    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        sid = await self._where(app_name, user_id, filename, session_id)
        await or_missing(None, self._store.delete_artifact(sid, filename, owner=user_id))

    async def list_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[int]:
        sid = await self._where(app_name, user_id, filename, session_id)
        return list(range(len(await self._live(sid, user_id, filename))))

    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        sid = await self._where(app_name, user_id, filename, session_id)
        live = await self._live(sid, user_id, filename)
        return [self._describe(sid, filename, i, v) for i, v in enumerate(live)]

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        sid = await self._where(app_name, user_id, filename, session_id)
        found = await self._version(sid, user_id, filename, version)
        return None if found is None else self._describe(sid, filename, *found)

    # -- helpers ----------------------------------------------------------------------------------
    async def _live(self, sid: str, owner: str, filename: str) -> list[Any]:
        """The name's live store versions, oldest first (ADK's version i is the i-th)."""
        listed = self._store.list_artifact_versions(sid, filename, owner=owner)
        versions: list[StoredVersion] = await or_missing([], listed)
        return sorted(versions, key=lambda v: v.version)

    async def _version(self, sid: str, owner: str, filename: str, version: int | None) -> tuple[int, Any] | None:
        """(ADK version, store version) of ADK version `version` (None: the latest), or None."""
        live = await self._live(sid, owner, filename)
        index = len(live) - 1 if version is None else version
        return (index, live[index]) if 0 <= index < len(live) else None

    @staticmethod
    def _describe(sid: str, filename: str, index: int, stored: Any) -> ArtifactVersion:
        kind = stored.metadata.get("adk_kind")
        return ArtifactVersion(
            version=index,
            canonical_uri=f"agent-session-store://{sid}/artifacts/{filename}/versions/{stored.version}",
            custom_metadata=json.loads(stored.metadata.get("adk_custom", "{}")),
            create_time=stored.created_at.timestamp(),
            mime_type="text/plain" if kind == "text" else (stored.content_type if kind == "inline" else None),
        )


__all__ = ["StoreArtifactService", "StoreError", "StoreSessionService"]
