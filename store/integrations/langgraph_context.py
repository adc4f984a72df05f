"""LangGraph: the store's context for a turn as a graph's model input (`context_hook`), one line in an agent:

    agent = create_react_agent(model, tools, checkpointer=saver, pre_model_hook=context_hook(saver))

Before each model call, the hook asks the store for the thread's context (`SessionStore.context`, the question
being the latest human message) and hands the model, through `llm_input_messages` (the graph's state is left
as it is), a system message with the thread's running summary, the owner's memories and the older messages
that matter, then the state's messages from the oldest recent one that fits (this turn's always). Install with
`pip install agent-session-store[langgraph]`."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from store import AsyncSessionStore
from store.errors import SessionNotFound
from store.integrations._calls import as_sync
from store.integrations.langgraph import SessionStoreSaver
from store.models import TurnContext


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("text"))


def context_hook(
    saver: SessionStoreSaver, budget_tokens: int = 2000, *, memories: bool = True
) -> RunnableLambda[dict[str, Any], dict[str, Any]]:
    """A `pre_model_hook` for `saver`'s threads: the model sees the thread's context within `budget_tokens` (the
    turn's new messages aside); the state keeps every message."""
    store = as_sync(saver.store) if isinstance(saver.store, AsyncSessionStore) else saver.store

    def hook(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        messages: list[BaseMessage] = list(state.get("messages") or [])
        thread = (config.get("configurable") or {}).get("thread_id")
        humans = [_text(m) for m in messages if isinstance(m, HumanMessage)]
        asked = TurnContext.question(humans[-1] if humans else None)
        try:
            found = store.context(
                saver.thread_session_id(str(thread)), asked, budget_tokens, owner=saver.owner, memories=memories
            )
        except SessionNotFound:  # a thread with no conversation yet: nothing before this turn
            return {"llm_input_messages": messages}
        first = found.window_start
        kept = messages[first - 1 :] if len(messages) >= found.last_seq else messages
        while kept and isinstance(kept[0], ToolMessage):
            kept = kept[1:]  # its call is not in the window
        shown = found.background()
        return {"llm_input_messages": [*([SystemMessage(shown)] if shown else []), *kept]}

    return RunnableLambda(hook, name="agent_store_context")
