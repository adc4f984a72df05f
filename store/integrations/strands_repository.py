"""Strands' session repository on the store (`StrandsSessionRepository`) and what the batched one
(store.integrations.strands_batching) shares with it; `store.integrations.strands` builds the managers."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from strands.session.session_repository import SessionRepository
from strands.types.exceptions import SessionException
from strands.types.session import (
    Session,
    SessionAgent,
    SessionMessage,
    SessionType,
    decode_bytes_values,
    encode_bytes_values,
)

from store.conversation.dialects import with_reported_usage
from store.core.lru import Lru
from store.errors import Conflict, SessionExists, SessionNotFound, StoreError
from store.integrations._calls import CHANGE_ATTEMPTS
from store.integrations.strands_ids import FRAMEWORK, agent_store_id, session_store_id, store_id
from store.models import FullSession, MessageRecord
from store.session_store import SessionStore

DEFAULT_AGENT = "default"  # Strands' agent id when an Agent is given none
LAYOUT = "strands_layout"
CONVERSATION_HERE = "conversation"  # the default agent's transcript is the Strands session's own store session
LAYOUTS_KNOWN = 4096
OPENED_KNOWN = 256  # sessions read whole by read_session, kept for the agent's restore that follows
# where a Strands agent's record keeps how many messages its conversation manager removed (its window's start)
WINDOW_PATH = "agent.conversation_manager_state.removed_message_count"
PARENT = "strands_parent"  # on another agent's session: the Strands session it belongs to, as the user named it

if TYPE_CHECKING:
    from strands.multiagent.base import MultiAgentBase

P = ParamSpec("P")
T = TypeVar("T")
M = TypeVar("M")


class StrandsSessionRepository(SessionRepository):
    """Strands' `SessionRepository` on a (sync) `SessionStore`, for `RepositorySessionManager`."""

    def __init__(self, store: SessionStore, *, owner: str = "strands", retention: Any = None) -> None:
        """Sessions are created for `owner` and, with `retention`, expire after that long idle."""
        self.store = store
        self.owner = owner
        self.retention = retention
        self._layouts: Lru[bool] = Lru(LAYOUTS_KNOWN)  # per Strands session: its default agent's messages in it
        # per store session: what read_session read of it (head, state, the window's messages), used once by
        # the restore that follows (read_agent, list_messages) and dropped by any write
        self._opened: Lru[FullSession] = Lru(OPENED_KNOWN)

    def agent_sid(self, session_id: str, agent_id: str) -> str:
        """The store session holding an agent's record and transcript: for the session's default agent, the
        Strands session's own store session (so the session the user named holds the conversation), unless
        the session was written before that layout (then, as for every other agent, a session of its own,
        `agent_store_id`)."""
        if agent_id == DEFAULT_AGENT and self._conversation_here(session_id):
            return session_store_id(self.owner, session_id)
        return agent_store_id(self.owner, session_id, agent_id)

    def _conversation_here(self, session_id: str) -> bool:
        known = self._layouts.get(session_id)
        if known is None:  # read_session or create_session usually told us already
            found = self._read(None, self.store.get_session, session_store_id(self.owner, session_id), owner=self.owner)
            known = found is not None and found.metadata.get(LAYOUT) == CONVERSATION_HERE
            if found is not None:
                self._layouts.put(session_id, known)
        return known

    # -- sessions ---------------------------------------------------------------------------------
    def create_session(self, session: Session, **kwargs: Any) -> Session:
        """Create the store session (the Strands session's own times kept with it); SessionException if
        it exists."""
        try:
            meta = {
                "session_type": session.session_type.value,
                "strands_times": {"created_at": session.created_at, "updated_at": session.updated_at},
                LAYOUT: CONVERSATION_HERE,
            }
            self._create(session_store_id(self.owner, session.session_id), session.session_id, meta)
        except SessionExists:
            raise SessionException(f"Session {session.session_id} already exists") from None
        self._layouts.put(session.session_id, True)
        return session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        """The Strands session as it was created (its times as given), or None. The session is read whole as of
        one instant (`load_full`: its head and state in one request, then its default agent's messages from its
        conversation manager's window in one Query), so that the restore Strands makes next (`read_agent`,
        `list_messages`) costs no more requests: resuming an agent is 2 requests."""
        sid = session_store_id(self.owner, session_id)
        full: FullSession | None
        try:
            full = self.store.load_full(sid, after_seq_at=WINDOW_PATH, owner=self.owner)
        except SessionNotFound:
            return None
        except Conflict:  # a transcript still being copied in (a fork's): the head alone
            found = self._call(self.store.get_session, sid, owner=self.owner)
            full = None if found is None else FullSession(session=found, messages=[])
        except StoreError as exc:
            raise SessionException(str(exc)) from exc
        if full is None or full.session.metadata.get("framework") != FRAMEWORK:
            return None
        found = full.session
        here = found.metadata.get(LAYOUT) == CONVERSATION_HERE
        self._layouts.put(session_id, here)
        if here and full.state is not None:
            self._opened.put(sid, full)
        times = found.metadata.get("strands_times") or {}
        return Session(
            session_id=session_id,
            session_type=SessionType(found.metadata.get("session_type", SessionType.AGENT.value)),
            created_at=str(times.get("created_at", found.created_at.isoformat())),
            updated_at=str(times.get("updated_at", found.updated_at.isoformat())),
        )

    def delete_session(self, session_id: str, **kwargs: Any) -> None:
        """Delete the session, its agents' transcripts and its multi-agent state; SessionException if it
        does not exist (as Strands' file and S3 managers do), after reclaiming any agent sessions left."""
        main = session_store_id(self.owner, session_id)
        self._opened.drop(main)
        existed = self._call(self.store.get_session, main, owner=self.owner) is not None
        cursor = None
        while True:
            page = self._call(
                self.store.list_sessions, self.owner, metadata={"strands_session": main}, cursor=cursor, limit=100
            )
            for child in page.items:
                self._call(self.store.delete_session, child.id, owner=self.owner)
            cursor = page.next_cursor
            if cursor is None:
                break
        if not existed:
            raise SessionException(f"Session {session_id} does not exist")
        self._call(self.store.delete_session, main, owner=self.owner)

    # -- agents -----------------------------------------------------------------------------------
    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Create the agent's store session (if a crash left it, reuse it) and record the agent."""
        child = self.agent_sid(session_id, session_agent.agent_id)
        if child != session_store_id(self.owner, session_id):  # another agent of the session: a session of its own
            with contextlib.suppress(SessionExists):
                self._create(
                    child,
                    f"{session_id} / {session_agent.agent_id}",
                    {
                        "strands_session": session_store_id(self.owner, session_id),
                        PARENT: session_id,  # listed under the session the user named, not beside it
                        "agent_id": session_agent.agent_id,
                    },
                )
        record = session_agent.to_dict()
        self._change_state(child, lambda state: {**state, "agent": record})

    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        """The agent's record, or None."""
        child = self.agent_sid(session_id, agent_id)
        opened = self._opened.get(child)
        state = opened.state.state if opened is not None and opened.state is not None else self._state(child)
        return None if state is None or "agent" not in state else SessionAgent.from_dict(state["agent"])

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Replace the agent's record (its creation time is kept); SessionException if it does not exist."""
        agent_id = session_agent.agent_id

        def change(state: dict[str, Any]) -> dict[str, Any]:
            if "agent" not in state:
                raise SessionException(f"Agent {agent_id} in session {session_id} does not exist")
            session_agent.created_at = state["agent"].get("created_at", session_agent.created_at)
            return {**state, "agent": session_agent.to_dict()}

        self._change_state(self.agent_sid(session_id, agent_id), change)

    # -- messages ---------------------------------------------------------------------------------
    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append message `message_id` as the transcript's next one (stored once even if retried), with
        everything Strands gave besides its role and content (its `tracking_id`, times, a redaction)."""
        index = session_message.message_id
        child = self.agent_sid(session_id, agent_id)
        self._opened.drop(child)
        self._call(
            self.store.append_messages,
            child,
            [stored_message(session_message)],
            expected_seq=index,
            idempotency_key=f"strands-message-{index}",
            owner=self.owner,
        )
        if session_message.redact_message is not None:  # created already redacted: kept as an update is
            self._change_state(child, lambda state: with_updates(state, [session_message]))

    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        """Message `message_id` (as last updated), or None."""
        found = self.list_messages(session_id, agent_id, limit=1, offset=message_id)
        return found[0] if found and found[0].message_id == message_id else None

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Replace a stored message (Strands does so to redact it), keeping its creation time and taking its
        `updated_at` as given; SessionException if it does not exist."""
        child = self.agent_sid(session_id, agent_id)
        index = session_message.message_id
        previous = self.read_message(session_id, agent_id, index)
        if previous is None:
            raise SessionException(f"Message {index} does not exist")
        session_message.created_at = previous.created_at
        self._change_state(child, lambda state: with_updates(state, [session_message]))

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        """Messages `offset` .. `offset + limit - 1` in order (one Query, plus the agent's state; none when
        read_session has just read them)."""
        child = self.agent_sid(session_id, agent_id)
        opened = self._opened.get(child)
        self._opened.drop(child)  # used once: later reads see later writes
        if opened is not None and opened.state is not None and _covers(opened, offset):
            updated = opened.state.state.get("updated", {})
            kept = [r for r in opened.messages if r.seq > offset]
            return [self._message(r, updated) for r in (kept if limit is None else kept[:limit])]
        page = self._read(None, self.store.list_messages, child, after_seq=offset, limit=limit, owner=self.owner)
        if page is None:
            return []
        updated = (self._state(child) or {}).get("updated", {})
        return [self._message(record, updated) for record in page.items]

    # -- multi-agent ------------------------------------------------------------------------------
    def create_multi_agent(self, session_id: str, multi_agent: MultiAgentBase, **kwargs: Any) -> None:
        """Record a multi-agent orchestrator's state in the session."""
        self._put_multi(session_id, multi_agent.id, multi_agent.serialize_state())

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        """The orchestrator's state, or None."""
        kind = self._multi_kind(multi_agent_id)
        main = session_store_id(self.owner, session_id)
        found = self._read([], self.store.load_records, main, kind, owner=self.owner)
        return decode_bytes_values(found[0]) if found else None

    def update_multi_agent(self, session_id: str, multi_agent: MultiAgentBase, **kwargs: Any) -> None:
        """Replace the orchestrator's state; SessionException if none was recorded."""
        if self.read_multi_agent(session_id, multi_agent.id) is None:
            raise SessionException(f"MultiAgent state {multi_agent.id} in session {session_id} does not exist")
        self._put_multi(session_id, multi_agent.id, multi_agent.serialize_state())

    # -- helpers ----------------------------------------------------------------------------------
    def _call(self, method: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`method(...)` with the store's errors raised as Strands' SessionException."""
        try:
            return method(*args, **kwargs)
        except StoreError as exc:
            raise SessionException(str(exc)) from exc

    def _read(self, missing: M, method: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | M:
        """`_call(...)`, or `missing` when the session does not exist."""
        try:
            return method(*args, **kwargs)
        except SessionNotFound:
            return missing
        except StoreError as exc:
            raise SessionException(str(exc)) from exc

    def _create(self, sid: str, title: str, metadata: dict[str, Any]) -> None:
        self.store.create_session(
            self.owner,
            session_id=sid,
            title=title[:200],
            metadata={"framework": FRAMEWORK, **metadata},
            retention=self.retention,
        )

    def _state(self, sid: str) -> dict[str, Any] | None:
        snapshot = self._read(None, self.store.load_state, sid, owner=self.owner)
        return None if snapshot is None else snapshot.state

    def _change_state(self, sid: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Read, change and save the session's state, again from the top when another writer saved first."""
        self._opened.drop(sid)
        for _ in range(CHANGE_ATTEMPTS):
            snapshot = self._call(self.store.load_state, sid, owner=self.owner)
            version = 0 if snapshot is None else snapshot.version
            state = change({} if snapshot is None else dict(snapshot.state))
            try:
                self.store.save_state(sid, state, expected_version=version, owner=self.owner)
                return
            except Conflict:
                continue
            except StoreError as exc:
                raise SessionException(str(exc)) from exc
        raise SessionException(f"state of {sid}: gave up after {CHANGE_ATTEMPTS} concurrent updates")

    @staticmethod
    def _message(record: MessageRecord, updated: dict[str, Any]) -> SessionMessage:
        index = record.seq - 1
        if str(index) in updated:
            return SessionMessage.from_dict(updated[str(index)])
        env = dict((record.metadata or {}).get("strands", {}))
        extra = env.pop("message", None) or {}
        stored = record.created_at.isoformat()
        return SessionMessage.from_dict(
            {
                "created_at": stored,
                "updated_at": env.get("created_at", stored),
                **env,
                "message": {**extra, "role": record.role, "content": record.content},
                "message_id": index,
            }
        )

    @staticmethod
    def _multi_kind(multi_agent_id: str) -> str:
        return store_id(f"strands.multi.{multi_agent_id}", "strands.multi")

    def _put_multi(self, session_id: str, multi_agent_id: str, state: dict[str, Any]) -> None:
        kind = self._multi_kind(multi_agent_id)
        main = session_store_id(self.owner, session_id)
        self._call(self.store.save_records, main, kind, [encode_bytes_values(state)], owner=self.owner)


def _covers(opened: FullSession, offset: int) -> bool:
    """True when a session read whole holds every message after index `offset` (message i is at seq i + 1)."""
    start = opened.messages[0].seq if opened.messages else opened.session.last_seq + 1
    return start <= offset + 1


def stored_message(session_message: SessionMessage) -> dict[str, Any]:
    """The store message of a Strands message: its role and content, and in metadata everything else
    Strands gave (its `tracking_id` and other keys, its times); a redaction is kept in the state."""
    return stored_env(session_message.to_dict())


def stored_env(given: dict[str, Any]) -> dict[str, Any]:
    """`stored_message` of a Strands message as its `to_dict()` gives it (left as it is)."""
    env = dict(given)
    body = env.pop("message")
    env.pop("redact_message", None)
    extra = {k: v for k, v in body.items() if k not in ("role", "content")}
    stored = {"role": body["role"], "content": body["content"], "metadata": {"strands": {**env, "message": extra}}}
    return with_reported_usage(stored)  # the usage Strands puts in an assistant message's metadata


def with_updates(state: dict[str, Any], messages: list[SessionMessage]) -> dict[str, Any]:
    """An agent session's state with `messages` recorded as the latest versions of theirs."""
    updated = {**state.get("updated", {}), **{str(m.message_id): m.to_dict() for m in messages}}
    return {**state, "updated": updated}
