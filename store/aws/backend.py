"""The DynamoDB backends: each request's plan (`PLANS`), run by a sync or an async driver.

`PLANS` is the one place a request meets its plan; both backends look the plan up there, bound it by
the retry budget, and hand it to their driver."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from store.aws.calls import Plan
from store.aws.plans import (
    artifacts,
    checkpoints,
    forks,
    health,
    messages,
    reclaim,
    rewinds,
    search,
    sessions,
    state,
    traces,
)
from store.aws.plans.base import Context, within_budget
from store.backend import AsyncBackend, Backend
from store.requests import (
    AppendMessages,
    AppendTraceEvents,
    AppendTraceRuns,
    ClearInterrupt,
    ConfirmArtifactUpload,
    CreateSession,
    DeleteArtifact,
    DeleteBranch,
    DeleteCheckpoint,
    DeleteSession,
    ForkSession,
    GetArtifact,
    GetLatestCompaction,
    GetMessage,
    GetSession,
    HealthCheck,
    LastMessages,
    ListArtifacts,
    ListArtifactVersions,
    ListBranches,
    ListMessages,
    ListSessions,
    ListTraceRuns,
    LoadCheckpoint,
    LoadFull,
    LoadInterrupt,
    LoadRecords,
    LoadState,
    LoadTraceEvents,
    MarkCompaction,
    OpenArtifact,
    PopMessage,
    PresignArtifact,
    PresignArtifactUpload,
    PutArtifact,
    Reclaim,
    Request,
    RestoreBranch,
    RewindSession,
    SaveCheckpoint,
    SaveFull,
    SaveInterrupt,
    SaveRecords,
    SaveState,
    Search,
    UpdateSession,
    UpdateUsage,
)
from store.settings import Settings

if TYPE_CHECKING:
    from store.aws.async_driver import AsyncDriver
    from store.aws.driver import SyncDriver

R = TypeVar("R")

PLANS: Mapping[type[Request[Any]], Callable[[Context, Any], Plan[Any]]] = {
    CreateSession: sessions.create_session,
    GetSession: sessions.get_session,
    ListSessions: sessions.list_sessions,
    UpdateSession: sessions.update_session,
    DeleteSession: sessions.delete_session,
    ForkSession: forks.fork_session,
    RewindSession: rewinds.rewind_session,
    ListBranches: rewinds.list_branches,
    RestoreBranch: rewinds.restore_branch,
    DeleteBranch: rewinds.delete_branch,
    AppendMessages: messages.append_messages,
    ListMessages: messages.list_messages,
    LastMessages: messages.last_messages,
    GetMessage: messages.get_message,
    PopMessage: messages.pop_message,
    UpdateUsage: messages.update_usage,
    MarkCompaction: messages.mark_compaction,
    GetLatestCompaction: messages.get_latest_compaction,
    SaveState: state.save_state,
    LoadState: state.load_state,
    SaveFull: state.save_full,
    LoadFull: state.load_full,
    SaveInterrupt: state.save_interrupt,
    LoadInterrupt: state.load_interrupt,
    ClearInterrupt: state.clear_interrupt,
    SaveRecords: state.save_records,
    LoadRecords: state.load_records,
    SaveCheckpoint: checkpoints.save_checkpoint,
    LoadCheckpoint: checkpoints.load_checkpoint,
    DeleteCheckpoint: checkpoints.delete_checkpoint,
    PutArtifact: artifacts.put_artifact,
    GetArtifact: artifacts.get_artifact,
    OpenArtifact: artifacts.open_artifact,
    ListArtifacts: artifacts.list_artifacts,
    ListArtifactVersions: artifacts.list_artifact_versions,
    DeleteArtifact: artifacts.delete_artifact,
    PresignArtifact: artifacts.presign_artifact,
    PresignArtifactUpload: artifacts.presign_artifact_upload,
    ConfirmArtifactUpload: artifacts.confirm_artifact_upload,
    AppendTraceEvents: traces.append_trace_events,
    AppendTraceRuns: traces.append_trace_runs,
    LoadTraceEvents: traces.load_trace_events,
    ListTraceRuns: traces.list_trace_runs,
    Reclaim: reclaim.reclaim,
    Search: search.search,
    HealthCheck: health.health_check,
}


def plan_of(ctx: Context, request: Request[R]) -> Plan[R]:
    """The request's plan, bounded by the retry budget."""
    plan: Plan[R] = PLANS[type(request)](ctx, request)
    return within_budget(ctx, plan, ctx.settings.retry_budget.total_seconds())


@dataclass(frozen=True)
class Tables:
    """Where a DynamoDB store keeps its data: what a front names, from which the backend makes its plans'
    context (the front never builds plan-layer state itself)."""

    sessions: str
    messages: str
    bucket: str | None
    settings: Settings

    def context(self) -> Context:
        return Context(self.sessions, self.messages, self.settings, bucket=self.bucket)


class DynamoBackend(Backend):
    """Runs each request's plan with the sync driver (boto3)."""

    name = "dynamodb"

    def __init__(self, where: Tables | Context, driver: SyncDriver) -> None:
        self.ctx = where.context() if isinstance(where, Tables) else where
        self.driver = driver

    def execute(self, request: Request[R]) -> R:
        return self.driver.run(plan_of(self.ctx, request))

    def close(self) -> None:
        """Stop the driver's thread pool."""
        self.driver.close()


class AsyncDynamoBackend(AsyncBackend):
    """Runs each request's plan with the async driver (aiobotocore)."""

    name = "dynamodb"

    def __init__(self, where: Tables | Context, driver: AsyncDriver) -> None:
        self.ctx = where.context() if isinstance(where, Tables) else where
        self.driver = driver

    async def execute(self, request: Request[R]) -> R:
        return await self.driver.run(plan_of(self.ctx, request))

    async def aclose(self) -> None:
        """Close the clients the driver created."""
        await self.driver.aclose()
