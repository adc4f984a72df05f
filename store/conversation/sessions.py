"""Which sessions are conversations: every session but the ones adapters keep for their own bookkeeping
(recognised by the metadata they were made with, so sessions made before this rule count too)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

INTERNAL: tuple[tuple[str, str], ...] = (
    ("strands_storage", "strands-storage"),  # Strands' unified Storage: keys outside any Strands session
    ("langgraph", "log"),  # a LangGraph thread's checkpoint log (a generation of it)
    ("langgraph", "run"),  # the threads of a LangGraph run
    ("adk_scope", "app"),  # an ADK app's `app:` state and users
    ("adk_scope", "user"),  # an ADK user's `user:` state and artifacts
)


UNDER: tuple[str, ...] = (
    "strands_parent",  # another agent of a Strands session: shown under that session (its value), not beside it
)


def is_internal(metadata: Mapping[str, Any]) -> bool:
    """True for a session an adapter keeps for itself or shows under another one (not a conversation of its
    own in a listing)."""
    return any(metadata.get(key) == value for key, value in INTERNAL) or any(key in metadata for key in UNDER)
