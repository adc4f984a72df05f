"""`SessionStore`: the public, synchronous entry point. It checks and normalises every argument once,
then hands the operation to its backend (memory, or DynamoDB through the sync driver)."""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Self

from store import validation as v
from store.artifact_reader import ArtifactReader
from store.backend import UNSET, Backend, Presign, Unset
from store.errors import InvalidInput
from store.memory import MemoryBackend
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
from store.settings import Settings
from store.timeutil import aware, to_duration

APPEND_MAX = 97  # a transaction holds 100 items: the head, an idempotency record, an upload intent, the messages
SAVE_FULL_MAX = 97  # the head, the state, an upload intent, and the messages
DEFAULT_PRESIGN = timedelta(minutes=15)
MAX_QUERY = 256

_sdk_sessions: dict[str, Any] = {}
_sdk_sessions_lock = threading.Lock()


def shared_sdk_session(sdk: str) -> Any:
    """One session per process of the SDK named (creating one costs ~80 ms), shared by the stores that are
    not given one: "boto3" (a `boto3.Session`) or "aiobotocore" (an `AioSession`). The SDK is imported on
    first use."""
    with _sdk_sessions_lock:
        if sdk not in _sdk_sessions:
            if sdk == "aiobotocore":
                _sdk_sessions[sdk] = importlib.import_module("aiobotocore.session").get_session()
            else:
                _sdk_sessions[sdk] = importlib.import_module(sdk).Session()
        return _sdk_sessions[sdk]


def default_boto3_session() -> Any:
    """The process's shared boto3 Session."""
    return shared_sdk_session("boto3")


def env_resources() -> tuple[str, str, str | None]:
    """(sessions table, messages table, bucket) from SESSIONS_TABLE, MESSAGES_TABLE and ARTIFACTS_BUCKET."""
    missing = [name for name in ("SESSIONS_TABLE", "MESSAGES_TABLE") if not os.environ.get(name)]
    if missing:
        raise InvalidInput(f"environment variable(s) not set: {', '.join(missing)}")
    return os.environ["SESSIONS_TABLE"], os.environ["MESSAGES_TABLE"], os.environ.get("ARTIFACTS_BUCKET") or None


def retry_config(config: Any = None) -> Any:
    """botocore Config with standard retry mode (throttling and 5xx retried with backoff), merged into `config`."""
    from botocore.config import Config

    base = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5, read_timeout=20)
    return base.merge(config) if config is not None else base


def s3_config(config: Any = None, *, path_style: bool = False) -> Any:
    """`retry_config` plus SigV4 signing (presigned URLs) for the S3 client; path-style addressing for
    custom endpoints (a local stack on 127.0.0.1)."""
    from botocore.config import Config

    extra = Config(signature_version="s3v4", s3={"addressing_style": "path"} if path_style else None)
    return retry_config(config).merge(extra)


def presign_request(
    settings: Settings,
    name: str,
    version: int | None,
    method: str,
    expires_in: timedelta | int,
    content_type: str | None,
    metadata: dict[str, str] | None,
    size: int | None,
    max_size: int | None,
    sha256: str | None,
) -> Presign:
    """The checked request behind both presign methods (an upload's limits from `settings`)."""
    limit, exact = v.upload_limits(size, max_size, settings) if method == "PUT" else (0, None)
    return Presign(
        v.artifact_name(name),
        v.version(version),
        method,
        v.presign_expiry(expires_in),
        v.content_type(content_type),
        v.artifact_metadata(metadata),
        max_size=limit,
        size=exact,
        sha256=None if sha256 is None else v.sha256_hex(sha256),
    )


class StoreFront:
    """What both fronts share: configuration, and the choice of backend. `SessionStore` builds its DynamoDB
    backend on boto3 and the sync driver, `AsyncSessionStore` on aiobotocore and the async driver."""

    def __init__(
        self,
        sessions_table: str | None = None,
        messages_table: str | None = None,
        *,
        bucket: str | None = None,
        session: Any = None,
        client: Any = None,
        s3_client: Any = None,
        config: Any = None,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        settings: Settings | None = None,
        backend: Backend | None = None,
    ) -> None:
        """Tables and bucket by name (the bucket is needed for artifacts, traces and large payloads), with
        an SDK session or ready clients, a botocore `config` merged into the store's retry policy, an
        endpoint and region; or a ready `backend`."""
        self.settings = settings or Settings()
        self.bucket = bucket
        if backend is not None:
            self._backend = backend
            return
        if not sessions_table or not messages_table:
            raise InvalidInput("sessions_table and messages_table are required")
        from store.aws.plans.base import Context

        where = {"endpoint_url": endpoint_url, "region_name": region_name}
        configs = {
            "dynamodb": {"config": retry_config(config), **where},
            "s3": {"config": s3_config(config, path_style=endpoint_url is not None), **where},
        }
        given = {name: c for name, c in (("dynamodb", client), ("s3", s3_client)) if c is not None}
        context = Context(sessions_table, messages_table, self.settings, bucket=bucket)
        self._backend = self._dynamo_backend(context, session, configs, given)

    def _dynamo_backend(
        self, context: Any, session: Any, configs: dict[str, dict[str, Any]], given: dict[str, Any]
    ) -> Backend:
        raise NotImplementedError

    @classmethod
    def from_env(cls, **kwargs: Any) -> Self:
        """A DynamoDB store configured by SESSIONS_TABLE, MESSAGES_TABLE, ARTIFACTS_BUCKET and the standard
        AWS variables (AWS_REGION, AWS_ENDPOINT_URL, credentials)."""
        sessions, messages, bucket = env_resources()
        return cls(sessions, messages, bucket=bucket, **kwargs)

    @classmethod
    def memory(cls, settings: Settings | None = None) -> Self:
        """An in-memory store with the same behaviour, for tests and demos."""
        settings = settings or Settings()
        return cls(backend=MemoryBackend(settings), settings=settings)

    @property
    def backend_name(self) -> str:
        """ "memory" or "dynamodb"."""
        return self._backend.name


class SessionStore(StoreFront):
    """Sessions, transcripts, state, interrupts, checkpoints, records, artifacts and traces for AI agents.

    Build one per process and share it (it is thread-safe): `SessionStore.from_env()`,
    `SessionStore(sessions_table, messages_table, bucket=...)`, or `SessionStore.memory()` for tests."""

    def _dynamo_backend(
        self, context: Any, session: Any, configs: dict[str, dict[str, Any]], given: dict[str, Any]
    ) -> Backend:
        from store.aws.backend import DynamoBackend
        from store.aws.driver import SyncDriver

        clients = dict(given)
        wanted = ("dynamodb", "s3") if context.bucket is not None else ("dynamodb",)
        try:
            for service in wanted:
                if service not in clients:
                    clients[service] = (session or default_boto3_session()).client(service, **configs[service])
        except Exception as exc:  # botocore's errors (no region, bad endpoint) must not escape
            raise InvalidInput(f"cannot create AWS clients: {exc}") from None
        driver = SyncDriver(clients)
        return DynamoBackend(context, driver.run, driver.close)

    def close(self) -> None:
        """Release the store's clients."""
        self._backend.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ sessions

    def create_session(
        self,
        owner: str,
        *,
        session_id: str | None = None,
        title: str | None = None,
        model: str | None = None,
        metadata: dict[str, Any] | None = None,
        retention: timedelta | int | None = None,
    ) -> Session:
        """Create a session (a fresh id unless one is given; SessionExists if it is taken). With `retention`,
        the session expires after that long without activity."""
        return self._backend.create_session(
            v.owner(owner),
            v.new_id() if session_id is None else v.ident(session_id, "session_id"),
            v.text(title, "title", v.MAX_TITLE),
            v.text(model, "model", v.MAX_MODEL),
            v.metadata(metadata),
            to_duration(retention, "retention"),
        )

    def get_session(self, session_id: str, *, owner: str | None = None) -> Session | None:
        """The session, or None when it does not exist (or has expired, or belongs to another owner)."""
        return self._backend.get_session(v.ident(session_id, "session_id"), v.optional_owner(owner))

    def list_sessions(
        self,
        owner: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Page[Session]:
        """An owner's sessions, most recently updated first, filtered by creation time (exclusive bounds)
        and by metadata equality; resume with `cursor=page.next_cursor`."""
        query = SessionQuery(
            limit=v.limit(limit) or 50,
            cursor=cursor,
            created_after=aware(created_after, "created_after"),
            created_before=aware(created_before, "created_before"),
            metadata=v.metadata_filter(metadata),
        )
        return self._backend.list_sessions(v.owner(owner), query)

    def update_session(
        self,
        session_id: str,
        *,
        title: str | Unset | None = UNSET,
        model: str | Unset | None = UNSET,
        metadata: dict[str, Any] | Unset | None = UNSET,
        owner: str | None = None,
    ) -> Session:
        """Change the fields given (None clears title or model; metadata is replaced whole)."""
        return self._backend.update_session(
            v.ident(session_id, "session_id"),
            v.optional_owner(owner),
            UNSET if title is UNSET else v.text(title, "title", v.MAX_TITLE),
            UNSET if model is UNSET else v.text(model, "model", v.MAX_MODEL),
            UNSET if metadata is UNSET else v.metadata(metadata),
        )

    def delete_session(self, session_id: str, *, owner: str | None = None) -> None:
        """Remove the session and everything it owns before returning; idempotent."""
        return self._backend.delete_session(v.ident(session_id, "session_id"), v.optional_owner(owner))

    # ------------------------------------------------------------ messages

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Message | dict[str, Any]],
        *,
        expected_seq: int | None = None,
        idempotency_key: str | None = None,
        owner: str | None = None,
    ) -> list[MessageRecord]:
        """Append up to 97 messages atomically, numbered after the session's last sequence number.
        `expected_seq` stale -> Conflict; a repeat with the same `idempotency_key` returns the first
        call's records and writes nothing."""
        return self._backend.append_messages(
            v.ident(session_id, "session_id"),
            v.optional_owner(owner),
            v.messages(messages, maximum=APPEND_MAX),
            v.seq(expected_seq, "expected_seq"),
            v.optional_ident(idempotency_key, "idempotency_key"),
        )

    def list_messages(
        self,
        session_id: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int | None = None,
        newest_first: bool = False,
        since_compaction: bool = False,
        roles: Iterable[str] | None = None,
        cursor: str | None = None,
        owner: str | None = None,
    ) -> Page[MessageRecord]:
        """Messages with after_seq < seq < before_seq, in order (or newest first), optionally only some
        roles and only from the latest compaction; `limit` None returns them all."""
        query = MessageQuery(
            after_seq=v.seq(after_seq, "after_seq"),
            before_seq=v.seq(before_seq, "before_seq"),
            limit=v.limit(limit, allow_none=True),
            newest_first=bool(newest_first),
            since_compaction=bool(since_compaction),
            roles=v.roles(roles),
            cursor=cursor,
        )
        return self._backend.list_messages(v.ident(session_id, "session_id"), v.optional_owner(owner), query)

    def last_messages(self, session_id: str, n: int, *, owner: str | None = None) -> list[MessageRecord]:
        """The latest `n` messages, oldest first."""
        count = v.limit(n, "n") or 1
        return self._backend.last_messages(v.ident(session_id, "session_id"), v.optional_owner(owner), count)

    def get_message(self, session_id: str, message_id: str, *, owner: str | None = None) -> MessageRecord | None:
        """One message by id, or None."""
        return self._backend.get_message(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.ident(message_id, "message_id")
        )

    def pop_message(
        self, session_id: str, *, expected_seq: int | None = None, owner: str | None = None
    ) -> MessageRecord | None:
        """Remove the latest message and return it, or None when the transcript is empty. Atomic and safe
        under concurrency: two pops never return the same message, and a pop racing an append removes
        whichever message is last when it commits. The session's last_seq and usage totals move back;
        if the message was the compaction marker, the previous compaction (if any) becomes the latest.
        `expected_seq` stale -> Conflict; Conflict too when the saved state has already seen the
        message (pop before saving the state)."""
        return self._backend.pop_message(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.seq(expected_seq, "expected_seq")
        )

    def update_usage(
        self, session_id: str, message_id: str, usage: TokenUsage | dict[str, Any], *, owner: str | None = None
    ) -> MessageRecord:
        """Set a message's usage; the session's totals move by the difference (MessageNotFound if absent)."""
        return self._backend.update_usage(
            v.ident(session_id, "session_id"),
            v.optional_owner(owner),
            v.ident(message_id, "message_id"),
            v.usage(usage),
        )

    def mark_compaction(self, session_id: str, message_id: str, *, owner: str | None = None) -> MessageRecord:
        """Mark an appended summary message as the start of the live context."""
        return self._backend.mark_compaction(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.ident(message_id, "message_id")
        )

    def get_latest_compaction(self, session_id: str, *, owner: str | None = None) -> MessageRecord | None:
        """The latest compaction message, or None."""
        return self._backend.get_latest_compaction(v.ident(session_id, "session_id"), v.optional_owner(owner))

    # ------------------------------------------------------------ state and interrupts

    def save_state(
        self, session_id: str, state: Any, *, expected_version: int | None = None, owner: str | None = None
    ) -> int:
        """Store a new version of the session's state (any JSON); returns the new version number."""
        return self._backend.save_state(
            v.ident(session_id, "session_id"),
            v.optional_owner(owner),
            v.json_value(state, "state"),
            v.seq(expected_version, "expected_version"),
        )

    def load_state(self, session_id: str, *, owner: str | None = None) -> StateSnapshot | None:
        """The current state, or None if none was saved."""
        return self._backend.load_state(v.ident(session_id, "session_id"), v.optional_owner(owner))

    def save_full(
        self,
        session_id: str,
        messages: Iterable[Message | dict[str, Any]],
        state: Any,
        *,
        expected_seq: int | None = None,
        owner: str | None = None,
    ) -> StateSnapshot:
        """Append messages (up to 97) and store the state after them, in one transaction."""
        return self._backend.save_full(
            v.ident(session_id, "session_id"),
            v.optional_owner(owner),
            v.messages(messages, maximum=SAVE_FULL_MAX),
            v.json_value(state, "state"),
            v.seq(expected_seq, "expected_seq"),
        )

    def load_full(self, session_id: str, *, since_compaction: bool = False, owner: str | None = None) -> FullSession:
        """The session, its messages and its state as of one instant."""
        return self._backend.load_full(
            v.ident(session_id, "session_id"), v.optional_owner(owner), bool(since_compaction)
        )

    def save_interrupt(self, session_id: str, interrupt: dict[str, Any], *, owner: str | None = None) -> None:
        """Record a pending interrupt (e.g. a tool call awaiting approval), replacing any."""
        return self._backend.save_interrupt(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.json_object(interrupt, "interrupt")
        )

    def load_interrupt(self, session_id: str, *, owner: str | None = None) -> dict[str, Any] | None:
        """The pending interrupt, or None."""
        return self._backend.load_interrupt(v.ident(session_id, "session_id"), v.optional_owner(owner))

    def clear_interrupt(self, session_id: str, *, owner: str | None = None) -> None:
        """Remove the pending interrupt; idempotent."""
        return self._backend.clear_interrupt(v.ident(session_id, "session_id"), v.optional_owner(owner))

    # ------------------------------------------------------------ checkpoints and records

    def save_checkpoint(
        self,
        scope: str,
        key: str,
        data: Any,
        *,
        ttl: timedelta | int | None = None,
        owner: str | None = None,
    ) -> Checkpoint:
        """Store or renew a checkpoint that expires `ttl` from now (default `settings.checkpoint_ttl`)."""
        return self._backend.save_checkpoint(
            v.scope(scope),
            v.ident(key, "key"),
            v.json_value(data, "checkpoint data"),
            to_duration(ttl, "ttl") or self.settings.checkpoint_ttl,
            v.optional_owner(owner),
        )

    def load_checkpoint(self, scope: str, key: str, *, owner: str | None = None) -> Checkpoint | None:
        """The checkpoint, or None when absent or expired."""
        return self._backend.load_checkpoint(v.scope(scope), v.ident(key, "key"), v.optional_owner(owner))

    def delete_checkpoint(self, scope: str, key: str, *, owner: str | None = None) -> None:
        """Remove the checkpoint; idempotent."""
        return self._backend.delete_checkpoint(v.scope(scope), v.ident(key, "key"), v.optional_owner(owner))

    def save_records(self, session_id: str, kind: str, records: Iterable[Any], *, owner: str | None = None) -> None:
        """Replace the session's records of `kind` (run records, verification reports, subagent tasks, ...)."""
        return self._backend.save_records(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.ident(kind, "kind"), v.record_list(records)
        )

    def load_records(self, session_id: str, kind: str, *, owner: str | None = None) -> list[Any]:
        """The session's records of `kind` (empty when none were saved)."""
        return self._backend.load_records(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.ident(kind, "kind")
        )

    # ------------------------------------------------------------ artifacts

    def put_artifact(
        self,
        session_id: str,
        name: str,
        data: Any,
        *,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        owner: str | None = None,
    ) -> ArtifactVersion:
        """Store `data` (bytes, a binary stream with `read(n)`, or an iterable of bytes chunks; any size,
        streamed, never held whole) as the name's next version (1, 2, 3, ...), with its size, sha256,
        content type and string metadata."""
        return self._backend.put_artifact(
            v.ident(session_id, "session_id"),
            v.optional_owner(owner),
            v.artifact_name(name),
            v.data_source(data),
            v.content_type(content_type),
            v.artifact_metadata(metadata),
        )

    def get_artifact(
        self, session_id: str, name: str, *, version: int | None = None, owner: str | None = None
    ) -> bytes | None:
        """The bytes of a version (the latest when `version` is None), or None when it does not exist."""
        return self._backend.get_artifact(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.artifact_name(name), v.version(version)
        )

    def open_artifact(
        self, session_id: str, name: str, *, version: int | None = None, owner: str | None = None
    ) -> ArtifactReader | None:
        """A streaming reader of a version (`read(n)`, iteration; check `reader.version`), or None."""
        return self._backend.open_artifact(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.artifact_name(name), v.version(version)
        )

    def list_artifacts(self, session_id: str, *, owner: str | None = None) -> list[ArtifactVersion]:
        """The latest version of each artifact, sorted by name."""
        return self._backend.list_artifacts(v.ident(session_id, "session_id"), v.optional_owner(owner))

    def list_artifact_versions(self, session_id: str, name: str, *, owner: str | None = None) -> list[ArtifactVersion]:
        """Every version of an artifact, oldest first (empty when there is none)."""
        return self._backend.list_artifact_versions(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.artifact_name(name)
        )

    def delete_artifact(self, session_id: str, name: str, *, owner: str | None = None) -> None:
        """Delete every version of an artifact (its numbers are not reused); idempotent."""
        return self._backend.delete_artifact(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.artifact_name(name)
        )

    def presign_artifact(
        self,
        session_id: str,
        name: str,
        *,
        version: int | None = None,
        method: str = "GET",
        expires_in: timedelta | int = DEFAULT_PRESIGN,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        size: int | None = None,
        max_size: int | None = None,
        sha256: str | None = None,
        owner: str | None = None,
    ) -> str:
        """A SigV4 URL valid for `expires_in` (at most one hour). GET downloads a version (the latest by
        default; ArtifactNotFound if absent) as an attachment. PUT uploads a new version's bytes once
        (send the headers `presign_artifact_upload` lists: at least the same Content-Type and
        `If-None-Match: *`); they become a version only when `confirm_artifact_upload` is called with
        this URL. `size`, `max_size` and `sha256` bound and pin the upload as there."""
        method = v.presign_method(method)
        if method == "PUT" and version is not None:
            raise InvalidInput("a PUT URL uploads a new version; version must be None")
        if method == "GET" and (size, max_size, sha256) != (None, None, None):
            raise InvalidInput("size, max_size and sha256 describe an upload; a GET URL takes none of them")
        request = presign_request(
            self.settings, name, version, method, expires_in, content_type, metadata, size, max_size, sha256
        )
        return self._backend.presign_artifact(v.ident(session_id, "session_id"), v.optional_owner(owner), request)

    def presign_artifact_upload(
        self,
        session_id: str,
        name: str,
        *,
        expires_in: timedelta | int = DEFAULT_PRESIGN,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        size: int | None = None,
        max_size: int | None = None,
        sha256: str | None = None,
        owner: str | None = None,
    ) -> PresignedUpload:
        """`presign_artifact(method="PUT")` with everything a client needs: the URL, the headers to send
        (signed: the content type, `If-None-Match: *` so the URL writes once, and the declared size and
        SHA-256), the upload id to confirm, the size limit, and when the URL expires. Declare `size` (the
        exact byte count, enforced by S3) or `max_size` (enforced at confirm); without either the upload
        may hold `settings.default_upload_bytes`, and neither may exceed `settings.max_upload_bytes`.
        With `sha256` (hex) S3 verifies the bytes as they arrive and confirm need not read them back."""
        request = presign_request(
            self.settings, name, None, "PUT", expires_in, content_type, metadata, size, max_size, sha256
        )
        return self._backend.presign_artifact_upload(
            v.ident(session_id, "session_id"), v.optional_owner(owner), request
        )

    def confirm_artifact_upload(
        self, session_id: str, name: str, upload: str, *, owner: str | None = None
    ) -> ArtifactVersion:
        """Make the bytes uploaded through a presigned PUT (`upload`: its URL or upload id) the name's next
        version: their size is checked against the upload's limit from the object's metadata (an oversize
        upload is PayloadTooLarge and discarded), their SHA-256 taken from S3's checksum when one was
        declared (else read back), and the object copied, server-side, to a key no URL was issued for, so
        nothing can change a committed version. Confirming twice returns the same version; InvalidInput
        when nothing was uploaded, or the upload is not this session's and name's (or was issued for an
        earlier session under the same id: then it is discarded)."""
        return self._backend.confirm_artifact_upload(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.artifact_name(name), v.upload_id(upload)
        )

    # ------------------------------------------------------------ traces

    def append_trace_events(
        self, session_id: str, run_id: str, events: Iterable[dict[str, Any]], *, owner: str | None = None
    ) -> int:
        """Append a batch of events (JSON objects) to a run, stored as one compressed JSON-lines object;
        returns the batch's number in the run. Batches keep their order under concurrent writers."""
        return self._backend.append_trace_events(
            v.ident(session_id, "session_id"),
            v.optional_owner(owner),
            v.ident(run_id, "run_id"),
            v.trace_events(events),
        )

    def load_trace_events(
        self, session_id: str, run_id: str | None = None, *, owner: str | None = None
    ) -> list[dict[str, Any]]:
        """The events of one run in order, or of every run (runs in the order they started)."""
        return self._backend.load_trace_events(
            v.ident(session_id, "session_id"), v.optional_owner(owner), v.optional_ident(run_id, "run_id")
        )

    def list_trace_runs(self, session_id: str, *, owner: str | None = None) -> list[str]:
        """The session's run ids, in the order they started."""
        return self._backend.list_trace_runs(v.ident(session_id, "session_id"), v.optional_owner(owner))

    def reclaim(self, records: Iterable[dict[str, Any]]) -> int:
        """Act on records of the sessions table's stream (the cascade function's job; idempotent): purge
        sessions whose head was removed (TTL expiry, or a finished delete: a backstop), and delete the S3
        objects that records release (upload intents that expired uncommitted; items deleted or
        replaced). Returns how many released objects were deleted."""
        return self._backend.reclaim(v.stream_records(records))

    # ------------------------------------------------------------ search and operations

    def search(self, owner: str, query: str, *, limit: int = 20) -> list[SessionHit]:
        """Case-insensitive search of one owner's session titles and message text (cost: docs/data-model.md)."""
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
            raise InvalidInput(f"query must be a non-blank string of at most {MAX_QUERY} characters")
        v.text(query, "query", MAX_QUERY)
        return self._backend.search(v.owner(owner), query.strip(), v.limit(limit, maximum=100) or 20)

    def health_check(self) -> None:
        """Return when every table answers; StoreUnavailable names what does not."""
        return self._backend.health_check()
