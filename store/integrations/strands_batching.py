"""Strands with a turn written in one transaction: `session_manager(...)`'s default (`durability="turn"`,
`flush_every=16`).

Strands calls its repository once per message (`create_message`) and once per agent change
(`update_agent`), so an ordinary turn (the user's message, a tool call, its result, the answer, a state
change) is five transactions. `BatchedStrandsSessionRepository` holds those calls and writes them in one
`save_full` (the messages and the agent record together, conditioned on the transcript not having moved)
when the agent's invocation ends (`FlushingSessionManager` flushes on Strands' `AfterInvocationEvent`),
once `flush_every` messages are held, or when `flush()` is called.

What it trades: messages held when the process dies (a Lambda timeout mid-turn) are lost, as if the turn
had not started; other readers see a turn once it is flushed; and a turn's write assumes one writer per
agent at a time (a transcript that moved meanwhile is refused with a SessionException, and the held
calls are kept for `flush()` to try again after a transient failure). Reads through this repository see
the held calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from strands.hooks import AfterInvocationEvent, HookRegistry
from strands.session.repository_session_manager import RepositorySessionManager
from strands.types.exceptions import SessionException
from strands.types.session import SessionAgent, SessionMessage

from store.errors import Conflict, StoreError
from store.integrations.strands_repository import StrandsSessionRepository, stored_env, with_updates
from store.session_store import SAVE_FULL_MAX, SessionStore


@dataclass
class _Held:
    """One agent's calls not yet written: messages from index `first` on (each as `SessionMessage.to_dict()`
    gave it: a copy that later changes to the caller's object do not reach, made once; building a
    `SessionMessage` again from it costs more than the turn's write, so that is done only when one is read), and
    its latest record."""

    first: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    agent: dict[str, Any] | None = None

    @property
    def next_index(self) -> int:
        return self.first + len(self.messages)


class BatchedStrandsSessionRepository(StrandsSessionRepository):
    """A `StrandsSessionRepository` that writes each agent's held messages and record in one transaction."""

    def __init__(
        self, store: SessionStore, *, owner: str = "strands", retention: Any = None, flush_every: int = 16
    ) -> None:
        """`flush_every`: the most messages held before they are written (1 to 97)."""
        if isinstance(flush_every, bool) or not isinstance(flush_every, int) or not 1 <= flush_every <= SAVE_FULL_MAX:
            raise ValueError(f"flush_every must be an integer from 1 to {SAVE_FULL_MAX}")
        super().__init__(store, owner=owner, retention=retention)
        self.flush_every = flush_every
        self._held: dict[str, _Held] = {}
        # each agent session's (state, version) as last read or written here
        self._known: dict[str, tuple[dict[str, Any], int]] = {}
        self._next: dict[str, int] = {}  # each agent's next message index, once this repository wrote one

    # -- held writes ------------------------------------------------------------------------------
    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Record the agent at once (as the unbatched repository does)."""
        super().create_agent(session_id, session_agent)
        self._known.pop(self.agent_sid(session_id, session_agent.agent_id), None)

    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Hold message `message_id` (the agent's next one); written at the next flush."""
        child = self.agent_sid(session_id, agent_id)
        held = self._held.get(child)
        expected = held.next_index if held is not None and held.messages else self._next.get(child)
        if expected is not None and session_message.message_id != expected:
            raise SessionException(f"message {session_message.message_id} is not the next one ({expected})")
        held = self._held.setdefault(child, _Held(first=session_message.message_id))
        if not held.messages:
            held.first = session_message.message_id
        held.messages.append(session_message.to_dict())
        if len(held.messages) >= self.flush_every:
            self._flush(child)

    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Hold the agent's new record (its creation time kept); SessionException if it does not exist."""
        child = self.agent_sid(session_id, session_agent.agent_id)
        held = self._held.get(child)
        current = held.agent if held is not None and held.agent is not None else self._current(child)[0].get("agent")
        if current is None:
            raise SessionException(f"Agent {session_agent.agent_id} in session {session_id} does not exist")
        session_agent.created_at = current.get("created_at", session_agent.created_at)
        self._held.setdefault(child, _Held(first=-1)).agent = session_agent.to_dict()

    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Replace a message (Strands redacts this way): a held one in place, a written one in the state."""
        held = self._held.get(self.agent_sid(session_id, agent_id))
        if held is not None and held.messages and held.first <= session_message.message_id < held.next_index:
            previous = held.messages[session_message.message_id - held.first]
            session_message.created_at = previous["created_at"]
            held.messages[session_message.message_id - held.first] = session_message.to_dict()
            return
        super().update_message(session_id, agent_id, session_message)
        self._known.pop(self.agent_sid(session_id, agent_id), None)

    # -- reads that see held writes ---------------------------------------------------------------
    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        child = self.agent_sid(session_id, agent_id)
        held = self._held.get(child)
        if held is not None and held.agent is not None:
            return SessionAgent.from_dict(held.agent)
        return super().read_agent(session_id, agent_id)

    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        """Written messages from `offset`, then held ones, `limit` in all."""
        self._current_from_opened(self.agent_sid(session_id, agent_id))  # before the read uses it up
        found = super().list_messages(session_id, agent_id, limit=limit, offset=offset)
        held = self._held.get(self.agent_sid(session_id, agent_id))
        if held is not None:
            found += [SessionMessage.from_dict(m) for m in held.messages if m["message_id"] >= offset]
        return found if limit is None else found[:limit]

    # -- writing ----------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write every agent's held calls, each agent's in one transaction."""
        for child in list(self._held):
            self._flush(child)

    def _flush(self, child: str) -> None:
        held = self._held[child]
        self._opened.drop(child)
        known, version = self._current(child)
        state = dict(known)
        if held.agent is not None:
            state["agent"] = held.agent
        redacted = [SessionMessage.from_dict(m) for m in held.messages if m.get("redact_message") is not None]
        if redacted:
            state = with_updates(state, redacted)
        try:
            if held.messages:
                messages = [stored_env(m) for m in held.messages]
                version = self.store.save_full(
                    child, messages, state, expected_seq=held.first, owner=self.owner, keep_state=False
                ).version
            else:
                version = self.store.save_state(child, state, expected_version=version, owner=self.owner)
        except Conflict as exc:
            self._known.pop(child, None)
            self._next.pop(child, None)
            raise SessionException(f"the agent's session moved meanwhile (another writer): {exc}") from exc
        except StoreError as exc:
            raise SessionException(str(exc)) from exc
        del self._held[child]
        self._known[child] = (state, version)
        if held.messages:
            self._next[child] = held.next_index

    def _current_from_opened(self, child: str) -> None:
        """Know the agent session's (state, version) from what read_session read of it, when it did."""
        opened = self._opened.get(child)
        if child not in self._known and opened is not None and opened.state is not None:
            self._known[child] = (dict(opened.state.state), opened.state.version)

    def _current(self, child: str) -> tuple[dict[str, Any], int]:
        """The agent session's (state, version): as last read or written here (read_session's read counts),
        else read once."""
        self._current_from_opened(child)
        if child not in self._known:
            snapshot = self._read(None, self.store.load_state, child, owner=self.owner)
            self._known[child] = ({}, 0) if snapshot is None else (dict(snapshot.state), snapshot.version)
        return self._known[child]


class FlushingSessionManager(RepositorySessionManager):
    """Strands' `RepositorySessionManager` that writes a batched repository's held calls when each agent
    invocation ends (after the agent's final sync)."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        super().register_hooks(registry, **kwargs)
        registry.add_callback(AfterInvocationEvent, self._end_of_turn)

    def _end_of_turn(self, event: AfterInvocationEvent) -> None:
        self.sync_agent(event.agent)  # whichever order Strands runs After-callbacks in, the record is held
        repository = self.session_repository
        if isinstance(repository, BatchedStrandsSessionRepository):
            repository.flush()
