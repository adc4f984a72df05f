"""A backend that carries each request to a deployed (or local) HTTP API: `SessionStore(backend=
HttpBackend(url, token))` is a store whose every call is one or two HTTPS requests to the stack's API,
with the same results and typed errors as a store on the tables. The owner is the token's subject:
session ids are the caller's own names (the API scopes them), and an `owner=` given to a call is not sent.

Operations the API does not offer (`pop_message`, `reclaim`: `supports` lists what it does) raise
InvalidInput, naming the operation. Standard library only (urllib): no extra."""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, TypeVar, cast
from urllib.parse import quote, urlencode, urlsplit

from store import requests as rq
from store.artifact_reader import CHUNK, ArtifactReader
from store.backend import EVERY_OPERATION, Backend, refuse_unsupported
from store.backends.http_errors import ERRORS, error_for
from store.backends.http_transport import Answer, Body, Outgoing, Transport, UrllibTransport
from store.conversation.model import VIEW_FIELD
from store.core import codec
from store.core.streams import read_chunk
from store.errors import ArtifactNotFound, InvalidInput, SessionNotFound, StoreError, StoreUnavailable
from store.models import (
    ArtifactVersion,
    Branch,
    Branches,
    Checkpoint,
    FullSession,
    Message,
    MessageRecord,
    Page,
    PresignedUpload,
    SearchHits,
    Session,
    SessionHit,
    StateSnapshot,
)

R = TypeVar("R")
INLINE_ARTIFACT_BYTES = 4 * 1024 * 1024  # the API's inline upload limit; larger ones go through a presigned PUT
DEFAULT_TIMEOUT = 30.0
CONNECTION_ATTEMPTS = 3  # a reset or refused connection is tried again, as the SDK's clients do
BACKOFF_SECONDS = 0.05
SPOOL_BYTES = CHUNK  # an upload larger than this waits on disk, not in memory, while it is hashed


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return codec.parse(self.body, "the API's answer", max_depth=codec.MAX_DEPTH + 8) if self.body else None


def _path(*parts: str) -> str:
    return "/" + "/".join(quote(p, safe="") for p in parts)


def _query(**params: Any) -> str:
    pairs: list[tuple[str, str]] = []
    for key, value in params.items():
        if value is None or value is False:
            continue
        if isinstance(value, (list, tuple, frozenset, set)):
            pairs += [(key, str(v)) for v in sorted(value)]
        elif isinstance(value, datetime):
            pairs.append((key, value.isoformat()))
        else:
            pairs.append((key, "true" if value is True else str(value)))
    return urlencode(pairs)


def _retryable(method: str, headers: dict[str, str]) -> bool:
    """A request that may be sent again when its connection broke: one whose repetition changes nothing
    (GET, PUT, DELETE, PATCH of fields to values) or that carries an idempotency key."""
    return method in ("GET", "HEAD", "PUT", "DELETE", "PATCH") or "Idempotency-Key" in headers


class HttpBackend(Backend):
    """Requests to the API at `url` with `token` (a bearer JWT whose `sub` is the owner), sent by
    `transport` (the standard library's HTTP client unless another is given)."""

    name = "http"

    def __init__(
        self, url: str, token: str | None, *, timeout: float = DEFAULT_TIMEOUT, transport: Transport | None = None
    ) -> None:
        split = urlsplit(url)
        if split.scheme not in ("http", "https") or not split.netloc:
            raise InvalidInput(f"the API's URL must be http(s)://host[:port][/stage], not {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.transport: Transport = transport or UrllibTransport()

    # -- transport -------------------------------------------------------------------------------
    def open(
        self,
        method: str,
        path: str,
        *,
        query: str = "",
        body: Any = None,
        raw: Body = None,
        headers: dict[str, str] | None = None,
        authorized: bool = True,
    ) -> Answer:
        """One request, its answer unread whatever its status (errors are read by `check`). A connection
        that breaks before an answer is tried again (CONNECTION_ATTEMPTS in all, with a short backoff)
        when repeating the request changes nothing; StoreUnavailable when the API cannot be reached or does
        not answer in time. A JSON `body` is checked as the store checks what it keeps (InvalidInput)."""
        url = (self.url + path if authorized else path) + (f"?{query}" if query else "")
        sent = dict(headers or {})
        data = raw
        if body is not None:
            data = codec.dumps(body, "the request").encode("utf-8")
            sent["Content-Type"] = "application/json"
        if authorized and self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        start = data.tell() if data is not None and not isinstance(data, bytes) else 0
        attempts = CONNECTION_ATTEMPTS if _retryable(method, sent) else 1
        for attempt in range(1, attempts + 1):
            try:
                return self.transport(Outgoing(method, url, sent, data), self.timeout)
            except ConnectionError as exc:
                if attempt == attempts:
                    raise StoreUnavailable(f"the API at {self.url} did not answer: {exc}") from None
            except TimeoutError as exc:
                raise StoreUnavailable(f"the API at {self.url} did not answer in time: {exc}") from None
            if data is not None and not isinstance(data, bytes):
                data.seek(start)
            time.sleep(BACKOFF_SECONDS * 2 ** (attempt - 1) * (0.5 + random.random()))  # nosec B311: jitter
        raise AssertionError("unreachable")  # pragma: no cover

    def send(self, method: str, path: str, **kwargs: Any) -> Reply:
        """`open`, its body read whole (an answer of the API: JSON, bounded)."""
        answer = self.open(method, path, **kwargs)
        try:
            body = answer.read()
        except ConnectionError as exc:
            raise StoreUnavailable(f"the API at {self.url} broke off its answer: {exc}") from None
        finally:
            answer.close()
        return Reply(answer.status, answer.headers, body)

    def check(self, reply: Reply, request: rq.Request[Any], *, absent: bool = False) -> Reply | None:
        """The reply when it succeeded; None for a 404 where absence is an answer (`absent`: the thing
        asked for is missing, not its session, unless the session is what was asked for); otherwise the
        typed error the API's code stands for, with the API's message."""
        if reply.status < 400:
            return reply
        try:
            error = reply.json() or {}
            code, message = str(error.get("code", "")), str(error.get("message", ""))
        except (StoreError, AttributeError):
            code, message = "", reply.body[:200].decode("utf-8", "replace")
        session_missing = code == ERRORS[SessionNotFound][1] and not isinstance(request, rq.GetSession)
        if absent and reply.status == 404 and not session_missing:
            return None
        raise error_for(reply.status, code, message or f"HTTP {reply.status}", request)

    def call(self, request: rq.Request[Any], method: str, path: str, **kwargs: Any) -> Any:
        """A request whose success is JSON: the parsed body."""
        reply = self.check(self.send(method, path, **kwargs), request)
        return None if reply is None else reply.json()

    def maybe(self, request: rq.Request[Any], method: str, path: str, **kwargs: Any) -> Any:
        """As `call`, but None where the API answers 404 (the thing does not exist)."""
        reply = self.check(self.send(method, path, **kwargs), request, absent=True)
        return None if reply is None else reply.json()

    # -- the interface ---------------------------------------------------------------------------
    def execute(self, request: rq.Request[R]) -> R:
        refuse_unsupported(self, request)
        return cast(R, ROUTES[type(request)](self, request))


def _in(request: rq.InSession[Any], *rest: str) -> str:
    return _path("sessions", request.session_id, *rest)


# -- sessions ---------------------------------------------------------------------------------------
def _create(http: HttpBackend, r: rq.CreateSession) -> Session:
    seconds = 0 if r.retention is None else int(r.retention.total_seconds())
    body = {"session_id": r.session_id, "title": r.title, "model": r.model, "metadata": r.metadata}
    return Session.model_validate(http.call(r, "POST", "/sessions", body={**body, "retention_seconds": seconds}))


def _get(http: HttpBackend, r: rq.GetSession) -> Session | None:
    found = http.maybe(r, "GET", _in(r))
    return None if found is None else Session.model_validate(found)


def _list(http: HttpBackend, r: rq.ListSessions) -> Page[Session]:
    q = r.query
    metadata = json.dumps({k: json.loads(v) for k, v in q.metadata.items()}) if q.metadata else None
    query = _query(
        limit=q.limit,
        cursor=q.cursor,
        created_after=q.created_after,
        created_before=q.created_before,
        metadata=metadata,
        conversations_only="true" if q.conversations_only else None,
    )
    return Page[Session].model_validate(http.call(r, "GET", "/sessions", query=query))


def _update(http: HttpBackend, r: rq.UpdateSession) -> Session:
    body = {k: v for k, v in (("title", r.title), ("model", r.model), ("metadata", r.metadata)) if v is not rq.UNSET}
    return Session.model_validate(http.call(r, "PATCH", _in(r), body=body))


def _delete(http: HttpBackend, r: rq.DeleteSession) -> None:
    http.call(r, "DELETE", _in(r))


def _search(http: HttpBackend, r: rq.Search) -> SearchHits:
    found = http.call(r, "GET", "/search", query=_query(q=r.query, limit=r.limit, cursor=r.cursor))
    return SearchHits(
        [SessionHit.model_validate(h) for h in found["items"]],
        next_cursor=found.get("next_cursor"),
        sessions_searched=found.get("sessions_searched", 0),
        messages_searched=found.get("messages_searched", 0),
    )


def _health(http: HttpBackend, r: rq.HealthCheck) -> None:
    http.call(r, "GET", "/health")


# -- messages ---------------------------------------------------------------------------------------
def _wire(message: Message) -> dict[str, Any]:
    """A message as the API takes it: its body as given (checked as JSON when the request is encoded, so
    what no store keeps is InvalidInput here too), its role, id and usage."""
    out: dict[str, Any] = {"role": message.role, **message.body()}
    if message.id is not None:
        out["id"] = message.id
    if message.usage is not None:
        out["usage"] = message.usage.model_dump(mode="json", exclude_none=True)
    return out


def _record(item: Any) -> MessageRecord:
    """A message as the API sent it, without the canonical view the API adds (no stored message has one)."""
    if isinstance(item, dict):
        item = {k: v for k, v in item.items() if k != VIEW_FIELD}
    return MessageRecord.model_validate(item)


def _records(items: list[Any]) -> list[MessageRecord]:
    return [_record(m) for m in items]


def _append(http: HttpBackend, r: rq.AppendMessages) -> list[MessageRecord]:
    body: dict[str, Any] = {"messages": [_wire(m) for m in r.messages]}
    if r.expected_seq is not None:
        body["expected_seq"] = r.expected_seq
    headers = {"Idempotency-Key": r.idempotency_key} if r.idempotency_key else None
    return _records(http.call(r, "POST", _in(r, "messages"), body=body, headers=headers)["items"])


def _messages(http: HttpBackend, r: rq.ListMessages) -> Page[MessageRecord]:
    """A page of the transcript; with no `limit`, the whole window asked for (the API's pages, followed)."""
    q = r.query
    items: list[MessageRecord] = []
    cursor = q.cursor
    while True:
        query = _query(
            after_seq=q.after_seq,
            before_seq=q.before_seq,
            limit=q.limit if q.limit is not None else 1000,
            newest_first=q.newest_first,
            since_compaction=q.since_compaction,
            roles=q.roles,
            cursor=cursor,
            branch=r.branch,
        )
        page = http.call(r, "GET", _in(r, "messages"), query=query)
        items += _records(page["items"])
        cursor = page.get("next_cursor")
        if q.limit is not None or cursor is None:
            return Page[MessageRecord](items=items, next_cursor=cursor)


def _fork(http: HttpBackend, r: rq.ForkSession) -> Session:
    body: dict[str, Any] = {"session_id": r.new_session_id, "at_seq": r.at_seq}
    for name in ("title", "metadata", "state"):
        if getattr(r, name) is not rq.UNSET:
            body[name] = getattr(r, name)
    return Session.model_validate(http.call(r, "POST", _in(r, "fork"), body=body))


def _rewind(http: HttpBackend, r: rq.RewindSession) -> Session:
    body: dict[str, Any] = {"to_seq": r.to_seq, "branch": r.branch}
    if r.metadata is not rq.UNSET:
        body["metadata"] = r.metadata
    return Session.model_validate(http.call(r, "POST", _in(r, "rewind"), body=body))


def _branches(http: HttpBackend, r: rq.ListBranches) -> Branches:
    page = http.call(r, "GET", _in(r, "branches"), query=_query(limit=r.limit, cursor=r.cursor))
    return Branches([Branch.model_validate(b) for b in page["items"]], next_cursor=page.get("next_cursor"))


def _restore(http: HttpBackend, r: rq.RestoreBranch) -> Session:
    body: dict[str, Any] = {"keep_as": r.keep_as}
    if r.metadata is not rq.UNSET:
        body["metadata"] = r.metadata
    return Session.model_validate(http.call(r, "POST", _in(r, "branches", r.branch, "restore"), body=body))


def _delete_branch(http: HttpBackend, r: rq.DeleteBranch) -> None:
    http.call(r, "DELETE", _in(r, "branches", r.branch))


def _last(http: HttpBackend, r: rq.LastMessages) -> list[MessageRecord]:
    return _records(http.call(r, "GET", _in(r, "last-messages"), query=_query(n=r.n))["items"])


def _one(http: HttpBackend, r: rq.GetMessage) -> MessageRecord | None:
    found = http.maybe(r, "GET", _in(r, "messages", r.message_id))
    return None if found is None else _record(found)


def _usage(http: HttpBackend, r: rq.UpdateUsage) -> MessageRecord:
    body = {"usage": r.usage.model_dump(exclude_none=True)}
    return _record(http.call(r, "PUT", _in(r, "messages", r.message_id, "usage"), body=body))


def _mark(http: HttpBackend, r: rq.MarkCompaction) -> MessageRecord:
    return _record(http.call(r, "POST", _in(r, "messages", r.message_id, "compaction")))


def _compaction(http: HttpBackend, r: rq.GetLatestCompaction) -> MessageRecord | None:
    found = http.maybe(r, "GET", _in(r, "compaction"))
    return None if found is None else _record(found)


# -- state ------------------------------------------------------------------------------------------
def _save_state(http: HttpBackend, r: rq.SaveState) -> int:
    body = {"state": r.state, "expected_version": r.expected_version}
    return int(http.call(r, "PUT", _in(r, "state"), body=body)["version"])


def _load_state(http: HttpBackend, r: rq.LoadState) -> StateSnapshot | None:
    found = http.maybe(r, "GET", _in(r, "state"))
    return None if found is None else StateSnapshot.model_validate(found)


def _save_full(http: HttpBackend, r: rq.SaveFull) -> StateSnapshot:
    body = {
        "messages": [_wire(m) for m in r.messages],
        "state": r.state,
        "expected_seq": r.expected_seq,
        "keep_state": r.keep_state,
    }
    return StateSnapshot.model_validate(http.call(r, "POST", _in(r, "full"), body=body))


def _load_full(http: HttpBackend, r: rq.LoadFull) -> FullSession:
    query = _query(since_compaction=r.since_compaction, last=r.last)
    full = http.call(r, "GET", _in(r, "full"), query=query)
    return FullSession(
        session=Session.model_validate(full["session"]),
        messages=_records(full["messages"]),
        state=None if full.get("state") is None else StateSnapshot.model_validate(full["state"]),
    )


def _save_interrupt(http: HttpBackend, r: rq.SaveInterrupt) -> None:
    http.call(r, "PUT", _in(r, "interrupt"), body={"interrupt": r.interrupt})


def _load_interrupt(http: HttpBackend, r: rq.LoadInterrupt) -> dict[str, Any] | None:
    found = http.maybe(r, "GET", _in(r, "interrupt"))
    return None if found is None else cast(dict[str, Any], found["interrupt"])


def _clear_interrupt(http: HttpBackend, r: rq.ClearInterrupt) -> None:
    http.call(r, "DELETE", _in(r, "interrupt"))


def _save_records(http: HttpBackend, r: rq.SaveRecords) -> None:
    http.call(r, "PUT", _in(r, "records", r.kind), body={"records": r.records})


def _load_records(http: HttpBackend, r: rq.LoadRecords) -> list[Any]:
    return cast(list[Any], http.call(r, "GET", _in(r, "records", r.kind))["records"])


def _checkpoint_path(r: rq.SaveCheckpoint | rq.LoadCheckpoint | rq.DeleteCheckpoint) -> str:
    return _path("checkpoints", r.scope, r.key)


def _save_checkpoint(http: HttpBackend, r: rq.SaveCheckpoint) -> Checkpoint:
    body = {"data": r.data, "ttl_seconds": int(r.ttl.total_seconds())}
    return Checkpoint.model_validate(http.call(r, "PUT", _checkpoint_path(r), body=body))


def _load_checkpoint(http: HttpBackend, r: rq.LoadCheckpoint) -> Checkpoint | None:
    found = http.maybe(r, "GET", _checkpoint_path(r))
    return None if found is None else Checkpoint.model_validate(found)


def _delete_checkpoint(http: HttpBackend, r: rq.DeleteCheckpoint) -> None:
    http.call(r, "DELETE", _checkpoint_path(r))


# -- artifacts --------------------------------------------------------------------------------------
def _versions(items: list[Any]) -> list[ArtifactVersion]:
    return [ArtifactVersion.model_validate(v) for v in items]


def _spooled(data: Any) -> tuple[IO[bytes], int, str]:
    """Artifact data (bytes, a stream, chunks) in a temporary file read back from its start, with its size
    and SHA-256: at most SPOOL_BYTES of it in memory at any time."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 (closed by the caller)
    digest, size = hashlib.sha256(), 0
    if isinstance(data, bytes):
        spool.write(data)
        digest.update(data)
        size = len(data)
    else:
        while chunk := read_chunk(data, CHUNK):
            spool.write(chunk)
            digest.update(chunk)
            size += len(chunk)
    spool.seek(0)
    return cast(IO[bytes], spool), size, digest.hexdigest()


def _put_artifact(http: HttpBackend, r: rq.PutArtifact) -> ArtifactVersion:
    """Small data without metadata in one request; anything else through a presigned upload pinned to its
    size and SHA-256 (S3 refuses other bytes), streamed from a spool file, then confirmed."""
    spool, size, sha256 = _spooled(r.data)
    with spool:
        if size <= INLINE_ARTIFACT_BYTES and not r.metadata:
            headers = {"Content-Type": r.content_type}
            stored = http.call(r, "PUT", _in(r, "artifacts", r.name), raw=spool.read(), headers=headers)
            return ArtifactVersion.model_validate(stored)
        body = {"name": r.name, "content_type": r.content_type, "metadata": r.metadata, "size": size, "sha256": sha256}
        upload = PresignedUpload.model_validate(http.call(r, "POST", _in(r, "artifact-uploads"), body=body))
        headers = {**upload.headers, "Content-Length": str(size)}
        put = http.send("PUT", upload.url, raw=spool, headers=headers, authorized=False)
    if put.status >= 300:
        raise StoreUnavailable(f"the artifact upload of {r.name!r} was refused by storage (HTTP {put.status})")
    confirmed = http.call(r, "POST", _in(r, "artifact-uploads", upload.upload_id, "confirm"), body={"name": r.name})
    return ArtifactVersion.model_validate(confirmed)


def _download_url(
    http: HttpBackend, r: rq.InSession[Any], name: str, version: int | None, expires_in: int | None = None
) -> str | None:
    query = _query(version=version, expires_in=expires_in)
    reply = http.check(http.send("GET", _in(r, "artifacts", name), query=query), r, absent=True)
    if reply is None:
        return None
    location = {k.lower(): v for k, v in reply.headers.items()}.get("location")
    if reply.status != 302 or not location:
        raise StoreError(f"the API answered a download of {name!r} with HTTP {reply.status}, not a redirect")
    return location


def _get_artifact(http: HttpBackend, r: rq.GetArtifact) -> bytes | None:
    url = _download_url(http, r, r.name, r.version)
    if url is None:
        return None
    got = http.send("GET", url, authorized=False)
    if got.status != 200:
        raise StoreUnavailable(f"storage answered the download of {r.name!r} with HTTP {got.status}")
    return got.body


def _open_artifact(http: HttpBackend, r: rq.OpenArtifact) -> ArtifactReader | None:
    """The version's record (its size and SHA-256, which the reader checks), then its bytes as they
    arrive from storage: the version is named in the download, so a newer one cannot slip in between."""
    found = http.maybe(r, "GET", _in(r, "artifacts", r.name, "versions"))
    versions = _versions(found["items"]) if found else []
    chosen = [v for v in versions if r.version is None or v.version == r.version]
    if not chosen:
        return None
    version = chosen[-1]
    url = _download_url(http, r, r.name, version.version)
    if url is None:
        return None
    answer = http.open("GET", url, authorized=False)
    if answer.status != 200:
        answer.close()
        raise StoreUnavailable(f"storage answered the download of {r.name!r} with HTTP {answer.status}")
    return ArtifactReader(version, answer.read, answer.close)


def _presign(http: HttpBackend, r: rq.PresignArtifact) -> str:
    """GET: the download's presigned URL for `expires_in`; PUT: a presigned upload's URL (confirm it with
    `confirm_artifact_upload`, as on every backend)."""
    p = r.presign
    if p.method == "PUT":
        return _presign_upload(http, rq.PresignArtifactUpload(session_id=r.session_id, owner=r.owner, presign=p)).url
    url = _download_url(http, r, p.name, p.version, p.expires_in)
    if url is None:
        raise ArtifactNotFound(r.session_id, p.name, p.version)
    return url


def _presign_upload(http: HttpBackend, r: rq.PresignArtifactUpload) -> PresignedUpload:
    p = r.presign
    body = {
        "name": p.name,
        "content_type": p.content_type,
        "metadata": p.metadata,
        "expires_in": p.expires_in,
        "size": p.size,
        "max_size": p.max_size or None,
        "sha256": p.sha256,
    }
    return PresignedUpload.model_validate(http.call(r, "POST", _in(r, "artifact-uploads"), body=body))


def _confirm(http: HttpBackend, r: rq.ConfirmArtifactUpload) -> ArtifactVersion:
    path = _in(r, "artifact-uploads", r.upload, "confirm")
    return ArtifactVersion.model_validate(http.call(r, "POST", path, body={"name": r.name}))


def _list_artifacts(http: HttpBackend, r: rq.ListArtifacts) -> list[ArtifactVersion]:
    return _versions(http.call(r, "GET", _in(r, "artifacts"))["items"])


def _artifact_versions(http: HttpBackend, r: rq.ListArtifactVersions) -> list[ArtifactVersion]:
    return _versions(http.call(r, "GET", _in(r, "artifacts", r.name, "versions"))["items"])


def _delete_artifact(http: HttpBackend, r: rq.DeleteArtifact) -> None:
    http.call(r, "DELETE", _in(r, "artifacts", r.name))


# -- traces -----------------------------------------------------------------------------------------
def _append_traces(http: HttpBackend, r: rq.AppendTraceEvents) -> int:
    return int(http.call(r, "POST", _in(r, "traces", r.run_id), body={"events": r.events})["batch"])


def _append_trace_runs(http: HttpBackend, r: rq.AppendTraceRuns) -> dict[str, int]:
    """The API appends one run at a time: one request per run."""
    return {
        run_id: _append_traces(
            http, rq.AppendTraceEvents(session_id=r.session_id, owner=r.owner, run_id=run_id, events=events)
        )
        for run_id, events in r.runs.items()
    }


def _load_traces(http: HttpBackend, r: rq.LoadTraceEvents) -> list[dict[str, Any]]:
    found = http.call(r, "GET", _in(r, "traces"), query=_query(run_id=r.run_id))
    return cast(list[dict[str, Any]], found["items"])


def _runs(http: HttpBackend, r: rq.ListTraceRuns) -> list[str]:
    return cast(list[str], http.call(r, "GET", _in(r, "trace-runs"))["items"])


ROUTES: dict[type[rq.Request[Any]], Callable[[HttpBackend, Any], Any]] = {
    rq.CreateSession: _create,
    rq.GetSession: _get,
    rq.ListSessions: _list,
    rq.UpdateSession: _update,
    rq.DeleteSession: _delete,
    rq.ForkSession: _fork,
    rq.RewindSession: _rewind,
    rq.ListBranches: _branches,
    rq.RestoreBranch: _restore,
    rq.DeleteBranch: _delete_branch,
    rq.Search: _search,
    rq.HealthCheck: _health,
    rq.AppendMessages: _append,
    rq.ListMessages: _messages,
    rq.LastMessages: _last,
    rq.GetMessage: _one,
    rq.UpdateUsage: _usage,
    rq.MarkCompaction: _mark,
    rq.GetLatestCompaction: _compaction,
    rq.SaveState: _save_state,
    rq.LoadState: _load_state,
    rq.SaveFull: _save_full,
    rq.LoadFull: _load_full,
    rq.SaveInterrupt: _save_interrupt,
    rq.LoadInterrupt: _load_interrupt,
    rq.ClearInterrupt: _clear_interrupt,
    rq.SaveRecords: _save_records,
    rq.LoadRecords: _load_records,
    rq.SaveCheckpoint: _save_checkpoint,
    rq.LoadCheckpoint: _load_checkpoint,
    rq.DeleteCheckpoint: _delete_checkpoint,
    rq.PutArtifact: _put_artifact,
    rq.GetArtifact: _get_artifact,
    rq.OpenArtifact: _open_artifact,
    rq.PresignArtifact: _presign,
    rq.PresignArtifactUpload: _presign_upload,
    rq.ConfirmArtifactUpload: _confirm,
    rq.ListArtifacts: _list_artifacts,
    rq.ListArtifactVersions: _artifact_versions,
    rq.DeleteArtifact: _delete_artifact,
    rq.AppendTraceEvents: _append_traces,
    rq.AppendTraceRuns: _append_trace_runs,
    rq.LoadTraceEvents: _load_traces,
    rq.ListTraceRuns: _runs,
}
HttpBackend.supports = EVERY_OPERATION & {r.operation for r in ROUTES}
