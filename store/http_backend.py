"""A backend that carries each request to a deployed (or local) HTTP API: `SessionStore(backend=
HttpBackend(url, token))` is a store whose every call is one or two HTTPS requests to the stack's API,
with the same results and typed errors as a store on the tables. The owner is the token's subject:
session ids are the caller's own names (the API scopes them), and an `owner=` given to a call is not sent.

Operations the API does not offer (`pop_message`, `open_artifact`, `reclaim`) raise InvalidInput, naming
the operation. Standard library only (urllib): no extra."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast
from urllib.parse import quote, urlencode, urlsplit

from store import codec
from store import requests as rq
from store.backend import Backend
from store.conversation.model import VIEW_FIELD
from store.errors import (
    ArtifactNotFound,
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
    ArtifactVersion,
    Checkpoint,
    FullSession,
    MessageRecord,
    Page,
    PresignedUpload,
    SearchHits,
    Session,
    SessionHit,
    StateSnapshot,
)
from store.streams import drain

R = TypeVar("R")
INLINE_ARTIFACT_BYTES = 4 * 1024 * 1024  # the API's inline upload limit; larger ones go through a presigned PUT
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return codec.parse(self.body, "the API's answer", max_depth=codec.MAX_DEPTH + 8) if self.body else None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are answers here (a download's presigned URL), never followed with the bearer token."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


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


class HttpBackend(Backend):
    """Requests to the API at `url` with `token` (a bearer JWT whose `sub` is the owner)."""

    name = "http"

    def __init__(self, url: str, token: str | None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        split = urlsplit(url)
        if split.scheme not in ("http", "https") or not split.netloc:
            raise InvalidInput(f"the API's URL must be http(s)://host[:port][/stage], not {url!r}")
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._opener = urllib.request.build_opener(_NoRedirect)

    # -- transport -------------------------------------------------------------------------------
    def send(
        self,
        method: str,
        path: str,
        *,
        query: str = "",
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        authorized: bool = True,
    ) -> Reply:
        """One request; the reply whatever its status (errors are read by `check`). StoreUnavailable when
        the API cannot be reached or does not answer in time."""
        url = (self.url + path if authorized else path) + (f"?{query}" if query else "")
        sent = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        if authorized and self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=data, method=method, headers=sent)
        try:
            with self._opener.open(request, timeout=self.timeout) as answer:
                return Reply(answer.status, dict(answer.headers.items()), answer.read())
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, dict(exc.headers.items()), exc.read())
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreUnavailable(f"the API at {self.url} did not answer: {reason}") from None

    def check(self, reply: Reply, request: rq.Request[Any], *, absent: bool = False) -> Reply | None:
        """The reply when it succeeded; None for a 404 where absence is an answer (`absent`); otherwise the
        typed error the API's code stands for, with the API's message."""
        if reply.status < 400:
            return reply
        try:
            error = reply.json() or {}
            code, message = str(error.get("code", "")), str(error.get("message", ""))
        except (ValueError, AttributeError):
            code, message = "", reply.body[:200].decode("utf-8", "replace")
        if absent and reply.status == 404:
            return None
        raise _error(request, reply.status, code, message or f"HTTP {reply.status}")

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
        route = ROUTES.get(type(request))
        if route is None:
            raise InvalidInput(f"{request.operation} is not offered by the HTTP API; use the store on its tables")
        return cast(R, route(self, request))


def _error(request: rq.Request[Any], status: int, code: str, message: str) -> StoreError:
    """The store's exception for the API's error `code` (the reverse of the API's table)."""
    sid = str(getattr(request, "session_id", ""))
    if code == "session_not_found":
        return SessionNotFound(sid)
    if code == "session_exists":
        return SessionExists(sid)
    if code == "message_not_found":
        return MessageNotFound(sid, str(getattr(request, "message_id", "")))
    if code == "artifact_not_found":
        return ArtifactNotFound(sid, str(getattr(request, "name", "")), getattr(request, "version", None))
    if code == "conflict" or status == 409:
        return Conflict(message)
    if code == "payload_too_large" or status == 413:
        return PayloadTooLarge(message)
    if status in (400, 404, 415, 422) or code in ("invalid_input", "invalid_request"):
        return InvalidInput(message)
    if status in (401, 403):
        return InvalidInput(f"the API refused the token: {message}")
    if status >= 500:
        return StoreUnavailable(f"the API answered {status}: {message}")
    return StoreError(message)


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
def _record(item: Any) -> MessageRecord:
    """A message as the API sent it, without the canonical view the API adds (no stored message has one)."""
    if isinstance(item, dict):
        item = {k: v for k, v in item.items() if k != VIEW_FIELD}
    return MessageRecord.model_validate(item)


def _records(items: list[Any]) -> list[MessageRecord]:
    return [_record(m) for m in items]


def _append(http: HttpBackend, r: rq.AppendMessages) -> list[MessageRecord]:
    body: dict[str, Any] = {"messages": [m.model_dump(mode="json", exclude_none=True) for m in r.messages]}
    if r.expected_seq is not None:
        body["expected_seq"] = r.expected_seq
    headers = {"Idempotency-Key": r.idempotency_key} if r.idempotency_key else None
    return _records(http.call(r, "POST", _in(r, "messages"), body=body, headers=headers)["items"])


def _messages(http: HttpBackend, r: rq.ListMessages) -> Page[MessageRecord]:
    q = r.query
    query = _query(
        after_seq=q.after_seq,
        before_seq=q.before_seq,
        limit=q.limit if q.limit is not None else 1000,
        newest_first=q.newest_first,
        since_compaction=q.since_compaction,
        roles=q.roles,
        cursor=q.cursor,
    )
    page = http.call(r, "GET", _in(r, "messages"), query=query)
    return Page[MessageRecord](items=_records(page["items"]), next_cursor=page.get("next_cursor"))


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
        "messages": [m.model_dump(mode="json", exclude_none=True) for m in r.messages],
        "state": r.state,
        "expected_seq": r.expected_seq,
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


def _put_artifact(http: HttpBackend, r: rq.PutArtifact) -> ArtifactVersion:
    data = drain(r.data)
    if len(data) <= INLINE_ARTIFACT_BYTES and not r.metadata:
        headers = {"Content-Type": r.content_type}
        stored = http.call(r, "PUT", _in(r, "artifacts", r.name), raw=data, headers=headers)
        return ArtifactVersion.model_validate(stored)
    body = {"name": r.name, "content_type": r.content_type, "metadata": r.metadata, "size": len(data)}
    upload = PresignedUpload.model_validate(http.call(r, "POST", _in(r, "artifact-uploads"), body=body))
    put = http.send("PUT", upload.url, raw=data, headers=upload.headers, authorized=False)
    if put.status >= 300:
        raise StoreUnavailable(f"the artifact upload of {r.name!r} was refused by storage (HTTP {put.status})")
    confirmed = http.call(r, "POST", _in(r, "artifact-uploads", upload.upload_id, "confirm"), body={"name": r.name})
    return ArtifactVersion.model_validate(confirmed)


def _download_url(http: HttpBackend, r: rq.InSession[Any], name: str, version: int | None) -> str | None:
    reply = http.check(http.send("GET", _in(r, "artifacts", name), query=_query(version=version)), r, absent=True)
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


def _presign(http: HttpBackend, r: rq.PresignArtifact) -> str:
    url = _download_url(http, r, r.presign.name, r.presign.version)
    if url is None:
        raise ArtifactNotFound(r.session_id, r.presign.name, r.presign.version)
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
