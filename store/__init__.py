"""agent-session-store: persistence for AI agents on AWS Lambda."""

from store.artifact_reader import ArtifactReader, AsyncArtifactReader
from store.async_session_store import AsyncSessionStore
from store.checkpointer import Checkpointer
from store.core.deadlines import deadline
from store.core.scoped_ids import scoped_id, unscoped_id
from store.errors import (
    AccessDenied,
    ArtifactNotFound,
    BranchNotFound,
    Conflict,
    InvalidInput,
    MemoryNotFound,
    MessageNotFound,
    PayloadTooLarge,
    SessionExists,
    SessionNotFound,
    StoreError,
    StoreUnavailable,
)
from store.models import (
    ArtifactVersion,
    Branch,
    Checkpoint,
    FullSession,
    Message,
    MessageRecord,
    Page,
    PresignedUpload,
    Session,
    SessionHit,
    StateSnapshot,
    TokenUsage,
)
from store.session_store import SessionStore
from store.settings import Settings

__all__ = [
    "AccessDenied",
    "ArtifactNotFound",
    "ArtifactReader",
    "ArtifactVersion",
    "AsyncArtifactReader",
    "AsyncSessionStore",
    "Branch",
    "BranchNotFound",
    "Checkpoint",
    "Checkpointer",
    "Conflict",
    "FullSession",
    "InvalidInput",
    "MemoryNotFound",
    "Message",
    "MessageNotFound",
    "MessageRecord",
    "Page",
    "PayloadTooLarge",
    "PresignedUpload",
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
    "deadline",
    "scoped_id",
    "unscoped_id",
]
