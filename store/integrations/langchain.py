"""LangChain: a `BaseChatMessageHistory` kept in this store, a drop-in for `DynamoDBChatMessageHistory`.

    from langchain_core.runnables.history import RunnableWithMessageHistory
    from store import SessionStore
    from store.integrations.langchain import SessionStoreChatMessageHistory

    store = SessionStore.from_env()
    chain = RunnableWithMessageHistory(
        runnable, lambda session_id: SessionStoreChatMessageHistory(session_id, store, owner=user_id)
    )

Each LangChain message is one store message: its type (`human`, `ai`, `tool`, `system`, ...) is the role,
and the content is LangChain's own serialized form (`message_to_dict`), so tool calls, tool messages,
`additional_kwargs`, `response_metadata`, ids and usage round-trip exactly. `add_messages` is one append
(one DynamoDB request however long the history), where `DynamoDBChatMessageHistory` reads and rewrites
the whole history item. The store session is the session id in the owner's namespace (`scoped_id`), so the
owner reads it over HTTP under the same id. `migrate_langchain_table` copies an existing
`DynamoDBChatMessageHistory` table into the store (`agent-store migrate langchain --table NAME`).
Install with `pip install agent-session-store[langchain]`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, SystemMessage, message_to_dict, messages_from_dict

from store.conversation.dialects import with_reported_usage
from store.core.scoped_ids import scoped_id
from store.errors import SessionExists, SessionNotFound
from store.integrations._calls import AnyStore, Runner, as_async, as_sync, ensure_session, or_missing
from store.session_store import APPEND_MAX, SessionStore

FRAMEWORK = "langchain"
DEFAULT_OWNER = "langchain"
PAGE = 1000


def _stored(message: BaseMessage) -> dict[str, Any]:
    return with_reported_usage({"role": message.type[:64], "content": message_to_dict(message)})


def _messages(records: Sequence[Any]) -> list[BaseMessage]:
    return list(messages_from_dict([r.content for r in records]))


def _in_context(background: str, records: Sequence[Any]) -> list[BaseMessage]:
    """A context's background as a system message, then `records` as messages (a tool result whose call is
    not among them left out)."""
    kept = _messages(records)
    while kept and kept[0].type == "tool":
        kept = kept[1:]
    return [*([SystemMessage(background)] if background else []), *kept]


class SessionStoreChatMessageHistory(BaseChatMessageHistory):
    """A chat history in this store: `messages`, `add_messages` (one atomic append), `clear`, and their
    async forms; on a `SessionStore` or an `AsyncSessionStore`."""

    def __init__(
        self,
        session_id: str,
        store: AnyStore,
        *,
        owner: str = DEFAULT_OWNER,
        retention: timedelta | int | None = None,
        history_size: int | None = None,
        context_tokens: int | None = None,
        runner: Runner | None = None,
    ) -> None:
        """`session_id` names the history in `owner`'s namespace (the store session
        `scoped_id(owner, session_id)`, created on the first add; expiring after `retention` without
        activity if given). With `history_size`, `messages` holds only the latest that many (as
        `DynamoDBChatMessageHistory`'s), widened to the `AIMessage` whose tool call a `ToolMessage` among
        them answers. With `context_tokens`, `messages` is the store's context for the next turn within that many
        tokens (`SessionStore.context`, the question being the latest human message): a system message with
        the running summary, the owner's memories and the older messages that matter, then the history from the
        oldest recent message that fits. `runner` serves the sync methods on an AsyncSessionStore."""
        self.session_id = session_id
        self.store = store
        self._store = as_async(store)  # typed calls, on either store
        self.owner = owner
        self.retention = retention
        self.history_size = history_size
        self.context_tokens = context_tokens
        self.store_session_id = scoped_id(owner, session_id)
        self._sync = as_sync(store, runner)  # typed calls from the sync methods, on either store

    # ------------------------------------------------------------ sync

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The history, oldest first. With `history_size`, the latest that many, widened so that no
        `ToolMessage` comes without the `AIMessage` that made its call (a model API refuses one)."""
        try:
            if self.context_tokens is not None:
                found = self._sync.context(self.store_session_id, None, self.context_tokens, owner=self.owner)
                first = found.window_start
                page = self._sync.list_messages(self.store_session_id, after_seq=first - 1, owner=self.owner)
                return _in_context(found.background(), page.items)
            if self.history_size is not None:
                window = self._sync.load_full(self.store_session_id, last=self.history_size, owner=self.owner)
                return _messages(window.messages)
            return _messages(list(self._pages(self._sync)))
        except SessionNotFound:
            return []

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append `messages` in order: atomically up to 97, in atomic batches of 97 beyond."""
        for batch in self._batches(messages):
            try:
                self._sync.append_messages(self.store_session_id, batch, owner=self.owner)
            except SessionNotFound:
                with contextlib.suppress(SessionExists):
                    self._sync.create_session(
                        self.owner,
                        session_id=self.store_session_id,
                        metadata={"framework": FRAMEWORK},
                        retention=self.retention,
                    )
                self._sync.append_messages(self.store_session_id, batch, owner=self.owner)

    def clear(self) -> None:
        """Remove the history (the store session goes, with everything it holds)."""
        self._sync.delete_session(self.store_session_id, owner=self.owner)

    # ------------------------------------------------------------ async

    async def aget_messages(self) -> list[BaseMessage]:
        if self.context_tokens is not None:
            found = await or_missing(
                None, self._store.context(self.store_session_id, None, self.context_tokens, owner=self.owner)
            )
            if found is None:
                return []
            first = found.window_start
            recent = await self._store.list_messages(self.store_session_id, after_seq=first - 1, owner=self.owner)
            return _in_context(found.background(), recent.items)
        if self.history_size is not None:
            window = await or_missing(
                None, self._store.load_full(self.store_session_id, last=self.history_size, owner=self.owner)
            )
            return [] if window is None else _messages(window.messages)
        out: list[Any] = []
        cursor = None
        while True:
            page = await or_missing(
                None, self._store.list_messages(self.store_session_id, limit=PAGE, cursor=cursor, owner=self.owner)
            )
            if page is None:
                return []
            out += page.items
            cursor = page.next_cursor
            if cursor is None:
                return _messages(out)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        for batch in self._batches(messages):
            try:
                await self._store.append_messages(self.store_session_id, batch, owner=self.owner)
            except SessionNotFound:
                await ensure_session(
                    self.store, self.owner, self.store_session_id, {"framework": FRAMEWORK}, self.retention
                )
                await self._store.append_messages(self.store_session_id, batch, owner=self.owner)

    async def aclear(self) -> None:
        await self._store.delete_session(self.store_session_id, owner=self.owner)

    # ------------------------------------------------------------ helpers

    @staticmethod
    def _batches(messages: Sequence[BaseMessage]) -> Iterator[list[dict[str, Any]]]:
        stored = [_stored(m) for m in messages]
        for start in range(0, len(stored), APPEND_MAX):
            yield stored[start : start + APPEND_MAX]

    def _pages(self, store: SessionStore) -> Iterator[Any]:
        cursor = None
        while True:
            page = store.list_messages(self.store_session_id, limit=PAGE, cursor=cursor, owner=self.owner)
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return


# ---------------------------------------------------------------- migrating a DynamoDBChatMessageHistory table


@dataclass
class Migrated:
    """What a migration run did."""

    sessions: int = 0
    messages_copied: int = 0
    sessions_already_done: int = 0


def migrate_langchain_table(
    store: SessionStore,
    scan: Iterator[dict[str, Any]],
    *,
    owner: str = DEFAULT_OWNER,
    key_attribute: str = "SessionId",
    history_attribute: str = "History",
    progress: Callable[[Migrated], None] | None = None,
) -> Migrated:
    """Copy every history of a `DynamoDBChatMessageHistory` table (its items, as `scan` yields them,
    deserialized) into `store`, each as the history `SessionStoreChatMessageHistory(session_id, store,
    owner=owner)` reads. Idempotent: each session's state records how many of its messages were copied,
    in the same transaction as the messages (`save_full`), so a rerun, or a run resumed after a crash,
    copies only what is missing and never a message twice."""
    done = Migrated()
    for item in scan:
        session_id = str(item[key_attribute])
        history = list(item.get(history_attribute) or [])
        sid = scoped_id(owner, session_id)
        with contextlib.suppress(SessionExists):
            store.create_session(owner, session_id=sid, title=session_id[:1024], metadata={"framework": FRAMEWORK})
        snapshot = store.load_state(sid, owner=owner)
        state = dict(snapshot.state or {}) if snapshot is not None and isinstance(snapshot.state, dict) else {}
        copied = int(state.get("langchain_migration", {}).get("copied", 0))
        if copied >= len(history):
            done.sessions_already_done += 1
        head = store.get_session(sid, owner=owner)
        position = head.last_seq if head is not None else 0
        while copied < len(history):
            batch = [_stored(m) for m in messages_from_dict(history[copied : copied + APPEND_MAX])]
            copied += len(batch)
            state["langchain_migration"] = {"copied": copied}
            saved = store.save_full(sid, batch, state, expected_seq=position, owner=owner, keep_state=False)
            position = saved.seq
            done.messages_copied += len(batch)
        done.sessions += 1
        if progress is not None:
            progress(done)
    return done


def scan_table(client: Any, table: str) -> Iterator[dict[str, Any]]:
    """Every item of a DynamoDB table, deserialized, numbers as int or float (a migration reads the whole
    source table; it is an operator's tool)."""
    from boto3.dynamodb.types import TypeDeserializer

    decode = TypeDeserializer().deserialize
    for page in client.get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        for item in page["Items"]:
            yield {name: _plain(decode(value)) for name, value in item.items()}


def _plain(value: Any) -> Any:
    """DynamoDB's decoded values as JSON ones: Decimal as int or float, sets as lists."""
    from decimal import Decimal

    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | set | tuple):
        return [_plain(v) for v in value]
    return value
