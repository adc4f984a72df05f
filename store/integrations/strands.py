"""Strands Agents: a `SessionRepository` kept in this store (Strands has no DynamoDB session manager).

    from strands import Agent
    from strands.session import RepositorySessionManager
    from store import SessionStore
    from store.integrations.strands import StrandsSessionRepository

    store = SessionStore.from_env()
    repository = StrandsSessionRepository(store, owner=user_id)
    agent = Agent(session_manager=RepositorySessionManager(session_id="chat-42", session_repository=repository))

How Strands' records map onto the store:
- the Strands session is a store session whose id is the Strands id in the owner's namespace
  (`store.core.scoped_ids.scoped_id(owner, session_id)`: two owners' "chat-42" are two sessions, and the
  HTTP API serves it to its owner as "chat-42"; metadata `framework: strands`);
- its default agent (Strands' "default") keeps its record and transcript in that session, so the session
  the user named holds the conversation (metadata `strands_layout: conversation`; sessions written before
  keep every agent apart); each other agent has its own store session, `<session>:agent:<agent id>` in the
  same namespace (metadata names the Strands session, `strands_parent`, and the agent: listed under the
  session, not beside it); a transcript holds the agent's messages, message `i` at sequence `i + 1`
  (appended with `expected_seq=i` and an idempotency key, so a retried append is stored once and two writers
  cannot interleave one agent's messages);
- the agent record (`SessionAgent`) and the messages Strands redacts later live in that session's
  state, changed with optimistic versioning (`expected_version`), so concurrent updates never lose one;
- multi-agent state is a record list of the Strands session (`strands.multi.<id>`).
Ids that are not store ids (over 100 characters, or other characters) are mapped to stable hashed ids.
Bytes in messages (images, documents) are kept base64-encoded exactly as Strands' own managers do.
`session_manager(..., flush_every=N)` writes a turn in one transaction (store.integrations.strands_batching);
`SessionStoreStorage` is Strands' unified `Storage` on the store (store.integrations.strands_storage).
Install with `pip install agent-session-store[strands]`.
"""

from __future__ import annotations

from typing import Any

from strands.session.repository_session_manager import RepositorySessionManager

from store.integrations.strands_batching import BatchedStrandsSessionRepository, FlushingSessionManager
from store.integrations.strands_ids import agent_store_id, session_store_id, store_id
from store.integrations.strands_repository import StrandsSessionRepository
from store.integrations.strands_storage import SessionStoreStorage  # the unified Storage contract
from store.session_store import SessionStore

TURN = "turn"  # durability: a turn written when the agent's invocation ends (Strands' SnapshotSessionManager's)
MESSAGE = "message"  # durability: each message written as Strands makes it (Strands' file and S3 managers')
DEFAULT_FLUSH_EVERY = 16  # in turn durability, the most messages held before they are written anyway


def session_manager(
    session_id: str,
    store: SessionStore,
    *,
    owner: str = "strands",
    durability: str = TURN,
    flush_every: int | None = None,
    **kwargs: Any,
) -> Any:
    """A Strands session manager for `session_id` on this store: the one line an agent needs,
    `Agent(session_manager=session_manager("chat-42", store, owner=user_id))`.

    `durability="turn"` (the default, as Strands' `SnapshotSessionManager` saves by default): the turn's messages
    and the agent's record are held and written in one transaction when the agent's invocation ends, or sooner
    once `flush_every` (16) messages are held (`store.integrations.strands_batching`); a process that dies
    mid-turn loses that turn, as Strands' snapshot manager would. `durability="message"`: each message and each
    agent change is written as Strands makes it (as Strands' file and S3 managers do; several times the
    requests). Either way a new agent on the session resumes in 2 requests (`read_session`)."""
    retention = kwargs.pop("retention", None)
    if durability not in (TURN, MESSAGE):
        raise ValueError(f"durability must be {TURN!r} or {MESSAGE!r}")
    if durability == MESSAGE:
        if flush_every is not None:
            raise ValueError("flush_every holds messages back: it has no meaning with durability='message'")
        repository = StrandsSessionRepository(store, owner=owner, retention=retention)
        return RepositorySessionManager(session_id=session_id, session_repository=repository, **kwargs)
    every = DEFAULT_FLUSH_EVERY if flush_every is None else flush_every
    batched = BatchedStrandsSessionRepository(store, owner=owner, retention=retention, flush_every=every)
    return FlushingSessionManager(session_id=session_id, session_repository=batched, **kwargs)


__all__ = [
    "SessionStoreStorage",
    "StrandsSessionRepository",
    "agent_store_id",
    "session_manager",
    "session_store_id",
    "store_id",
]
