"""The MCP server: the tools a model uses to remember, recall and read, and the resources a host shows.

Every tool acts as the request's caller (`caller_of`): no tool takes an owner. A read-only caller gets a
server without the writing tools (`build_server(writes=False)`), so `tools/list` shows only what it may call.
Arguments are bounded in their JSON schemas and checked again by the store; a store error is a tool error
with the store's code and message."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from store.errors import SessionNotFound, StoreError
from store.extraction import ExtractionRuns
from store.extraction.strategies import BuiltInName
from store.mcp.answers import (
    Forgotten,
    Namespaces,
    Transcript,
    answer,
    line,
    refusal,
    store_errors,
)
from store.mcp.caller import McpCaller, caller_of
from store.models import MemoryHits, MemoryItem, MessageHits, SearchPage, TurnContext

NAME = "agent-session-store"
INSTRUCTIONS = (
    "Long-term memory and conversation history for this user. Before answering a question that may depend "
    "on earlier conversations or on what the user told you before, call search_memories (facts and "
    "preferences) or search_messages (what was said). When the user tells you something worth keeping "
    "(a preference, a fact about them or their work, a decision), call remember. get_context gives, for a "
    "session, what a model should see next: a summary, the recent messages and what matters from earlier."
)

Label = Annotated[str, Field(min_length=1, max_length=256)]
Namespace = Annotated[
    list[Label],
    Field(min_length=1, max_length=8, description='A memory namespace: a list of labels, e.g. ["preferences"]'),
]
Prefix = Annotated[
    list[Label], Field(max_length=8, description="Only namespaces under these labels ([] = all of them)")
]
Key = Annotated[str, Field(min_length=1, max_length=512, description="The memory's key within its namespace")]
Query = Annotated[str, Field(min_length=1, max_length=2048)]
SessionId = Annotated[str, Field(min_length=1, max_length=1024, description="A session id, as the user names it")]
Mode = Annotated[
    Literal["auto", "semantic", "keyword", "hybrid"],
    Field(description="semantic (by meaning), keyword (by words), hybrid (both); auto picks the best available"),
]
Cursor = Annotated[str | None, Field(max_length=2048, description="From a previous answer's next_cursor")]

Who = Callable[[Context], McpCaller]  # a request's caller, from its context

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)


def remembered_key(text: str) -> str:
    """The key `remember` gives a text when none is named: the same text the same key, so that a retried call
    (or a fact told twice) keeps one memory."""
    return "m-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def build_server(fixed: McpCaller | None = None, *, writes: bool = True) -> MCPServer:
    """An MCP server over the store. Each request's caller is its transport's verified one, or `fixed` (a
    stdio server's, started for one owner). `writes=False`: only the reading tools."""
    server: MCPServer = MCPServer(NAME, instructions=INSTRUCTIONS, version="1.0.0", log_level="WARNING")

    def me(ctx: Context) -> McpCaller:
        return caller_of(ctx.request_context.request, fixed)

    _reading_tools(server, me)
    if writes:
        _writing_tools(server, me)
    _resources(server, me)
    return server


def _reading_tools(server: MCPServer, me: Who) -> None:
    @server.tool(title="Search memories", annotations=READ)
    def search_memories(
        ctx: Context,
        query: Annotated[str | None, Field(max_length=2048, description="What to look for; none: list")] = None,
        namespace_prefix: Prefix | None = None,
        mode: Mode = "auto",
        filter: Annotated[
            dict[str, Any] | None, Field(description="Value fields and the values they must equal")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, MemoryHits]:
        """Search the user's long-term memories (facts, preferences, notes) by meaning and words, best first.
        Without a query, lists the memories under the prefix."""
        who = me(ctx)
        with store_errors(who.owner):
            found = who.store.search_memories(
                who.owner, namespace_prefix or (), query=query, filter=filter, mode=mode, limit=limit, cursor=cursor
            )
        return answer(found)

    @server.tool(title="Get a memory", annotations=READ)
    def get_memory(ctx: Context, namespace: Namespace, key: Key) -> Annotated[CallToolResult, MemoryItem]:
        """One memory by its namespace and key."""
        who = me(ctx)
        with store_errors(who.owner):
            found = who.store.get_memory(who.owner, namespace, key)
        if found is None:
            raise ToolError(f"memory_not_found: no memory {key!r} in {namespace}")
        return answer(found)

    @server.tool(title="List memory namespaces", annotations=READ)
    def list_namespaces(
        ctx: Context,
        prefix: Prefix | None = None,
        max_depth: Annotated[int | None, Field(ge=1, le=8)] = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, Namespaces]:
        """The namespaces that hold the user's memories."""
        who = me(ctx)
        with store_errors(who.owner):
            page = who.store.list_namespaces(
                who.owner, prefix=tuple(prefix) if prefix else None, max_depth=max_depth, limit=limit, cursor=cursor
            )
        return answer(Namespaces(items=[list(ns) for ns in page.items], next_cursor=page.next_cursor))

    @server.tool(title="Context for a session", annotations=READ)
    def get_context(
        ctx: Context,
        session_id: SessionId,
        question: Annotated[str | None, Field(max_length=2048, description="Default: the last user message")] = None,
        budget_tokens: Annotated[int, Field(ge=64, le=200_000)] = 2000,
        include_memories: bool = True,
    ) -> Annotated[CallToolResult, TurnContext]:
        """What a model should see next in a session, within a token budget: the running summary, the recent
        messages, and the older messages and long-term memories that matter to the question."""
        who = me(ctx)
        with store_errors(who.owner):
            found = who.store.context(session_id, question, budget_tokens, owner=who.owner, memories=include_memories)
        return answer(found, found.as_text())

    @server.tool(title="Search sessions", annotations=READ)
    def search_sessions(
        ctx: Context, query: Query, limit: Annotated[int, Field(ge=1, le=100)] = 20, cursor: Cursor = None
    ) -> Annotated[CallToolResult, SearchPage]:
        """Find the user's sessions whose title or messages contain the query's words, newest sessions first."""
        who = me(ctx)
        with store_errors(who.owner):
            hits = who.store.search(who.owner, query, limit=limit, cursor=cursor)
        return answer(SearchPage.of(hits))

    @server.tool(title="Search messages", annotations=READ)
    def search_messages(
        ctx: Context,
        query: Query,
        session_id: Annotated[str | None, Field(max_length=1024, description="Only this session's")] = None,
        mode: Mode = "auto",
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, MessageHits]:
        """Find what was said, by meaning and words, across the user's sessions or in one; each hit names its
        session and sequence number (read around it with read_transcript)."""
        who = me(ctx)
        with store_errors(who.owner):
            found = who.store.search_messages(
                who.owner, query, session_id=session_id, mode=mode, limit=limit, cursor=cursor
            )
        return answer(found)

    @server.tool(title="Read a transcript", annotations=READ)
    def read_transcript(
        ctx: Context,
        session_id: SessionId,
        after_seq: Annotated[int | None, Field(ge=0, description="Start after this sequence number")] = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> Annotated[CallToolResult, Transcript]:
        """A page of a session's messages, oldest first, as a person reads them."""
        who = me(ctx)
        with store_errors(who.owner):
            page = who.store.list_messages(session_id, after_seq=after_seq, limit=limit)
        lines = [line(r) for r in page.items]
        more = lines[-1].seq if page.next_cursor and lines else None
        found = Transcript(session_id=session_id, messages=lines, next_after_seq=more)
        return answer(found, "\n".join(f"[{m.seq}] {m.role}: {m.text}" for m in lines) or "(no messages)")

    @server.tool(title="Extraction runs", annotations=READ)
    def list_extraction_runs(ctx: Context, session_id: SessionId) -> Annotated[CallToolResult, ExtractionRuns]:
        """The memory extraction runs of a session, oldest first: what each strategy read and what it wrote."""
        who = me(ctx)
        with store_errors(who.owner):
            runs = who.store.list_extraction_runs(session_id, owner=who.owner)
        return answer(ExtractionRuns(items=runs))


def _writing_tools(server: MCPServer, me: Who) -> None:
    def writer(ctx: Context) -> McpCaller:
        who = me(ctx)
        if not who.writes:
            raise ToolError("insufficient_scope: this token may only read")
        return who

    @server.tool(title="Remember", annotations=WRITE)
    def remember(
        ctx: Context,
        text: Annotated[str, Field(min_length=1, max_length=16_384, description="The fact, in a sentence")],
        namespace: Namespace | None = None,
        key: Annotated[str | None, Field(min_length=1, max_length=512, description="Default: from the text")] = None,
        ttl_seconds: Annotated[int | None, Field(ge=60, le=10 * 365 * 86400)] = None,
    ) -> Annotated[CallToolResult, MemoryItem]:
        """Keep something the user told you for later sessions (a preference, a fact, a decision), in a
        namespace (default ["notes"]). The same key replaces the memory; the same text without a key is kept
        once."""
        who = writer(ctx)
        with store_errors(who.owner):
            item = who.store.put_memory(
                who.owner, namespace or ["notes"], key or remembered_key(text), {"text": text}, ttl=ttl_seconds
            )
        return answer(item)

    @server.tool(title="Correct a memory", annotations=WRITE)
    def correct_memory(
        ctx: Context, namespace: Namespace, key: Key, text: Annotated[str, Field(min_length=1, max_length=16_384)]
    ) -> Annotated[CallToolResult, MemoryItem]:
        """Replace a memory's text with the corrected one (its earlier text is kept in its history)."""
        who = writer(ctx)
        with store_errors(who.owner):
            item = who.store.correct_memory(who.owner, namespace, key, text)
        return answer(item)

    @server.tool(title="Forget a memory", annotations=DESTROY)
    def forget_memory(ctx: Context, namespace: Namespace, key: Key) -> Annotated[CallToolResult, Forgotten]:
        """Delete one memory (what the user asked you to forget, or what is no longer true)."""
        who = writer(ctx)
        with store_errors(who.owner):
            who.store.delete_memory(who.owner, namespace, key)
        return answer(Forgotten(namespace=list(namespace), key=key))

    @server.tool(title="Extract memories", annotations=WRITE)
    def extract_memories(
        ctx: Context,
        session_id: SessionId,
        strategies: Annotated[
            list[BuiltInName] | None,
            Field(description="Default: the user's choice, else the stack's"),
        ] = None,
    ) -> Annotated[CallToolResult, ExtractionRuns]:
        """Distil a session's new messages into long-term memories now (needs a model configured where the
        store runs)."""
        who = writer(ctx)
        if who.extract is None:
            raise ToolError("invalid_request: memory extraction is not configured here (no model)")
        with store_errors(who.owner):
            runs, accepted = who.extract(who, session_id, list(strategies) if strategies else None)
        return answer(ExtractionRuns(items=runs, accepted=accepted))


def _resources(server: MCPServer, me: Who) -> None:
    @server.resource(
        "agent-store://sessions/{session_id}/transcript",
        name="transcript",
        title="A session's transcript",
        description="The last 200 messages of a session, one per line",
        mime_type="text/plain",
    )
    def transcript(session_id: str, ctx: Context) -> str:
        who = me(ctx)
        try:
            records = who.store.last_messages(session_id, 200)
        except StoreError as exc:
            raise _unreadable(exc, who.owner) from None
        return "\n".join(f"[{r.seq}] {m.role}: {m.text}" for r in records for m in [line(r)])

    @server.resource(
        "agent-store://memories{/namespace*}",
        name="memories",
        title="A memory namespace",
        description="The memories of a namespace (its labels as path segments), one per line",
        mime_type="application/json",
    )
    def namespace_memories(namespace: list[str], ctx: Context) -> str:
        who = me(ctx)
        try:
            found = who.store.search_memories(who.owner, tuple(namespace), limit=100)
        except StoreError as exc:
            raise _unreadable(exc, who.owner) from None
        return found.model_dump_json()


def _unreadable(exc: StoreError, owner: str) -> ResourceError:
    """A resource's read refused by the store: not found (-32602) for a session that is not the caller's, else
    the store's code and message (-32603), ids as the caller names them."""
    message = str(refusal(exc, owner))
    return ResourceNotFoundError(message) if isinstance(exc, SessionNotFound) else ResourceError(message)
