"""The public operations on the transcript: append, list, read, pop, usage and compaction.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from store.core import validation as v
from store.core.paging import MessageQuery
from store.front.base import Domain
from store.models import Message, MessageRecord, Page, TokenUsage
from store.requests import (
    AppendMessages,
    GetLatestCompaction,
    GetMessage,
    LastMessages,
    ListMessages,
    MarkCompaction,
    PopMessage,
    UpdateUsage,
)

APPEND_MAX = 97  # a transaction holds 100 items: the head, an idempotency record, an upload intent, the messages


class Messages(Domain):
    """The transcript: append, list, read, pop, usage and compaction."""

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Message | dict[str, Any]],
        *,
        expected_seq: int | None = None,
        idempotency_key: str | None = None,
        owner: str | None = None,
    ) -> list[MessageRecord]:
        """Append up to 97 messages atomically, numbered after the session's last sequence number.
        `expected_seq` stale -> Conflict; a repeat with the same `idempotency_key` returns the first
        call's records and writes nothing."""
        return self._backend.execute(
            AppendMessages(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                messages=v.messages(messages, maximum=APPEND_MAX),
                expected_seq=v.seq(expected_seq, "expected_seq"),
                idempotency_key=v.optional_ident(idempotency_key, "idempotency_key"),
            )
        )

    def list_messages(
        self,
        session_id: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
        since_compaction: bool = False,
        roles: Iterable[str] | None = None,
        cursor: str | None = None,
        owner: str | None = None,
        branch: str | None = None,
    ) -> Page[MessageRecord]:
        """Messages with after_seq < seq < before_seq, in order (or newest first), optionally only some
        roles and only from the latest compaction; `limit` None returns them all. With `branch`, the
        messages of that branch of the session (`rewind_session`; BranchNotFound when it has none)."""
        query = MessageQuery(
            after_seq=v.seq(after_seq, "after_seq"),
            before_seq=v.seq(before_seq, "before_seq"),
            limit=v.limit(limit, allow_none=True),
            newest_first=bool(newest_first),
            since_compaction=bool(since_compaction),
            roles=v.roles(roles),
            cursor=cursor,
        )
        return self._backend.execute(
            ListMessages(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                query=query,
                branch=v.optional_ident(branch, "branch"),
            )
        )

    def last_messages(self, session_id: str, n: int, *, owner: str | None = None) -> list[MessageRecord]:
        """The latest `n` messages, oldest first."""
        count = v.limit(n, "n") or 1
        return self._backend.execute(
            LastMessages(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner), n=count)
        )

    def get_message(self, session_id: str, message_id: str, *, owner: str | None = None) -> MessageRecord | None:
        """One message by id, or None."""
        return self._backend.execute(
            GetMessage(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                message_id=v.ident(message_id, "message_id"),
            )
        )

    def pop_message(
        self, session_id: str, *, expected_seq: int | None = None, owner: str | None = None
    ) -> MessageRecord | None:
        """Remove the latest message and return it, or None when the transcript is empty. Atomic and safe
        under concurrency: two pops never return the same message, and a pop racing an append removes
        whichever message is last when it commits. The session's last_seq and usage totals move back;
        if the message was the compaction marker, the previous compaction (if any) becomes the latest.
        `expected_seq` stale -> Conflict; Conflict too when the saved state has already seen the
        message (pop before saving the state)."""
        return self._backend.execute(
            PopMessage(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                expected_seq=v.seq(expected_seq, "expected_seq"),
            )
        )

    def update_usage(
        self, session_id: str, message_id: str, usage: TokenUsage | dict[str, Any], *, owner: str | None = None
    ) -> MessageRecord:
        """Set a message's usage; the session's totals move by the difference (MessageNotFound if absent)."""
        return self._backend.execute(
            UpdateUsage(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                message_id=v.ident(message_id, "message_id"),
                usage=v.usage(usage),
            )
        )

    def mark_compaction(self, session_id: str, message_id: str, *, owner: str | None = None) -> MessageRecord:
        """Mark an appended summary message as the start of the live context."""
        return self._backend.execute(
            MarkCompaction(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                message_id=v.ident(message_id, "message_id"),
            )
        )

    def get_latest_compaction(self, session_id: str, *, owner: str | None = None) -> MessageRecord | None:
        """The latest compaction message, or None."""
        return self._backend.execute(
            GetLatestCompaction(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )
