"""The in-memory backend: the transcript."""

from __future__ import annotations

from typing import Any

from store.core import codec, paging, rules
from store.core.timeutil import expiry, is_expired
from store.errors import BranchNotFound, MessageNotFound
from store.memory.core import IdempotencyClaim, MemoryCore
from store.models import MessageRecord, Page
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


class MemoryMessages(MemoryCore):
    """The transcript, in memory."""

    def append_messages(self, request: AppendMessages) -> list[MessageRecord]:
        session_id, owner, messages = request.session_id, request.owner, request.messages
        expected_seq, idempotency_key = request.expected_seq, request.idempotency_key
        with self._lock:
            entry = self._need(session_id, owner)
            records = self._records(session_id, messages, 0, "append_messages")
            digest = codec.digest([m.model_dump(mode="json") for m in messages]) if idempotency_key else ""
            now = self._now()
            claim = entry.claims.get(idempotency_key) if idempotency_key else None
            if claim is not None and not is_expired(claim.expires_at, now):
                found = entry.messages[claim.first_seq - 1 : claim.first_seq - 1 + claim.count]
                intact = len(found) == claim.count and found[0].id == claim.first_id
                rules.check_replay(idempotency_key or "", same_messages=claim.digest == digest, intact=intact)
                return [m.model_copy(deep=True) for m in found]
            rules.expect(rules.stale_seq("append_messages", expected_seq, entry.session.last_seq))
            first = entry.session.last_seq + 1
            records = [r.model_copy(update={"seq": first + i}) for i, r in enumerate(records)]
            self._commit(entry, records)
            if idempotency_key:
                entry.claims[idempotency_key] = IdempotencyClaim(
                    first, len(records), digest, expiry(now, self.settings.idempotency_ttl), records[0].id
                )
            return [r.model_copy(deep=True) for r in records]

    def list_messages(self, request: ListMessages) -> Page[MessageRecord]:
        session_id, owner, query, branch = request.session_id, request.owner, request.query, request.branch
        with self._lock:
            entry = self._need(session_id, owner)
            if branch is None:
                messages, compaction_seq = entry.messages, entry.session.compaction_seq
            else:
                found = entry.branches.get(branch)
                if found is None:
                    raise BranchNotFound(session_id, branch)
                messages, compaction_seq = found.messages, found.compaction_seq
            scope = paging.cursor_scope(session_id, branch)
            lo, hi = query.window(scope, compaction_seq)
            roles = query.roles
            chosen = [m for m in messages if lo <= m.seq <= hi and (roles is None or m.role in roles)]
            if query.newest_first:
                chosen.reverse()
            return query.page(scope, [m.model_copy(deep=True) for m in chosen[: query.fetch]])

    def last_messages(self, request: LastMessages) -> list[MessageRecord]:
        session_id, owner, n = request.session_id, request.owner, request.n
        with self._lock:
            entry = self._need(session_id, owner)
            return [m.model_copy(deep=True) for m in entry.messages[-n:]]

    def get_message(self, request: GetMessage) -> MessageRecord | None:
        session_id, owner, message_id = request.session_id, request.owner, request.message_id
        with self._lock:
            found = self._find(self._need(session_id, owner), message_id)
            return None if found is None else found.model_copy(deep=True)

    def pop_message(self, request: PopMessage) -> MessageRecord | None:
        session_id, owner, expected_seq = request.session_id, request.owner, request.expected_seq
        with self._lock:
            entry = self._need(session_id, owner)
            last = entry.session.last_seq
            rules.expect(rules.stale_seq("pop_message", expected_seq, last))
            if last == 0:
                return None
            rules.check_unpinned("pop_message", last, entry.pinned)
            if not rules.may_pop(last, None if entry.state is None else entry.state.seq):
                raise rules.state_has_seen(last)
            popped = entry.messages.pop()
            changes: dict[str, Any] = {}
            if rules.marker_moves_back(entry.session.compaction_seq, last):
                earlier = (m.seq for m in reversed(entry.messages) if m.kind == "compaction")
                changes["compaction_seq"] = next(earlier, None)
            usage = entry.session.usage.plus(None, minus=popped.usage)
            self._touch(entry, last_seq=last - 1, usage=usage, **changes)
            return popped.model_copy(deep=True)

    def update_usage(self, request: UpdateUsage) -> MessageRecord:
        session_id, owner, message_id, usage = request.session_id, request.owner, request.message_id, request.usage
        with self._lock:
            entry = self._need(session_id, owner)
            found = self._find(entry, message_id)
            if found is None:
                raise MessageNotFound(session_id, message_id)
            rules.check_unpinned("update_usage", found.seq, entry.pinned)
            updated = found.model_copy(update={"usage": usage})
            entry.messages[found.seq - 1] = updated
            self._touch(entry, usage=entry.session.usage.plus(usage, minus=found.usage))
            return updated.model_copy(deep=True)

    def mark_compaction(self, request: MarkCompaction) -> MessageRecord:
        session_id, owner, message_id = request.session_id, request.owner, request.message_id
        with self._lock:
            entry = self._need(session_id, owner)
            found = self._find(entry, message_id)
            if found is None:
                raise MessageNotFound(session_id, message_id)
            rules.check_unpinned("mark_compaction", found.seq, entry.pinned)
            marked = found.model_copy(update={"kind": "compaction"})
            entry.messages[found.seq - 1] = marked
            self._touch(entry, compaction_seq=max(found.seq, entry.session.compaction_seq or 0))
            return marked.model_copy(deep=True)

    def get_latest_compaction(self, request: GetLatestCompaction) -> MessageRecord | None:
        session_id, owner = request.session_id, request.owner
        with self._lock:
            entry = self._need(session_id, owner)
            cseq = entry.session.compaction_seq
            return None if cseq is None else entry.messages[cseq - 1].model_copy(deep=True)
