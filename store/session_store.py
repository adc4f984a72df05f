"""`SessionStore`: the public, synchronous entry point. It checks and normalises every argument once,
then hands the operation to its backend (memory, or DynamoDB through the sync driver)."""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any, Generic, Self, TypeVar

from store.backend import AsyncBackend, Backend
from store.calls import PublicOperations
from store.env_settings import settings_from_env
from store.errors import InvalidInput
from store.extraction.front import Extraction
from store.front.artifacts import DEFAULT_PRESIGN, presign_request
from store.front.messages import APPEND_MAX
from store.front.operations import MAX_QUERY
from store.front.state import SAVE_FULL_MAX
from store.memory import MemoryBackend
from store.memory.message_index import index_through
from store.recall.front import Recall
from store.settings import Settings

B = TypeVar("B", Backend, AsyncBackend)

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


def forget_sdk_sessions() -> None:
    """Drop the shared SDK sessions, so the next store makes new ones (after a Lambda SnapStart restore,
    nothing made before the snapshot may be shared by the environments restored from it)."""
    with _sdk_sessions_lock:
        _sdk_sessions.clear()


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


def dynamodb_config(config: Any = None) -> Any:
    """`retry_config` for the DynamoDB client a store makes, without botocore's check of each request's
    parameters against the service model: the store's plans build every request (a caller's values are checked
    by the store before they reach one, and DynamoDB refuses a malformed request with a ValidationException, a
    typed error), and the check cost a tenth of a turn's own time (a turn's transaction is a few hundred
    parameters). A `config` given keeps its own `parameter_validation`."""
    from botocore.config import Config

    return Config(parameter_validation=False).merge(retry_config(config))


def s3_config(config: Any = None, *, path_style: bool = False) -> Any:
    """`retry_config` plus SigV4 signing (presigned URLs) for the S3 client; path-style addressing for
    custom endpoints (a local stack on 127.0.0.1)."""
    from botocore.config import Config

    extra = Config(signature_version="s3v4", s3={"addressing_style": "path"} if path_style else None)
    return retry_config(config).merge(extra)


class StoreFront(Generic[B]):
    """What both fronts share: configuration, and the choice of backend. `SessionStore` builds its DynamoDB
    backend on boto3 and the sync driver, `AsyncSessionStore` on aiobotocore and the async driver."""

    _backend: B

    def __init__(
        self,
        sessions_table: str | None = None,
        messages_table: str | None = None,
        *,
        bucket: str | None = None,
        memories_table: str | None = None,
        session: Any = None,
        client: Any = None,
        s3_client: Any = None,
        config: Any = None,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        settings: Settings | None = None,
        backend: Backend | AsyncBackend | None = None,
    ) -> None:
        """Tables and bucket by name (the bucket is needed for artifacts, traces and large payloads), with
        an SDK session or ready clients, a botocore `config` merged into the store's retry policy, an
        endpoint and region; or a ready `backend`."""
        self.settings = settings or Settings()
        self.bucket = bucket
        if backend is not None:
            self._backend = self._adopt(backend)
            return
        if not sessions_table or not messages_table:
            raise InvalidInput("sessions_table and messages_table are required")
        from store.aws.backend import Tables

        where = {"endpoint_url": endpoint_url, "region_name": region_name}
        configs = {
            "dynamodb": {"config": dynamodb_config(config), **where},
            "s3": {"config": s3_config(config, path_style=endpoint_url is not None), **where},
        }
        given = {name: c for name, c in (("dynamodb", client), ("s3", s3_client)) if c is not None}
        tables = Tables(sessions_table, messages_table, bucket, self.settings, memories=memories_table)
        self._backend = self._dynamo_backend(tables, session, configs, given)

    def _adopt(self, backend: Backend | AsyncBackend) -> B:
        """The given backend, as this front drives it."""
        raise NotImplementedError

    def _dynamo_backend(
        self, tables: Any, session: Any, configs: dict[str, dict[str, Any]], given: dict[str, Any]
    ) -> B:
        raise NotImplementedError

    @classmethod
    def from_env(cls, **kwargs: Any) -> Self:
        """A DynamoDB store configured by SESSIONS_TABLE, MESSAGES_TABLE, ARTIFACTS_BUCKET, MEMORIES_TABLE, the
        standard AWS variables (AWS_REGION, AWS_ENDPOINT_URL, credentials) and, unless `settings` is given, the
        variables `store.env_settings` reads (MEMORY_EMBEDDER, EXTRACTION_MODEL, EXTRACTION_API_KEY,
        EXTRACTION_STRATEGIES)."""
        sessions, messages, bucket = env_resources()
        kwargs.setdefault("memories_table", os.environ.get("MEMORIES_TABLE") or None)
        if "settings" not in kwargs:
            kwargs["settings"] = settings_from_env()
        return cls(sessions, messages, bucket=bucket, **kwargs)

    @classmethod
    def memory(cls, settings: Settings | None = None) -> Self:
        """An in-memory store with the same behaviour, for tests and demos. With the default `Settings` it has no
        embedder, so memories are searched by their words; `Settings(embedder=store.embeddings.offline_embedder())`
        searches them by meaning too, with the local stack's offline model."""
        settings = settings or Settings()
        return cls(backend=MemoryBackend(settings), settings=settings)

    @property
    def backend(self) -> B:
        """The backend this store runs on, to build another view of the same data on it (for example
        `SessionStore(backend=ScopedBackend(store.backend, owner))`, an owner's namespace)."""
        return self._backend

    def supports(self, operation: str) -> bool:
        """Whether this store's backend carries out `operation` (a method's name, such as "pop_message"):
        the HTTP API's backend, for one, offers no `pop_message` or `reclaim`. Anything but an operation's
        name is simply not one (False)."""
        return isinstance(operation, str) and operation in self._backend.supports

    @property
    def backend_name(self) -> str:
        """ "memory" or "dynamodb"."""
        return self._backend.name


class SessionStore(StoreFront[Backend], PublicOperations, Recall, Extraction):
    """Sessions, transcripts, state, interrupts, checkpoints, records, artifacts and traces for AI agents.

    Build one per process and share it (it is thread-safe): `SessionStore.from_env()`,
    `SessionStore(sessions_table, messages_table, bucket=...)`, or `SessionStore.memory()` for tests."""

    def _adopt(self, backend: Backend | AsyncBackend) -> Backend:
        if not isinstance(backend, Backend):
            raise InvalidInput("SessionStore runs a sync backend; use AsyncSessionStore for an async one")
        return backend

    def _dynamo_backend(
        self, tables: Any, session: Any, configs: dict[str, dict[str, Any]], given: dict[str, Any]
    ) -> Backend:
        from store.aws.backend import DynamoBackend
        from store.aws.driver import Clients, SyncDriver

        def client(service: str) -> Any:
            return given.get(service) or (session or default_boto3_session()).client(service, **configs[service])

        try:
            clients: Clients = {"dynamodb": client("dynamodb")}
            if tables.bucket is not None or "s3" in given:
                clients["s3"] = client("s3")
        except Exception as exc:  # botocore's errors (no region, bad endpoint) must not escape
            raise InvalidInput(f"cannot create AWS clients: {exc}") from None
        return DynamoBackend(tables, SyncDriver(clients))

    def close(self) -> None:
        """Release the store's clients."""
        self._backend.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


index_through(lambda backend, settings: SessionStore(backend=backend, settings=settings))

__all__ = [
    "APPEND_MAX",
    "DEFAULT_PRESIGN",
    "MAX_QUERY",
    "SAVE_FULL_MAX",
    "SessionStore",
    "StoreFront",
    "presign_request",
]
