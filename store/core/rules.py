"""The store's write rules, once: when an expectation is stale, when an idempotent replay is refused, when
a pop is refused, and where the compaction marker goes when a message is popped. Pure functions of what a
backend has read; the memory backend and the DynamoDB plans both call them (as Powertools' idempotency
layer owns its rules and each persistence layer supplies primitives), so the rules and their messages
cannot drift apart."""

from __future__ import annotations

from store.errors import Conflict


def stale_seq(what: str, expected: int | None, last: int) -> str | None:
    """Why `expected_seq` no longer holds (the session is at `last`), or None when it does or is unset."""
    if expected is not None and expected != last:
        return f"{what}: expected_seq {expected} is stale; the session is at {last}"
    return None


def stale_version(what: str, expected: int | None, version: int) -> str | None:
    """Why `expected_version` no longer holds (the state is at `version`), or None."""
    if expected is not None and expected != version:
        return f"{what}: expected_version {expected} is stale; the state is at {version}"
    return None


def expect(reason: str | None) -> None:
    """Conflict with `reason` when there is one (a stale expectation)."""
    if reason is not None:
        raise Conflict(reason)


def check_replay(key: str, *, same_messages: bool, intact: bool) -> None:
    """An append repeated under an idempotency key returns the first append's records only when it sent
    the same messages (`same_messages`) and those records are still there (`intact`); Conflict otherwise."""
    if not same_messages:
        raise Conflict(f"idempotency key {key!r} was already used for different messages")
    if not intact:
        raise Conflict(f"idempotency key {key!r}: the messages it appended were removed by pop_message")


def state_has_seen(seq: int) -> Conflict:
    """The refusal of a pop of message `seq` that the saved state has already seen."""
    return Conflict(f"pop_message: the saved state has seen message {seq}; pop before saving the state")


def may_pop(last: int, state_seq: int | None) -> bool:
    """Whether the latest message (`last`) may be popped given the saved state's position."""
    return state_seq is None or state_seq < last


def marker_moves_back(compaction_seq: int | None, popped: int) -> bool:
    """Whether popping message `popped` takes the compaction marker with it (it then goes to the previous
    compaction message, or none)."""
    return compaction_seq == popped
