"""The store's write rules, once: when an expectation is stale, when an idempotent replay is refused, when
a pop is refused, where the compaction marker goes when a message is popped, where a fork ends and which
state a rewind brings back. Pure functions of what a backend has read; the memory backend and the DynamoDB
plans both call them (as Powertools' idempotency layer owns its rules and each persistence layer supplies
primitives), so the rules and their messages cannot drift apart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store.conversation.sessions import is_internal
from store.errors import Conflict, InvalidInput
from store.models import StateSnapshot

FORKED_FROM = "forked_from"  # the metadata key a fork records its source in
PREVIEW_WINDOW = 20  # a fork's (or a rewound line's) preview is read from at most this many messages


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


def fork_point(at_seq: int | None, last: int) -> int:
    """The last message a fork of a transcript at `last` takes (all when `at_seq` is None); InvalidInput
    past the end."""
    if at_seq is None:
        return last
    if at_seq > last:
        raise InvalidInput(f"fork_session: at_seq {at_seq} is past the session's last message ({last})")
    return at_seq


def check_copyable(what: str, metadata: Mapping[str, Any], *, names_its_metadata: bool) -> None:
    """InvalidInput for a fork or rewind of a session an adapter keeps for itself (a LangGraph thread's log,
    ADK's user and app state, Strands' storage: `is_internal`), unless the caller names the new metadata, as
    the adapter that keeps it does: a copy of it made from outside would be a session no framework reads."""
    if is_internal(metadata) and not names_its_metadata:
        kept_by = metadata.get("framework") or next((k.split("_")[0] for k in metadata if "_" in k), "an adapter")
        raise InvalidInput(
            f"{what}: this session is {kept_by}'s own bookkeeping, not a conversation; fork or rewind the "
            "conversation it belongs to (its thread or session)"
        )


# the jobs of the tables' streams: the cascade function does all but "copy" (the memories table's stream: "forget"),
# the copy function "copy"
RECLAIM_JOBS: frozenset[str] = frozenset({"purge", "copy", "branch", "objects", "forget"})
COPY_JOBS: frozenset[str] = frozenset({"copy"})
CASCADE_JOBS: frozenset[str] = RECLAIM_JOBS - COPY_JOBS
COPY_PAGE = 1000  # messages one step of a copy (a long fork's or rewind's) brings in
COPY_OBJECTS_INLINE = 25  # a fork copies its artifacts' objects within its call up to this many versions


def copies_inline(messages: int, objects: int, inline_messages: int) -> bool:
    """Whether a fork (or rewind) of `messages` messages and `objects` artifact versions is copied within its
    call (`Settings.fork_inline_messages`): a longer one is made `copying` and its copy goes on after."""
    return messages <= inline_messages and objects <= COPY_OBJECTS_INLINE


def still_copying(session_id: str, copied: int | None, last: int) -> Conflict:
    """The refusal of a call on a session whose transcript is still being copied in (a retryable Conflict)."""
    return Conflict(
        f"session {session_id!r} is still being copied in ({copied or 0} of {last} messages); retry once "
        "get_session says it is no longer copying"
    )


def pinned(what: str, seq: int) -> Conflict:
    """The refusal of a change to message `seq` (or to the whole transcript, seq 0) while a fork's copy of it
    is going on (a retryable Conflict: the copy takes the messages as they were when the fork was made)."""
    target = f"message {seq}" if seq else "the transcript"
    return Conflict(f"{what}: {target} is being copied into a fork; retry once its copy is done")


def check_unpinned(what: str, seq: int, pinned_through: int) -> None:
    """Conflict when message `seq` (0: the transcript as a whole, any pin) is within a copy out of the
    session (`pinned_through`: the last message a copy still takes, 0 when none)."""
    if pinned_through and (seq == 0 or seq <= pinned_through):
        raise pinned(what, seq)


def check_rewind(to_seq: int, last: int) -> None:
    """InvalidInput when a rewind to `to_seq` goes past the transcript's last message."""
    if to_seq > last:
        raise InvalidInput(f"rewind_session: to_seq {to_seq} is past the session's last message ({last})")


MAX_BRANCHES = 100  # the most branches a session keeps: a listing of them is one bounded read


def check_branch_room(kept: int) -> None:
    """InvalidInput when a session that keeps `kept` branches may keep no more (a rewind adds one)."""
    if kept >= MAX_BRANCHES:
        raise InvalidInput(
            f"rewind_session: the session keeps {MAX_BRANCHES} branches, the most it may; delete one "
            "(delete_branch) or restore one before rewinding again"
        )


def branch_exists(name: str) -> Conflict:
    """The refusal of a branch name the session already has."""
    return Conflict(f"the session already has a branch {name!r}")


def state_as_of(current: StateSnapshot | None, kept: Sequence[StateSnapshot], to_seq: int) -> StateSnapshot | None:
    """The state a rewind to `to_seq` brings back, or None when the current state stays: it stays when it
    was saved at or before `to_seq` (it is the state as of then), and when no state kept by `save_full` at
    or before `to_seq` is known (documented: the store does not know the state as of then)."""
    if current is None or current.seq <= to_seq:
        return None
    earlier = [k for k in kept if k.seq <= to_seq and k.version < current.version]
    return max(earlier, key=lambda k: k.version) if earlier else None


KEPT_STATE_MESSAGES = 96  # a save_full of more messages keeps no copy of its state (its transaction is full)


def keeps_state(messages: int, history: int) -> bool:
    """Whether a `save_full` of `messages` messages keeps a copy of its state for rewinds (`history` is how
    many a session keeps; 0 keeps none)."""
    return history > 0 and messages <= KEPT_STATE_MESSAGES


OWNER_RECORDS_BYTES = 64 * 1024  # what one kind of an owner's records may take stored (a settings item, never spilled)
