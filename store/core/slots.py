"""The names of a session's one-value slots (its pending interrupt, its records of each kind), the same
in every backend's storage."""

from __future__ import annotations

INTERRUPT_SLOT = "interrupt"
RECORDS_PREFIX = "records:"


def records_slot(kind: str) -> str:
    """The slot holding a session's records of one kind."""
    return f"{RECORDS_PREFIX}{kind}"
