"""Asking the model with the retry policy every run follows: throttling, timeouts, an unavailable service and an
invalid answer are retried (`Limits.max_attempts` a question; after throttling, a timeout or an unavailable
service with backoff, `Limits.backoff` seconds doubling, jittered, at most `Limits.max_backoff` slept in a run;
an invalid answer at once); a refusal and anything else are raised."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

from store.extraction.limits import Limits
from store.extraction.models import ModelError, ModelOutputInvalid, ModelRefused, ModelRequest
from store.extraction.steps import Flow, model_reply, pause

T = TypeVar("T")


def ask_with_retries(
    request: ModelRequest, limits: Limits, tally: dict[str, Any], read: Callable[[dict[str, Any]], T]
) -> Flow[T]:
    """Ask `request` and `read` the answer (which raises ModelOutputInvalid for one it cannot use), retrying
    what may succeed the next time (see the module docstring); what `read` made of the answer, or the
    ModelError once out of attempts or budget. `tally` counts attempts, answers and tokens."""
    slept = 0.0
    for attempt in range(1, limits.max_attempts + 1):
        tally["attempts"] += 1
        try:
            reply = yield from model_reply(request)
        except ModelError as error:
            failure = error
            if isinstance(error, (ModelOutputInvalid, ModelRefused)):  # answered: its tokens were spent
                _count(tally, error.input_tokens, error.output_tokens)
        else:
            _count(tally, reply.input_tokens, reply.output_tokens)
            tally["model"] = reply.model_id or tally["model"]
            try:
                return read(reply.data)
            except ModelOutputInvalid as error:
                failure = error
        if not failure.transient or attempt == limits.max_attempts:
            raise failure
        if isinstance(failure, ModelOutputInvalid):
            continue  # asked again at once: a bad answer puts no load on the service to back off from
        pause_for = random.uniform(0.5, 1.0) * limits.backoff * 2 ** (attempt - 1)  # nosec B311: jitter
        if slept + pause_for > limits.max_backoff:
            raise failure
        slept += pause_for
        yield from pause(pause_for)
    raise AssertionError("unreachable")  # pragma: no cover


def _count(tally: dict[str, Any], input_tokens: int, output_tokens: int) -> None:
    tally["model_calls"] += 1
    tally["input_tokens"] += input_tokens
    tally["output_tokens"] += output_tokens
