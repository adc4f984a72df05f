"""Google ADK's memory (`BaseMemoryService`) on the store's memories: what `Runner(memory_service=...)` gives
ADK's `load_memory` and `preload_memory` tools.

    from google.adk.runners import Runner
    from store.integrations.adk_memory import StoreMemoryService

    runner = Runner(app_name="travel", agent=agent, session_service=..., memory_service=StoreMemoryService(store))

The owner is ADK's `user_id` (as the session service's), each app a namespace: `("adk", app_name)`. A session
added to memory (`add_session_to_memory`, again and again over its life) or a delta of events
(`add_events_to_memory`) is distilled into memories by the store's extraction model when it has one
(`Settings.extraction_model`: facts and preferences under the app's namespace, as Memory Bank generates them,
issue 48), else puts one memory per event that says something, keyed by the event's id; adding twice changes
nothing; `add_memory` writes explicit entries; `delete_memory` removes one by the id a search
returned. `search_memory` returns only memories that match the query (ADK's semantics): by meaning above a
similarity threshold when the store has an embedder (`memory_search.matching`), by the query's words otherwise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from store import SessionStore
from store.integrations._calls import as_async
from store.integrations.memory_search import keep_messages, matching, memory_key

RESULTS = 10


class StoreMemoryService(BaseMemoryService):
    """ADK's memory service over a `SessionStore`'s memories."""

    def __init__(
        self, store: SessionStore, *, results: int = RESULTS, threshold: float | None = None, strategies: Any = None
    ) -> None:
        self.store = store
        self._store = as_async(store)  # what the async methods call: the store's requests off the event loop
        self.results = results
        self.threshold = threshold
        self.strategies = strategies  # what a model extracts (None: facts and preferences)

    @staticmethod
    def _namespace(app_name: str) -> tuple[str, ...]:
        return ("adk", app_name)

    async def add_session_to_memory(self, session: Session) -> None:
        """With the store's extraction model: the session's events distilled into memories (facts and
        preferences, or `strategies`) under the app's namespace, as Memory Bank generates them; adding the
        session again reads only its newest window of events again. Without one: one memory per event."""
        await self.add_events_to_memory(
            app_name=session.app_name, user_id=session.user_id, events=session.events, session_id=session.id
        )

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """With the store's extraction model: the events distilled into memories (a delta handed again is found
        done). Without one: one memory per event that says something, keyed by the event's id."""
        said = [(i, e) for i, e in enumerate(events, start=1) if _text(e.content)]
        messages = [
            {"role": "user" if e.author == "user" else "assistant", "content": _text(e.content)} for _, e in said
        ]
        await keep_messages(
            self._store,
            user_id,
            self._namespace(app_name),
            messages,
            source="adk-" + memory_key(app_name, session_id or "")[:24],
            numbers=[i for i, _ in said],
            strategies=self.strategies,
            one_each=lambda: [(e.id, _event_value(e, session_id)) for _, e in said],
        )

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        for entry in memories:
            text = _text(entry.content)
            key = entry.id or memory_key(text)
            value = {
                "text": text,
                "author": entry.author,
                "timestamp": entry.timestamp,
                "content": entry.content.model_dump(mode="json", exclude_none=True),
                "metadata": dict(entry.custom_metadata),
            }
            await self._store.put_memory(user_id, self._namespace(app_name), key, value, index=["text"])

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        namespace = self._namespace(app_name)
        hits = await matching(self._store, user_id, namespace, query, self.results, self.threshold)
        memories = []
        for hit in hits:
            stored: Any = hit.value.get("content")
            content = (
                types.Content.model_validate(stored)
                if isinstance(stored, dict)
                else types.Content(parts=[types.Part(text=str(hit.value.get("text", "")))])
            )
            memories.append(
                MemoryEntry(
                    content=content,
                    id=hit.key,
                    author=hit.value.get("author"),
                    timestamp=hit.value.get("timestamp"),
                    custom_metadata={"score": hit.score, **(hit.value.get("metadata") or {})},
                )
            )
        return SearchMemoryResponse(memories=memories)

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        if memory_id is not None:
            await self._store.delete_memory(user_id, self._namespace(app_name), memory_id)


def _text(content: types.Content | None) -> str:
    """The text of an event's or entry's parts ("" when it has none)."""
    if content is None or not content.parts:
        return ""
    return " ".join(p.text for p in content.parts if p.text).strip()


def _event_value(event: Event, session_id: str | None) -> dict[str, Any]:
    """An event that says something as one memory's value."""
    return {
        "text": _text(event.content),
        "author": event.author,
        "timestamp": datetime.fromtimestamp(event.timestamp, UTC).isoformat(),
        "session_id": session_id,
        "content": event.content.model_dump(mode="json", exclude_none=True) if event.content else None,
    }
