"""The in-memory backend: the transcript."""

from __future__ import annotations

from typing import Any

from store import codec
from store.errors import Conflict, MessageNotFound
from store.memory.core import IdempotencyClaim, MemoryCore
from store.models import Message, MessageRecord, Page, TokenUsage
from store.paging import MessageQuery
from store.timeutil import expiry, is_expired


class MemoryMessages(MemoryCore):
    """The transcript, in memory."""

    def append_messages(
        self,
        session_id: str,
        owner: str | None,
        messages: list[Message],
        expected_seq: int | None,
        idempotency_key: str | None,
    ) -> list[MessageRecord]:
        with self._lock:
            entry = self._need(session_id, owner)
            records = self._records(session_id, messages, 0, "append_messages")
            digest = codec.digest([m.model_dump(mode="json") for m in messages]) if idempotency_key else ""
            now = self._now()
            claim = entry.claims.get(idempotency_key) if idempotency_key else None
            if claim is not None and not is_expired(claim.expires_at, now):
                if claim.digest != digest:
                    raise Conflict(f"idempotency key {idempotency_key!r} was already used for different messages")
                found = entry.messages[claim.first_seq - 1 : claim.first_seq - 1 + claim.count]
                if len(found) != claim.count or found[0].id != claim.first_id:
                    raise Conflict(
                        f"idempotency key {idempotency_key!r}: the messages it appended were removed by pop_message"
                    )
                return [m.model_copy(deep=True) for m in found]
            if expected_seq is not None and expected_seq != entry.session.last_seq:
                raise Conflict(
                    f"append_messages: expected_seq {expected_seq} is stale; the session is at {entry.session.last_seq}"
                )
            first = entry.session.last_seq + 1
            records = [r.model_copy(update={"seq": first + i}) for i, r in enumerate(records)]
            if idempotency_key:
                entry.claims[idempotency_key] = IdempotencyClaim(
                    first, len(records), digest, expiry(now, self.settings.idempotency_ttl), records[0].id
                )
            self._commit(entry, records)
            return [r.model_copy(deep=True) for r in records]

    def list_messages(self, session_id: str, owner: str | None, query: MessageQuery) -> Page[MessageRecord]:
        with self._lock:
            entry = self._need(session_id, owner)
            lo, hi = query.window(session_id, entry.session.compaction_seq)
            roles = query.roles
            chosen = [m for m in entry.messages if lo <= m.seq <= hi and (roles is None or m.role in roles)]
            if query.newest_first:
                chosen.reverse()
            return query.page(session_id, [m.model_copy(deep=True) for m in chosen[: query.fetch]])

    def last_messages(self, session_id: str, owner: str | None, n: int) -> list[MessageRecord]:
        with self._lock:
            entry = self._need(session_id, owner)
            return [m.model_copy(deep=True) for m in entry.messages[-n:]]

    def get_message(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord | None:
        with self._lock:
            found = self._find(self._need(session_id, owner), message_id)
            return None if found is None else found.model_copy(deep=True)

    def pop_message(self, session_id: str, owner: str | None, expected_seq: int | None) -> MessageRecord | None:
        with self._lock:
            entry = self._need(session_id, owner)
            last = entry.session.last_seq
            if expected_seq is not None and expected_seq != last:
                raise Conflict(f"pop_message: expected_seq {expected_seq} is stale; the session is at {last}")
            if last == 0:
                return None
            if entry.state is not None and entry.state.seq >= last:
                raise Conflict(f"pop_message: the saved state has seen message {last}; pop before saving the state")
            popped = entry.messages.pop()
            changes: dict[str, Any] = {}
            if entry.session.compaction_seq == last:
                earlier = (m.seq for m in reversed(entry.messages) if m.kind == "compaction")
                changes["compaction_seq"] = next(earlier, None)
            usage = entry.session.usage.plus(None, minus=popped.usage)
            self._touch(entry, last_seq=last - 1, usage=usage, **changes)
            return popped.model_copy(deep=True)

    def update_usage(self, session_id: str, owner: str | None, message_id: str, usage: TokenUsage) -> MessageRecord:
        with self._lock:
            entry = self._need(session_id, owner)
            found = self._find(entry, message_id)
            if found is None:
                raise MessageNotFound(session_id, message_id)
            updated = found.model_copy(update={"usage": usage})
            entry.messages[found.seq - 1] = updated
            self._touch(entry, usage=entry.session.usage.plus(usage, minus=found.usage))
            return updated.model_copy(deep=True)

    def mark_compaction(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord:
        with self._lock:
            entry = self._need(session_id, owner)
            found = self._find(entry, message_id)
            if found is None:
                raise MessageNotFound(session_id, message_id)
            marked = found.model_copy(update={"kind": "compaction"})
            entry.messages[found.seq - 1] = marked
            self._touch(entry, compaction_seq=max(found.seq, entry.session.compaction_seq or 0))
            return marked.model_copy(deep=True)

    def get_latest_compaction(self, session_id: str, owner: str | None) -> MessageRecord | None:
        with self._lock:
            entry = self._need(session_id, owner)
            cseq = entry.session.compaction_seq
            return None if cseq is None else entry.messages[cseq - 1].model_copy(deep=True)
