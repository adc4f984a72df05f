"""Google ADK: the store's context for a turn in each model call's instructions (`context_callback`), one line:

    agent = LlmAgent(..., before_model_callback=context_callback(store))

Before each model call, the callback asks the store for the ADK session's context (`SessionStore.context`, the
question being the latest user message) and appends to the request's instructions the session's running
summary, the user's memories and the older messages that matter (an agent whose events ADK compacts or trims
has let them go); the session keeps every event. The session is the one `StoreSessionService` keeps for the
callback's session (its user is the owner). Install with `pip install agent-session-store[adk]`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from store import AsyncSessionStore, SessionStore
from store.errors import SessionNotFound
from store.integrations._calls import as_async
from store.integrations.adk import named_store_id, session_store_id
from store.models import TurnContext


def _asked(contents: list[Any]) -> str | None:
    for content in reversed(contents):
        if getattr(content, "role", None) == "user":
            words = " ".join(p.text for p in (content.parts or []) if getattr(p, "text", None))
            if words.strip():
                return TurnContext.question(words)
    return None


def context_callback(
    store: SessionStore | AsyncSessionStore, budget_tokens: int = 2000, *, memories: bool = True
) -> Callable[[Any, Any], Awaitable[None]]:
    """A `before_model_callback` that adds the session's context to each model call's instructions (within
    `budget_tokens`, the recent events aside) and lets the call go on."""
    reader = as_async(store)

    async def add_context(callback_context: Any, llm_request: Any) -> None:
        session = callback_context.session
        asked = _asked(list(llm_request.contents or []))
        found = None
        for store_id in (
            named_store_id(session.user_id, session.id),
            session_store_id(session.app_name, session.user_id, session.id),
        ):
            try:
                found = await reader.context(store_id, asked, budget_tokens, owner=session.user_id, memories=memories)
                break
            except SessionNotFound:
                continue
        shown = found.background() if found is not None else ""
        if shown:
            llm_request.append_instructions([shown])
        return None

    return add_context
