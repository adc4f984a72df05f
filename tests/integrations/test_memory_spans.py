"""OpenTelemetry spans for memory search and put (store/front/observed.py): made around the whole call, sync
and async, on every backend, holding choices and counts and never user content; and an async store embeds
off its event loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from store import AsyncSessionStore, SessionStore, Settings
from store.embeddings import FunctionEmbedder
from store.errors import InvalidInput
from store.front import observed

SECRETS = ("owner-7f3a", "private-label", "peanut", "allergy", "what can't I eat")


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(observed, "tracer_provider", lambda: provider)
    return exporter


def _content_free(exporter: InMemorySpanExporter) -> None:
    for span in exporter.get_finished_spans():
        shown = [span.name, span.status.description or "", *map(str, (span.attributes or {}).values())]
        shown += [str(k) for k in (span.attributes or {})]
        for secret in SECRETS:
            assert not any(secret in text for text in shown), f"{span.name} shows {secret!r}"


def test_a_search_and_a_put_are_spans_without_user_content(
    remembering_store: SessionStore, spans: InMemorySpanExporter
) -> None:
    store = remembering_store
    store.put_memory("owner-7f3a", ("private-label",), "k", {"text": "a peanut allergy"})
    page = store.search_memories("owner-7f3a", ("private-label",), query="what can't I eat", limit=3)
    assert [h.key for h in page.items] == ["k"]
    put, search = spans.get_finished_spans()
    assert put.name == "agent_store.memory.put" and search.name == "agent_store.memory.search"
    attributes = dict(search.attributes or {})
    assert attributes["agent_store.memory.hits"] == 1 and attributes["agent_store.memory.more"] is False
    assert attributes["agent_store.memory.mode"] == "auto" and attributes["agent_store.memory.limit"] == 3
    assert attributes["agent_store.memory.prefix_depth"] == 1
    assert attributes["agent_store.memory.embedder"] == store.settings.embedder.model_id
    assert search.status.status_code != StatusCode.ERROR
    _content_free(spans)


def test_a_refused_search_is_an_error_span_naming_only_the_error(
    remembering_store: SessionStore, spans: InMemorySpanExporter
) -> None:
    with pytest.raises(InvalidInput):
        remembering_store.search_memories("owner-7f3a", ("private-label",), query="what can't I eat", cursor="peanut")
    (span,) = spans.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR and span.status.description == "InvalidInput"
    assert dict(span.attributes or {})["error.type"] == "InvalidInput"
    _content_free(spans)


def test_an_async_store_spans_the_whole_call_and_embeds_off_its_loop(spans: InMemorySpanExporter) -> None:
    embedded_on: list[int] = []

    def embed(texts: list[str]) -> list[list[float]]:
        embedded_on.append(threading.get_ident())
        return [[1.0, float(len(t))] for t in texts]

    async def run() -> tuple[int, Any]:
        store = AsyncSessionStore.memory(Settings(embedder=FunctionEmbedder(embed, 2, "two")))
        await store.put_memory("owner-7f3a", ("private-label",), "k", {"text": "a peanut allergy"})
        page = await store.search_memories("owner-7f3a", ("private-label",), query="what can't I eat")
        return threading.get_ident(), page

    loop_thread, page = asyncio.run(run())
    assert [h.key for h in page.items] == ["k"]
    assert len(embedded_on) == 2 and loop_thread not in embedded_on
    names = [s.name for s in spans.get_finished_spans()]
    assert names == ["agent_store.memory.put", "agent_store.memory.search"]  # one each: not the checks' too
    (search,) = [s for s in spans.get_finished_spans() if s.name.endswith("search")]
    assert dict(search.attributes or {})["agent_store.memory.hits"] == 1
    _content_free(spans)
