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


def is_internal(metadata: Mapping[str, Any]) -> bool:
    """True for a session an adapter keeps for itself (not a conversation of its own)."""
    return any(metadata.get(key) == value for key, value in INTERNAL)
