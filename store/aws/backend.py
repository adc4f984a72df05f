"""The DynamoDB backend: each operation runs its plan through the driver it was given."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar, cast

from store.artifact_reader import ArtifactReader
from store.aws.calls import Plan
from store.aws.plans import artifacts, checkpoints, health, messages, reclaim, search, sessions, state, traces
from store.aws.plans.base import Context, within_budget
from store.backend import Backend, Presign, Unset
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

T = TypeVar("T")


class DynamoBackend(Backend):
    """Runs the DynamoDB plans with `run` (a sync driver's run method)."""

    name = "dynamodb"

    def __init__(
        self,
        ctx: Context,
        run: Callable[[Plan[Any], Callable[[Any], Any] | None], Any],
        close: Callable[[], Any] | None = None,
        reader: Callable[[ArtifactVersion, Any], Any] = lambda av, body: ArtifactReader(av, body.read, body.close),
    ) -> None:
        self.ctx = ctx
        self._run = run
        self._close = close
        self._reader = reader

    def run(self, plan: Plan[T], then: Callable[[Any], Any] | None = None) -> T:
        """The plan's result, through `then` if given (with an async driver: an awaitable of it)."""
        result: T = self._run(within_budget(plan, self.ctx.settings.retry_budget.total_seconds()), then)
        return result

    def create_session(
        self,
        owner: str,
        session_id: str,
        title: str | None,
        model: str | None,
        metadata: dict[str, Any],
        retention: timedelta | None,
    ) -> Session:
        return self.run(sessions.create_session(self.ctx, owner, session_id, title, model, metadata, retention))

    def get_session(self, session_id: str, owner: str | None) -> Session | None:
        return self.run(sessions.get_session(self.ctx, session_id, owner))

    def list_sessions(self, owner: str, query: SessionQuery) -> Page[Session]:
        return self.run(sessions.list_sessions(self.ctx, owner, query))

    def update_session(
        self,
        session_id: str,
        owner: str | None,
        title: str | Unset | None,
        model: str | Unset | None,
        metadata: dict[str, Any] | Unset,
    ) -> Session:
        return self.run(sessions.update_session(self.ctx, session_id, owner, title, model, metadata))

    def delete_session(self, session_id: str, owner: str | None) -> None:
        return self.run(sessions.delete_session(self.ctx, session_id, owner))

    def append_messages(
        self,
        session_id: str,
        owner: str | None,
        messages_: list[Message],
        expected_seq: int | None,
        idempotency_key: str | None,
    ) -> list[MessageRecord]:
        return self.run(messages.append_messages(self.ctx, session_id, owner, messages_, expected_seq, idempotency_key))

    def list_messages(self, session_id: str, owner: str | None, query: MessageQuery) -> Page[MessageRecord]:
        return self.run(messages.list_messages(self.ctx, session_id, owner, query))

    def last_messages(self, session_id: str, owner: str | None, n: int) -> list[MessageRecord]:
        return self.run(messages.last_messages(self.ctx, session_id, owner, n))

    def get_message(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord | None:
        return self.run(messages.get_message(self.ctx, session_id, owner, message_id))

    def pop_message(self, session_id: str, owner: str | None, expected_seq: int | None) -> MessageRecord | None:
        return self.run(messages.pop_message(self.ctx, session_id, owner, expected_seq))

    def update_usage(self, session_id: str, owner: str | None, message_id: str, usage: TokenUsage) -> MessageRecord:
        return self.run(messages.update_usage(self.ctx, session_id, owner, message_id, usage))

    def mark_compaction(self, session_id: str, owner: str | None, message_id: str) -> MessageRecord:
        return self.run(messages.mark_compaction(self.ctx, session_id, owner, message_id))

    def get_latest_compaction(self, session_id: str, owner: str | None) -> MessageRecord | None:
        return self.run(messages.get_latest_compaction(self.ctx, session_id, owner))

    def save_state(self, session_id: str, owner: str | None, state_: Any, expected_version: int | None) -> int:
        return self.run(state.save_state(self.ctx, session_id, owner, state_, expected_version))

    def load_state(self, session_id: str, owner: str | None) -> StateSnapshot | None:
        return self.run(state.load_state(self.ctx, session_id, owner))

    def save_full(
        self, session_id: str, owner: str | None, messages_: list[Message], state_: Any, expected_seq: int | None
    ) -> StateSnapshot:
        return self.run(state.save_full(self.ctx, session_id, owner, messages_, state_, expected_seq))

    def load_full(self, session_id: str, owner: str | None, since_compaction: bool) -> FullSession:
        return self.run(state.load_full(self.ctx, session_id, owner, since_compaction))

    def save_interrupt(self, session_id: str, owner: str | None, interrupt: dict[str, Any]) -> None:
        return self.run(state.save_interrupt(self.ctx, session_id, owner, interrupt))

    def load_interrupt(self, session_id: str, owner: str | None) -> dict[str, Any] | None:
        return self.run(state.load_interrupt(self.ctx, session_id, owner))

    def clear_interrupt(self, session_id: str, owner: str | None) -> None:
        return self.run(state.clear_interrupt(self.ctx, session_id, owner))

    def save_records(self, session_id: str, owner: str | None, kind: str, records: list[Any]) -> None:
        return self.run(state.save_records(self.ctx, session_id, owner, kind, records))

    def load_records(self, session_id: str, owner: str | None, kind: str) -> list[Any]:
        return self.run(state.load_records(self.ctx, session_id, owner, kind))

    def save_checkpoint(self, scope: str, key: str, data: Any, ttl: timedelta, owner: str | None) -> Checkpoint:
        return self.run(checkpoints.save_checkpoint(self.ctx, scope, key, data, ttl, owner))

    def load_checkpoint(self, scope: str, key: str, owner: str | None) -> Checkpoint | None:
        return self.run(checkpoints.load_checkpoint(self.ctx, scope, key, owner))

    def delete_checkpoint(self, scope: str, key: str, owner: str | None) -> None:
        return self.run(checkpoints.delete_checkpoint(self.ctx, scope, key, owner))

    def put_artifact(
        self, session_id: str, owner: str | None, name: str, data: Any, content_type: str, metadata: dict[str, str]
    ) -> ArtifactVersion:
        return self.run(artifacts.put_artifact(self.ctx, session_id, owner, name, data, content_type, metadata))

    def get_artifact(self, session_id: str, owner: str | None, name: str, version: int | None) -> bytes | None:
        return self.run(artifacts.get_artifact(self.ctx, session_id, owner, name, version))

    def open_artifact(
        self, session_id: str, owner: str | None, name: str, version: int | None
    ) -> ArtifactReader | None:
        plan = artifacts.open_artifact(self.ctx, session_id, owner, name, version)
        reader = self.run(plan, lambda found: None if found is None else self._reader(*found))
        return cast("ArtifactReader | None", reader)

    def list_artifacts(self, session_id: str, owner: str | None) -> list[ArtifactVersion]:
        return self.run(artifacts.list_artifacts(self.ctx, session_id, owner))

    def list_artifact_versions(self, session_id: str, owner: str | None, name: str) -> list[ArtifactVersion]:
        return self.run(artifacts.list_artifact_versions(self.ctx, session_id, owner, name))

    def delete_artifact(self, session_id: str, owner: str | None, name: str) -> None:
        return self.run(artifacts.delete_artifact(self.ctx, session_id, owner, name))

    def presign_artifact(self, session_id: str, owner: str | None, request: Presign) -> str:
        return self.run(artifacts.presign_artifact(self.ctx, session_id, owner, request))

    def presign_artifact_upload(self, session_id: str, owner: str | None, request: Presign) -> PresignedUpload:
        return self.run(artifacts.presign_artifact_upload(self.ctx, session_id, owner, request))

    def confirm_artifact_upload(self, session_id: str, owner: str | None, name: str, upload: str) -> ArtifactVersion:
        return self.run(artifacts.confirm_artifact_upload(self.ctx, session_id, owner, name, upload))

    def append_trace_events(self, session_id: str, owner: str | None, run_id: str, events: list[dict[str, Any]]) -> int:
        return self.run(traces.append_trace_events(self.ctx, session_id, owner, run_id, events))

    def load_trace_events(self, session_id: str, owner: str | None, run_id: str | None) -> list[dict[str, Any]]:
        return self.run(traces.load_trace_events(self.ctx, session_id, owner, run_id))

    def list_trace_runs(self, session_id: str, owner: str | None) -> list[str]:
        return self.run(traces.list_trace_runs(self.ctx, session_id, owner))

    def reclaim(self, records: list[dict[str, Any]]) -> int:
        return self.run(reclaim.reclaim(self.ctx, records))

    def search(self, owner: str, query: str, limit: int) -> list[SessionHit]:
        return self.run(search.search(self.ctx, owner, query, limit))

    def health_check(self) -> None:
        return self.run(health.health_check(self.ctx))

    def close(self) -> Any:
        """Release the driver (with an async driver: an awaitable)."""
        return self._close() if self._close is not None else None
