"""agent-session-store: persistence for AI agents on AWS Lambda."""

from store.checkpointer import Checkpointer
from store.errors import (
    Conflict,
    InvalidInput,
    MessageNotFound,
    PayloadTooLarge,
    SessionExists,
    SessionNotFound,
    StoreError,
    StoreUnavailable,
)
from store.models import (
    Checkpoint,
    FullSession,
    Message,
    MessageRecord,
    Page,
    Session,
    SessionHit,
    StateSnapshot,
    TokenUsage,
)
from store.session_store import SessionStore
from store.settings import Settings

__all__ = [
    "Checkpoint",
    "Checkpointer",
    "Conflict",
    "FullSession",
    "InvalidInput",
    "Message",
    "MessageNotFound",
    "MessageRecord",
    "Page",
    "PayloadTooLarge",
    "Session",
    "SessionExists",
    "SessionHit",
    "SessionNotFound",
    "SessionStore",
    "Settings",
    "StateSnapshot",
    "StoreError",
    "StoreUnavailable",
    "TokenUsage",
]
