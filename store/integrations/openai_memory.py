"""Long-term memory for the OpenAI Agents SDK: two tools an agent calls, over the store's memories.

    from agents import Agent
    from store.integrations.openai_memory import memory_tools

    agent = Agent(name="assistant", tools=memory_tools(SessionStore.from_env(), owner="user-42"))

`remember(fact)` keeps a fact for the owner (one memory, keyed by the fact's digest: saying it twice keeps
one); `recall(query)` returns the facts that match the query best (by meaning when the store has an
embedder, by words otherwise), one a line. The owner is fixed when the tools are made (one set per user),
never taken from the model's arguments."""

from __future__ import annotations

from agents import Tool, function_tool

from store import SessionStore
from store.integrations._calls import as_async
from store.integrations.memory_search import memory_key

NAMESPACE = ("openai-agents", "facts")


def memory_tools(
    store: SessionStore, *, owner: str, namespace: tuple[str, ...] = NAMESPACE, results: int = 5
) -> list[Tool]:
    """The `remember` and `recall` tools for one owner's memories."""
    calls = as_async(store)  # the store's requests off the event loop

    @function_tool
    async def remember(fact: str) -> str:
        """Keep a fact about the user for later conversations (a preference, a plan, a detail they shared)."""
        key = memory_key(fact.strip())
        await calls.put_memory(owner, namespace, key, {"text": fact.strip()})
        return "remembered"

    @function_tool
    async def recall(query: str) -> str:
        """Look up what the user told you in earlier conversations; returns the best matching facts."""
        page = await calls.search_memories(owner, namespace, query=query, limit=results)
        found = [str(hit.value.get("text", "")) for hit in page.items]
        return "\n".join(found) if found else "nothing remembered about that"

    return [remember, recall]
