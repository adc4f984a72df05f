"""What bounds one extraction run (`Settings.extraction_limits`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What bounds one run: messages and characters of conversation shown, tokens of answer, memories
    kept from one answer, nearest memories compared per candidate, attempts per question and the first backoff
    (seconds, doubled each time, with jitter; at most `max_backoff` slept in a run)."""

    max_messages: int = 50
    max_prompt_chars: int = 24_000
    max_output_tokens: int = 2_000
    max_memories: int = 20
    neighbours: int = 5
    max_attempts: int = 3
    backoff: float = 1.0
    max_backoff: float = 20.0
