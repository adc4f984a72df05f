"""The store ids of Strands' sessions, agents and records (no Strands import: shared by the repository and
the unified `Storage`, which import each other's module in either order)."""

from __future__ import annotations

import hashlib

from store.core.scoped_ids import scoped_id
from store.core.validation import ID_PATTERN

FRAMEWORK = "strands"


def store_id(raw: str, prefix: str = "strands") -> str:
    """`raw` if it is a valid store id, else a stable id derived from it."""
    if ID_PATTERN.fullmatch(raw):
        return raw
    return f"{prefix}-{hashlib.sha256(raw.encode()).hexdigest()[:40]}"


def session_store_id(owner: str, session_id: str) -> str:
    """The store session of a Strands session: its id in the owner's namespace (`store.core.scoped_ids`), so
    two owners' sessions of the same id are two sessions, and the HTTP API finds it under that id."""
    return scoped_id(owner, session_id)


def agent_store_id(owner: str, session_id: str, agent_id: str) -> str:
    """The store session that holds one agent's record and transcript (in the owner's namespace; readable
    when the ids are, hashed when they contain the separator or are not store ids)."""
    if ":" in session_id or ":" in agent_id:
        return scoped_id(owner, f"{session_id}\x00{agent_id}")
    return scoped_id(owner, f"{session_id}:agent:{agent_id}")
