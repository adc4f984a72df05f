"""Strands Agents: the store's context for a turn in the agent's system prompt (`context_hook`), one line:

    agent = Agent(session_manager=session_manager("chat-42", store, owner=user_id),
                  hooks=[context_hook("chat-42", store, owner=user_id)])

Before each model call, the hook asks the store for the session's context (`SessionStore.context`, the question
being the latest user message) and adds to the agent's system prompt, for that call only, the session's running
summary, the owner's memories and the older messages that matter, which the agent's conversation manager (its
sliding window, by default) has let go of; after the call the prompt is the agent's own again. The session keeps
every message. Install with `pip install agent-session-store[strands]`."""

from __future__ import annotations

from typing import Any

from strands.hooks import AfterModelCallEvent, BeforeModelCallEvent, HookProvider, HookRegistry

from store import AsyncSessionStore, SessionStore
from store.errors import SessionNotFound
from store.integrations._calls import as_sync
from store.integrations.strands_ids import agent_store_id, session_store_id
from store.models import TurnContext

DEFAULT_AGENT = "default"


def _asked(messages: list[Any]) -> str | None:
    """The latest user message's words (its text blocks), at most 2,048 characters."""
    for message in reversed(messages):
        if message.get("role") == "user":
            words = " ".join(b["text"] for b in message.get("content", []) if isinstance(b.get("text"), str))
            if words.strip():
                return TurnContext.question(words)
    return None


class ContextHook(HookProvider):
    """Adds the session's context to the system prompt of each model call (see the module docstring)."""

    def __init__(
        self,
        session_id: str,
        store: SessionStore | AsyncSessionStore,
        *,
        owner: str = "strands",
        agent_id: str = DEFAULT_AGENT,
        budget_tokens: int = 2000,
        memories: bool = True,
    ) -> None:
        self.store = as_sync(store)
        self.owner = owner
        self.store_session_id = (
            session_store_id(owner, session_id)
            if agent_id == DEFAULT_AGENT
            else agent_store_id(owner, session_id, agent_id)
        )
        self.budget_tokens = budget_tokens
        self.memories = memories
        self._own: dict[int, Any] = {}  # agent -> its own system prompt, while a call has the context in it

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self.before)
        registry.add_callback(AfterModelCallEvent, self.after)

    def before(self, event: BeforeModelCallEvent) -> None:
        agent = event.agent
        try:
            found = self.store.context(
                self.store_session_id,
                _asked(agent.messages),
                self.budget_tokens,
                owner=self.owner,
                memories=self.memories,
            )
        except SessionNotFound:  # a new session: nothing before this turn
            return
        shown = found.background()
        if shown:
            self._own[id(agent)] = agent.system_prompt
            agent.system_prompt = "\n\n".join(x for x in (agent.system_prompt, shown) if x)

    def after(self, event: AfterModelCallEvent) -> None:
        agent = event.agent
        if id(agent) in self._own:
            agent.system_prompt = self._own.pop(id(agent))


def context_hook(session_id: str, store: SessionStore | AsyncSessionStore, **options: Any) -> ContextHook:
    """`ContextHook(session_id, store, **options)`: `owner`, `agent_id`, `budget_tokens`, `memories`."""
    return ContextHook(session_id, store, **options)
