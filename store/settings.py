"""Typed configuration shared by every backend."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from store.core.memories import Embedder
from store.core.timeutil import Clock, utcnow


@dataclass(frozen=True)
class ExtractionLimits:
    """What bounds one memory extraction run (`store.extraction`): messages and characters of conversation
    shown, tokens of answer, memories kept from one answer, nearest memories compared per candidate, attempts
    per question and the first backoff (seconds, doubled each time, with jitter; at most `max_backoff` slept in
    a run)."""

    max_messages: int = 50
    max_prompt_chars: int = 24_000
    max_output_tokens: int = 2_000
    max_memories: int = 20
    neighbours: int = 5
    max_attempts: int = 3
    backoff: float = 1.0
    max_backoff: float = 20.0


@dataclass(frozen=True)
class Settings:
    """Behaviour knobs of a store.

    clock: the source of "now" (tests move it to check expiry).
    checkpoint_ttl: default lifetime of a checkpoint, renewed on every save.
    idempotency_ttl: how long an append's idempotency key is remembered.
    conflict_retries: how many times a write retries after losing a race before raising Conflict.
    retry_budget: how long one call may spend sleeping in backoff from contention (a TransactionConflict,
        throttling, a session queue that stands still); a backoff that would go past it is not slept and the
        call raises Conflict. Retries after another writer's progress are made at once and waiting one's
        turn while the queue moves is not backoff: neither counts (`store.deadline` bounds a call whole).
    backoff_base / backoff_cap: full-jitter backoff between contended retries, in seconds.
    queue_lease: a session's writer queue skips the tickets ahead once the session's position has not moved
        for this long (their holders are taken to be dead: a Lambda timed out mid-wait).
    max_item_bytes: DynamoDB's item size limit; larger payloads raise PayloadTooLarge.
    max_transaction_bytes: DynamoDB's limit for one transaction.
    position_cache_size: how many sessions' positions a store remembers (least recently used go first).
    spill_item_bytes: an item larger than this (with its body inline) keeps its body in S3 instead, behind
        a pointer; the default leaves 50 KB of headroom under DynamoDB's 400 KB.
    max_payload_bytes: the hard cap on one stored (compressed) body, and on the bodies of one call
        together; larger raises PayloadTooLarge. Without a bucket the cap is the item limit.
    upload_grace: how long an object written before its pointer may wait for the commit; an intent
        record with this TTL makes it reclaimable if the commit never comes.
    multipart_threshold / part_size: artifacts above the threshold are uploaded in parts of `part_size`
        bytes (at most 10,000 parts); `part_concurrency` parts are uploaded at once (and held in memory).
    max_upload_bytes: the most a presigned upload may hold (S3's limit for one PUT); nobody may declare more.
    default_upload_bytes: the most a presigned upload that declares neither its size nor a maximum may hold.
    fork_inline_messages: a fork (or rewind) whose transcript has at most this many messages to copy copies
        them within the call; a longer one returns at once and the stack's cascade copies the rest (reads
        and writes of the new transcript work meanwhile: docs/decisions.md, "Fork and rewind").
    state_history: how many states saved by `save_full` a session keeps beside its current one, so that
        `rewind_session` can bring back the state as of the point it rewinds to (0 keeps none).
    embedder: what embeds memories for search by meaning (`store.embeddings`: Bedrock deployed, e5-small or
        wordllama locally, or any callable with `model_id` and `dimensions`); None: memories are searched by
        keyword.
    reranker: what reorders a memory search's page of hits by its query (`store.rerank`: Bedrock's rerank
        models, or any callable); None (the default): the store's own ranking.
    extraction_model: the chat model memory extraction asks (`store.extraction`: Bedrock's Converse, any
        OpenAI-compatible endpoint, or a function); None: `extract_memories` needs one given.
    extraction_limits: what bounds one extraction run (messages, characters, tokens, attempts).
    extraction_strategies: the built-in strategies a run uses when neither the call nor the owner's choice
        (`set_extraction`) names any (EXTRACTION_STRATEGIES for `from_env`).
    memory_refresh_ttl: whether `get_memory` renews an expiring memory's TTL when the call does not say.
    copy_part_bytes: a confirmed upload is copied to its version's key server-side, in parts of this size
        above it (S3 copies the bytes; none pass through the caller).
    """

    clock: Clock = field(default=utcnow)
    checkpoint_ttl: timedelta = timedelta(hours=6)
    idempotency_ttl: timedelta = timedelta(hours=24)
    conflict_retries: int = 500
    retry_budget: timedelta = timedelta(seconds=5)
    backoff_base: float = 0.002
    backoff_cap: float = 0.05
    queue_lease: timedelta = timedelta(seconds=1)
    max_item_bytes: int = 400 * 1024
    max_transaction_bytes: int = 4 * 1024 * 1024
    position_cache_size: int = 10_000
    spill_item_bytes: int = 350 * 1024
    max_payload_bytes: int = 32 * 1024 * 1024
    upload_grace: timedelta = timedelta(days=1)
    multipart_threshold: int = 8 * 1024 * 1024
    part_size: int = 8 * 1024 * 1024
    part_concurrency: int = 2
    max_upload_bytes: int = 5 * 1024**3
    default_upload_bytes: int = 64 * 1024**2
    copy_part_bytes: int = 512 * 1024**2
    handoff_reserve: timedelta = timedelta(seconds=1)  # a delete hands off to the cascade this long before a deadline
    search_sessions: int = 50  # at most this many sessions read by one search call (newest first)
    search_messages: int = 5_000  # and at most this many messages
    fork_inline_messages: int = 1_000
    state_history: int = 8
    embedder: Embedder | None = field(default=None, compare=False)
    reranker: Any = field(default=None, compare=False)
    memory_refresh_ttl: bool = False
    extraction_model: Any = field(default=None, compare=False)
    extraction_limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    extraction_strategies: tuple[str, ...] = ("facts", "preferences")
