"""Strands' cross-session memory (`MemoryStore` under its `MemoryManager`) on the store's memories: what an
agent gets with `Agent(memory_manager=MemoryManager(stores=[StoreMemory(store, owner="user-42")]))`.

    from strands import Agent
    from strands.memory import MemoryManager
    from store.integrations.strands_memory import StoreMemory

    memory = StoreMemory(SessionStore.from_env(), owner="user-42")
    agent = Agent(memory_manager=MemoryManager(stores=[memory], add_tool_config=True))

The whole protocol as Strands declares it (`strands.memory.types`): the `MemoryStoreConfig` fields (`name`,
required and not blank; `description`; `max_search_results`, at least 1; `writable`; `extraction`), `search`,
and both write sinks. A fact added (by the `add_memory` tool, by Strands' client-side extraction, or
`manager.add`) is one memory of the owner's namespace (`("strands", name)` by default), keyed by its
content's digest: Strands' writes are at-least-once, and a duplicate lands on the same memory (the same id
comes back). `add_messages` is the sink of extraction without a client-side extractor: with the store's
extraction model (`Settings.extraction_model`) the backend extracts facts and preferences from the messages
(issue 48, no model call on the client); without one, each message that holds text is one memory, keyed by
its role and text, so a retried batch (or a message said again) lands on the same memories. `search` returns
only memories that match the query (Strands' semantics: no
unrelated neighbours, at most `max_search_results`, equal scores newest first): by meaning above a
similarity threshold when the store has an embedder (`memory_search.matching`), by the query's words
otherwise. Store errors keep their types; bad arguments are `InvalidInput`, a `ValueError` as Strands'
own stores raise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from strands.memory.types import AddMessagesContext, MemoryEntry, MemoryStore, SearchOptions

from store import SessionStore
from store.conversation.blocks import parts_of
from store.core import memories as m
from store.core import validation as v
from store.errors import InvalidInput
from store.integrations._calls import as_async
from store.integrations.memory_search import keep_messages, matching, memory_key

DEFAULT_RESULTS = 5
SOURCE_MESSAGES = "messages"  # `source` of a memory `add_messages` wrote


@dataclass(frozen=True)
class StoreMemoryAddResult:
    """What `StoreMemory.add` resolves to: the id (the memory's key) of the stored, or already present, fact."""

    id: str


def _results(value: Any, what: str) -> int | None:
    """A `max_search_results` (None: not given): an integer of at least 1; more than one search returns
    (100) is taken as 100."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"StoreMemory: {what} must be an integer")
    if value < 1:
        raise InvalidInput(f"StoreMemory: {what} must be at least 1.")
    return min(value, m.MAX_SEARCH_LIMIT)


def _text(message: Mapping[str, Any]) -> str:
    """The text of a Strands message's text blocks ("" when it holds none: tool calls, images)."""
    return "\n".join(p.text for p in parts_of(message.get("content")) if p.type == "text" and p.text).strip()


class StoreMemory(MemoryStore):
    """One owner's memories as a Strands `MemoryStore` (searchable; writable unless `writable=False`)."""

    def __init__(
        self,
        store: SessionStore,
        *,
        owner: str,
        name: str = "agent-store",
        description: str | None = "What the user told the agent in earlier sessions",
        namespace: tuple[str, ...] | None = None,
        max_search_results: int | None = DEFAULT_RESULTS,
        writable: bool = True,
        extraction: Any = None,
        threshold: float | None = None,
        strategies: Any = None,
    ) -> None:
        """Checked at once (InvalidInput, a ValueError): `name` not blank, `max_search_results` at least 1,
        `writable` a bool, the owner and namespace as the store takes them."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput("StoreMemory: name must not be empty.")
        if not isinstance(writable, bool):
            raise InvalidInput("StoreMemory: writable must be True or False")
        if description is not None and not isinstance(description, str):
            raise InvalidInput("StoreMemory: description must be a string")
        self.store = store
        self._store = as_async(store)  # what the async methods call: the store's requests off the event loop
        self.owner = v.owner(owner)
        self.name = name
        self.description = description
        self.namespace = m.namespace(namespace or ("strands", name.strip()))
        self.max_search_results = _results(max_search_results, "max_search_results")
        self.writable = writable
        self.extraction = extraction
        self.threshold = threshold
        self.strategies = strategies  # what `add_messages` extracts with a model (None: facts and preferences)

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        """The memories that match `query`, best first: at most the call's `max_search_results`, else the
        store's, else 5. A query with no word to match (blank, punctuation) finds nothing."""
        asked = _results((options or {}).get("max_search_results"), "max_search_results")
        limit = asked or self.max_search_results or DEFAULT_RESULTS
        if not isinstance(query, str):
            raise InvalidInput("StoreMemory: query must be a string")
        hits = await matching(self._store, self.owner, self.namespace, query, limit, self.threshold, ties="newest")
        return [
            MemoryEntry(
                content=str(hit.value.get("text", "")),
                metadata={**(hit.value.get("metadata") or {}), "key": hit.key, "score": hit.score},
            )
            for hit in hits
        ]

    def _writable(self) -> None:
        if not self.writable:
            raise InvalidInput("StoreMemory: store is not writable. Set writable=True in config to enable writes.")

    async def add(self, content: str, metadata: dict[str, Any] | None = None) -> StoreMemoryAddResult:
        """Keep `content` (with `metadata`, a JSON object) as one memory; the same content (blanks around it
        aside) again is the same memory, its metadata the latest."""
        self._writable()
        if not isinstance(content, str) or not content.strip():
            raise InvalidInput("StoreMemory: content must not be empty.")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInput("StoreMemory: metadata must be a dict")
        text = content.strip()
        key = memory_key(text)
        value: dict[str, Any] = {"text": text}
        if metadata:
            value["metadata"] = dict(metadata)
        await self._store.put_memory(self.owner, self.namespace, key, value, index=["text"])
        return StoreMemoryAddResult(id=key)

    async def add_messages(
        self, messages: Sequence[Mapping[str, Any]], context: AddMessagesContext | None = None
    ) -> list[StoreMemoryAddResult]:
        """The sink of Strands' extraction without a client-side extractor (`ExtractionConfig` with no
        `extractor`). When the store has an extraction model (`Settings.extraction_model`), the messages are
        distilled server-side (`SessionStore.extract_from_messages`: this store's `strategies`, each under
        this store's namespace, so `search` finds them) and the memories a run wrote or changed come back; a
        retried batch (the same messages) is found done and writes nothing. Without a model, each message that
        holds text is one memory (`{"text", "role", "source": "messages", "seq"}`: `seq`, its number in the
        batch as `context.sequence_numbers` gives it), keyed by its role and text: a retried batch writes the
        same memories again, never new ones. Messages without text (tool calls, images) are skipped."""
        self._writable()
        if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
            raise InvalidInput("StoreMemory: messages must be a list of messages")
        numbers = context.sequence_numbers if context is not None else None
        if numbers is not None and len(numbers) != len(messages):
            raise InvalidInput("StoreMemory: sequence_numbers must name each message once")
        if any(not isinstance(message, Mapping) for message in messages):
            raise InvalidInput("StoreMemory: each message must be a dict with a role and content")
        keys = await keep_messages(
            self._store,
            self.owner,
            self.namespace,
            [dict(message) for message in messages],
            source=f"strands-{memory_key(self.name)[:16]}",
            numbers=numbers,
            strategies=self.strategies,
            one_each=lambda: _one_memory_each(messages, numbers),
        )
        return [StoreMemoryAddResult(id=key) for key in keys]


def _one_memory_each(
    messages: Sequence[Mapping[str, Any]], numbers: list[int] | None
) -> list[tuple[str, dict[str, Any]]]:
    """Each message that holds text as one memory, keyed by its role and text."""
    values: list[tuple[str, dict[str, Any]]] = []
    for i, message in enumerate(messages):
        role, text = str(message.get("role", "")), _text(message)
        if text:
            seq = numbers[i] if numbers is not None else None
            value: dict[str, Any] = {"text": text, "role": role, "source": SOURCE_MESSAGES, "seq": seq}
            values.append((memory_key(SOURCE_MESSAGES, role, text), value))
    return values
