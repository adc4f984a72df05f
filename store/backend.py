"""The interface every backend implements. Arguments arrive validated and normalised by the public
fronts (`SessionStore`); backends implement semantics, not argument checking."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from store.artifact_reader import ArtifactReader
from store.models import (
    ArtifactVersion,
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
from store.paging import MessageQuery, SessionQuery


@dataclass(frozen=True)
class Presign:
    """A checked `presign_artifact` request: GET `version` of `name` (the latest when None), or PUT a new
    upload of it with `content_type` and `metadata`; valid `expires_in` seconds. An upload holds at most
    `max_size` bytes, exactly `size` when declared, whose SHA-256 (hex) is `sha256` when declared."""

    name: str
    version: int | None
    method: str
    expires_in: int
    content_type: str
    metadata: dict[str, str]
    max_size: int = 0
    size: int | None = None
    sha256: str | None = None


class Unset(enum.Enum):
    """The type of UNSET: "leave this field as it is" in updates (None clears it)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET

INTERRUPT_SLOT = "interrupt"


def records_slot(kind: str) -> str:
    """The slot holding a session's records of one kind."""
    return f"records:{kind}"


class Backend(ABC):
    """Storage semantics of the public API, one method per operation (each promise is stated on the
    `SessionStore` method it serves)."""

    name: str

    @abstractmethod
    def create_session(
        self,
        owner: str,
        session_id: str,
        title: str | None,
        model: str | None,
        metadata: dict[str, Any],
        retention: timedelta | None,
    ) -> Session: ...

    @abstractmethod
    def get_session(self, session_id: str, owner: str | None) -> Session | None: ...

    @abstractmethod
    def list_sessions(self, owner: str, query: SessionQuery) -> Page[Session]: ...

    @abstractmethod
    def update_session(
        self,
        session_id: str,
        owner: str | None,
        title: str | Unset | None,
        model: str | Unset | None,
        metadata: dict[str, Any] | Unset,
    ) -> Session: ...

    @abstractmethod
    def delete_session(self, session_id: str, owner: str | None) -> None: ...

    @abstractmethod
    def append_messages(
        self,
        session_id: str,
        owner: str | None,
        messages: list[Message],
        expected_seq: int | None,
        idempotency_key: str | None,
    ) -> list[MessageRecord]: ...

    @abstractmethod
    def list_messages(self, session_id: str, owner: str | None, query: MessageQuery) -> Page[MessageRecord]: ...

    @abstractmethod
    def last_messages(self, session_id: str, owner: str | None, n: int) -> list[MessageRecord]: ...

    @abstractmethod
    def get_message(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord | None: ...

    @abstractmethod
    def pop_message(self, session_id: str, owner: str | None, expected_seq: int | None) -> MessageRecord | None: ...

    @abstractmethod
    def update_usage(self, session_id: str, owner: str | None, message_id: str, usage: TokenUsage) -> MessageRecord: ...

    @abstractmethod
    def mark_compaction(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord: ...

    @abstractmethod
    def get_latest_compaction(self, session_id: str, owner: str | None) -> MessageRecord | None: ...

    @abstractmethod
    def save_state(self, session_id: str, owner: str | None, state: Any, expected_version: int | None) -> int: ...

    @abstractmethod
    def load_state(self, session_id: str, owner: str | None) -> StateSnapshot | None: ...

    @abstractmethod
    def save_full(
        self, session_id: str, owner: str | None, messages: list[Message], state: Any, expected_seq: int | None
    ) -> StateSnapshot: ...

    @abstractmethod
    def load_full(self, session_id: str, owner: str | None, since_compaction: bool) -> FullSession: ...

    @abstractmethod
    def save_interrupt(self, session_id: str, owner: str | None, interrupt: dict[str, Any]) -> None:
        """Store the session's pending interrupt (replacing any), recording activity."""

    @abstractmethod
    def load_interrupt(self, session_id: str, owner: str | None) -> dict[str, Any] | None:
        """The pending interrupt, or None."""

    @abstractmethod
    def clear_interrupt(self, session_id: str, owner: str | None) -> None:
        """Remove the pending interrupt (idempotently), recording activity."""

    @abstractmethod
    def save_records(self, session_id: str, owner: str | None, kind: str, records: list[Any]) -> None:
        """Replace the session's records of `kind`, recording activity."""

    @abstractmethod
    def load_records(self, session_id: str, owner: str | None, kind: str) -> list[Any]:
        """The session's records of `kind` (empty when none were saved)."""

    @abstractmethod
    def save_checkpoint(self, scope: str, key: str, data: Any, ttl: timedelta, owner: str | None) -> Checkpoint: ...

    @abstractmethod
    def load_checkpoint(self, scope: str, key: str, owner: str | None) -> Checkpoint | None: ...

    @abstractmethod
    def delete_checkpoint(self, scope: str, key: str, owner: str | None) -> None: ...

    @abstractmethod
    def put_artifact(
        self, session_id: str, owner: str | None, name: str, data: Any, content_type: str, metadata: dict[str, str]
    ) -> ArtifactVersion:
        """Store `data` (bytes, a readable stream or an iterator of bytes) as the name's next version."""

    @abstractmethod
    def get_artifact(self, session_id: str, owner: str | None, name: str, version: int | None) -> bytes | None: ...

    @abstractmethod
    def open_artifact(
        self, session_id: str, owner: str | None, name: str, version: int | None
    ) -> ArtifactReader | None: ...

    @abstractmethod
    def list_artifacts(self, session_id: str, owner: str | None) -> list[ArtifactVersion]: ...

    @abstractmethod
    def list_artifact_versions(self, session_id: str, owner: str | None, name: str) -> list[ArtifactVersion]: ...

    @abstractmethod
    def delete_artifact(self, session_id: str, owner: str | None, name: str) -> None: ...

    @abstractmethod
    def presign_artifact(self, session_id: str, owner: str | None, request: Presign) -> str:
        """A GET URL of a version (ArtifactNotFound when absent), or the PUT URL of a new upload."""

    @abstractmethod
    def presign_artifact_upload(self, session_id: str, owner: str | None, request: Presign) -> PresignedUpload:
        """The PUT URL of a new upload (`request.method` is "PUT"), with what the client must send."""

    @abstractmethod
    def confirm_artifact_upload(
        self, session_id: str, owner: str | None, name: str, upload: str
    ) -> ArtifactVersion: ...

    @abstractmethod
    def append_trace_events(
        self, session_id: str, owner: str | None, run_id: str, events: list[dict[str, Any]]
    ) -> int: ...

    @abstractmethod
    def load_trace_events(self, session_id: str, owner: str | None, run_id: str | None) -> list[dict[str, Any]]: ...

    @abstractmethod
    def list_trace_runs(self, session_id: str, owner: str | None) -> list[str]: ...

    def reclaim(self, records: list[dict[str, Any]]) -> int:
        """Act on sessions-table stream records (purge removed sessions, delete released objects);
        nothing to do where there is no stream."""
        return 0

    @abstractmethod
    def search(self, owner: str, query: str, limit: int) -> list[SessionHit]: ...

    @abstractmethod
    def health_check(self) -> None: ...

    def close(self) -> Any:
        """Release clients and connections (nothing to do by default)."""
        return None
