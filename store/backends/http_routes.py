"""The HTTP backend's routes: how each operation it offers goes over the API, one function per operation,
named as the operation (`HttpBackend` finds a request's route by its `operation`; an operation with no
function here is one the API does not offer, refused at once)."""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from datetime import datetime
from typing import IO, Any, Protocol, cast
from urllib.parse import quote, urlencode

from store import requests as rq
from store.artifact_reader import CHUNK, ArtifactReader
from store.backends.http_transport import Answer, Body, Reply
from store.conversation.model import VIEW_FIELD
from store.core.streams import read_chunk
from store.errors import ArtifactNotFound, StoreError, StoreUnavailable
from store.models import (
    ArtifactVersion,
    Branch,
    Branches,
    Checkpoint,
    FullSession,
    MemoryHits,
    MemoryItem,
    Message,
    MessageHits,
    MessageRecord,
    Page,
    PresignedUpload,
    SearchHits,
    Session,
    SessionHit,
    StateSnapshot,
)


class HttpBackend(Protocol):
    """What a route asks of the HTTP backend (`store.backends.http.HttpBackend` is one): a JSON call, one whose
    404 is None (`maybe`), a raw request read whole (`send`) or unread (`open`), and an answer's error check."""

    def call(self, request: rq.Request[Any], method: str, path: str, **kwargs: Any) -> Any: ...

    def maybe(self, request: rq.Request[Any], method: str, path: str, **kwargs: Any) -> Any: ...

    def send(self, method: str, path: str, **kwargs: Any) -> Reply: ...

    def check(self, reply: Reply, request: rq.Request[Any], *, absent: bool = False) -> Reply | None: ...

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
    ) -> Answer: ...


INLINE_ARTIFACT_BYTES = 4 * 1024 * 1024  # the API's inline upload limit; larger ones go through a presigned PUT
SPOOL_BYTES = CHUNK  # an upload larger than this waits on disk, not in memory, while it is hashed


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


def _in(request: rq.InSession[Any], *rest: str) -> str:
    return _path("sessions", request.session_id, *rest)


# -- sessions ---------------------------------------------------------------------------------------
def create_session(http: HttpBackend, r: rq.CreateSession) -> Session:
    seconds = 0 if r.retention is None else int(r.retention.total_seconds())
    body = {"session_id": r.session_id, "title": r.title, "model": r.model, "metadata": r.metadata}
    return Session.model_validate(http.call(r, "POST", "/sessions", body={**body, "retention_seconds": seconds}))


def get_session(http: HttpBackend, r: rq.GetSession) -> Session | None:
    found = http.maybe(r, "GET", _in(r))
    return None if found is None else Session.model_validate(found)


def list_sessions(http: HttpBackend, r: rq.ListSessions) -> Page[Session]:
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


def update_session(http: HttpBackend, r: rq.UpdateSession) -> Session:
    body = {k: v for k, v in (("title", r.title), ("model", r.model), ("metadata", r.metadata)) if v is not rq.UNSET}
    return Session.model_validate(http.call(r, "PATCH", _in(r), body=body))


def delete_session(http: HttpBackend, r: rq.DeleteSession) -> None:
    http.call(r, "DELETE", _in(r))


def search(http: HttpBackend, r: rq.Search) -> SearchHits:
    found = http.call(r, "GET", "/search", query=_query(q=r.query, limit=r.limit, cursor=r.cursor))
    return SearchHits(
        [SessionHit.model_validate(h) for h in found["items"]],
        next_cursor=found.get("next_cursor"),
        sessions_searched=found.get("sessions_searched", 0),
        messages_searched=found.get("messages_searched", 0),
    )


def health_check(http: HttpBackend, r: rq.HealthCheck) -> None:
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


def append_messages(http: HttpBackend, r: rq.AppendMessages) -> list[MessageRecord]:
    body: dict[str, Any] = {"messages": [_wire(m) for m in r.messages]}
    if r.expected_seq is not None:
        body["expected_seq"] = r.expected_seq
    headers = {"Idempotency-Key": r.idempotency_key} if r.idempotency_key else None
    return _records(http.call(r, "POST", _in(r, "messages"), body=body, headers=headers)["items"])


def list_messages(http: HttpBackend, r: rq.ListMessages) -> Page[MessageRecord]:
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


def fork_session(http: HttpBackend, r: rq.ForkSession) -> Session:
    body: dict[str, Any] = {"session_id": r.new_session_id, "at_seq": r.at_seq}
    for name in ("title", "metadata", "state"):
        if getattr(r, name) is not rq.UNSET:
            body[name] = getattr(r, name)
    return Session.model_validate(http.call(r, "POST", _in(r, "fork"), body=body))


def rewind_session(http: HttpBackend, r: rq.RewindSession) -> Session:
    body: dict[str, Any] = {"to_seq": r.to_seq, "branch": r.branch}
    if r.metadata is not rq.UNSET:
        body["metadata"] = r.metadata
    return Session.model_validate(http.call(r, "POST", _in(r, "rewind"), body=body))


def list_branches(http: HttpBackend, r: rq.ListBranches) -> Branches:
    page = http.call(r, "GET", _in(r, "branches"), query=_query(limit=r.limit, cursor=r.cursor))
    return Branches([Branch.model_validate(b) for b in page["items"]], next_cursor=page.get("next_cursor"))


def restore_branch(http: HttpBackend, r: rq.RestoreBranch) -> Session:
    body: dict[str, Any] = {"keep_as": r.keep_as}
    if r.metadata is not rq.UNSET:
        body["metadata"] = r.metadata
    return Session.model_validate(http.call(r, "POST", _in(r, "branches", r.branch, "restore"), body=body))


def delete_branch(http: HttpBackend, r: rq.DeleteBranch) -> None:
    http.call(r, "DELETE", _in(r, "branches", r.branch))


def last_messages(http: HttpBackend, r: rq.LastMessages) -> list[MessageRecord]:
    return _records(http.call(r, "GET", _in(r, "last-messages"), query=_query(n=r.n))["items"])


def get_message(http: HttpBackend, r: rq.GetMessage) -> MessageRecord | None:
    found = http.maybe(r, "GET", _in(r, "messages", r.message_id))
    return None if found is None else _record(found)


def update_usage(http: HttpBackend, r: rq.UpdateUsage) -> MessageRecord:
    body = {"usage": r.usage.model_dump(exclude_none=True)}
    return _record(http.call(r, "PUT", _in(r, "messages", r.message_id, "usage"), body=body))


def mark_compaction(http: HttpBackend, r: rq.MarkCompaction) -> MessageRecord:
    return _record(http.call(r, "POST", _in(r, "messages", r.message_id, "compaction")))


def get_latest_compaction(http: HttpBackend, r: rq.GetLatestCompaction) -> MessageRecord | None:
    found = http.maybe(r, "GET", _in(r, "compaction"))
    return None if found is None else _record(found)


# -- state ------------------------------------------------------------------------------------------
def save_state(http: HttpBackend, r: rq.SaveState) -> int:
    body = {"state": r.state, "expected_version": r.expected_version}
    return int(http.call(r, "PUT", _in(r, "state"), body=body)["version"])


def load_state(http: HttpBackend, r: rq.LoadState) -> StateSnapshot | None:
    found = http.maybe(r, "GET", _in(r, "state"))
    return None if found is None else StateSnapshot.model_validate(found)


def save_full(http: HttpBackend, r: rq.SaveFull) -> StateSnapshot:
    body = {
        "messages": [_wire(m) for m in r.messages],
        "state": r.state,
        "expected_seq": r.expected_seq,
        "keep_state": r.keep_state,
    }
    return StateSnapshot.model_validate(http.call(r, "POST", _in(r, "full"), body=body))


def load_full(http: HttpBackend, r: rq.LoadFull) -> FullSession:
    """Other sessions' states are read as the caller (the API's owner): another owner's is absent (None)."""
    others = [sid for sid, _ in r.with_states]
    query = _query(since_compaction=r.since_compaction, last=r.last, after_seq_at=r.after_seq_at, with_states=others)
    full = http.call(r, "GET", _in(r, "full"), query=query)
    states, sessions = full.get("states") or {}, full.get("sessions") or {}
    return FullSession(
        session=Session.model_validate(full["session"]),
        messages=_records(full["messages"]),
        state=None if full.get("state") is None else StateSnapshot.model_validate(full["state"]),
        states={sid: None if states.get(sid) is None else StateSnapshot.model_validate(states[sid]) for sid in others},
        sessions={sid: None if sessions.get(sid) is None else Session.model_validate(sessions[sid]) for sid in others},
    )


def save_interrupt(http: HttpBackend, r: rq.SaveInterrupt) -> None:
    http.call(r, "PUT", _in(r, "interrupt"), body={"interrupt": r.interrupt})


def load_interrupt(http: HttpBackend, r: rq.LoadInterrupt) -> dict[str, Any] | None:
    found = http.maybe(r, "GET", _in(r, "interrupt"))
    return None if found is None else cast(dict[str, Any], found["interrupt"])


def clear_interrupt(http: HttpBackend, r: rq.ClearInterrupt) -> None:
    http.call(r, "DELETE", _in(r, "interrupt"))


def save_records(http: HttpBackend, r: rq.SaveRecords) -> None:
    http.call(r, "PUT", _in(r, "records", r.kind), body={"records": r.records})


def load_records(http: HttpBackend, r: rq.LoadRecords) -> list[Any]:
    return cast(list[Any], http.call(r, "GET", _in(r, "records", r.kind))["records"])


def _checkpoint_path(r: rq.SaveCheckpoint | rq.LoadCheckpoint | rq.DeleteCheckpoint) -> str:
    return _path("checkpoints", r.scope, r.key)


def save_checkpoint(http: HttpBackend, r: rq.SaveCheckpoint) -> Checkpoint:
    body = {"data": r.data, "ttl_seconds": int(r.ttl.total_seconds())}
    return Checkpoint.model_validate(http.call(r, "PUT", _checkpoint_path(r), body=body))


def load_checkpoint(http: HttpBackend, r: rq.LoadCheckpoint) -> Checkpoint | None:
    found = http.maybe(r, "GET", _checkpoint_path(r))
    return None if found is None else Checkpoint.model_validate(found)


def delete_checkpoint(http: HttpBackend, r: rq.DeleteCheckpoint) -> None:
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


def put_artifact(http: HttpBackend, r: rq.PutArtifact) -> ArtifactVersion:
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


def get_artifact(http: HttpBackend, r: rq.GetArtifact) -> bytes | None:
    url = _download_url(http, r, r.name, r.version)
    if url is None:
        return None
    got = http.send("GET", url, authorized=False)
    if got.status != 200:
        raise StoreUnavailable(f"storage answered the download of {r.name!r} with HTTP {got.status}")
    return got.body


def open_artifact(http: HttpBackend, r: rq.OpenArtifact) -> ArtifactReader | None:
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


def presign_artifact(http: HttpBackend, r: rq.PresignArtifact) -> str:
    """GET: the download's presigned URL for `expires_in`; PUT: a presigned upload's URL (confirm it with
    `confirm_artifact_upload`, as on every backend)."""
    p = r.presign
    if p.method == "PUT":
        return presign_artifact_upload(
            http, rq.PresignArtifactUpload(session_id=r.session_id, owner=r.owner, presign=p)
        ).url
    url = _download_url(http, r, p.name, p.version, p.expires_in)
    if url is None:
        raise ArtifactNotFound(r.session_id, p.name, p.version)
    return url


def presign_artifact_upload(http: HttpBackend, r: rq.PresignArtifactUpload) -> PresignedUpload:
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


def confirm_artifact_upload(http: HttpBackend, r: rq.ConfirmArtifactUpload) -> ArtifactVersion:
    path = _in(r, "artifact-uploads", r.upload, "confirm")
    return ArtifactVersion.model_validate(http.call(r, "POST", path, body={"name": r.name}))


def list_artifacts(http: HttpBackend, r: rq.ListArtifacts) -> list[ArtifactVersion]:
    return _versions(http.call(r, "GET", _in(r, "artifacts"))["items"])


def list_artifact_versions(http: HttpBackend, r: rq.ListArtifactVersions) -> list[ArtifactVersion]:
    return _versions(http.call(r, "GET", _in(r, "artifacts", r.name, "versions"))["items"])


def delete_artifact(http: HttpBackend, r: rq.DeleteArtifact) -> None:
    http.call(r, "DELETE", _in(r, "artifacts", r.name))


# -- traces -----------------------------------------------------------------------------------------
def append_trace_events(http: HttpBackend, r: rq.AppendTraceEvents) -> int:
    return int(http.call(r, "POST", _in(r, "traces", r.run_id), body={"events": r.events})["batch"])


def append_trace_runs(http: HttpBackend, r: rq.AppendTraceRuns) -> dict[str, int]:
    """The API appends one run at a time: one request per run."""
    return {
        run_id: append_trace_events(
            http, rq.AppendTraceEvents(session_id=r.session_id, owner=r.owner, run_id=run_id, events=events)
        )
        for run_id, events in r.runs.items()
    }


def load_trace_events(http: HttpBackend, r: rq.LoadTraceEvents) -> list[dict[str, Any]]:
    found = http.call(r, "GET", _in(r, "traces"), query=_query(run_id=r.run_id))
    return cast(list[dict[str, Any]], found["items"])


def list_trace_runs(http: HttpBackend, r: rq.ListTraceRuns) -> list[str]:
    return cast(list[str], http.call(r, "GET", _in(r, "trace-runs"))["items"])


# -- long-term memory -------------------------------------------------------------------------------
def _labels(ns: tuple[str, ...] | None) -> str | None:
    return None if ns is None else json.dumps(list(ns))


def put_memory(http: HttpBackend, r: rq.PutMemory) -> MemoryItem:
    ttl = None if r.ttl is None else max(1, math.ceil(r.ttl.total_seconds()))
    index = list(r.index) if isinstance(r.index, tuple) else r.index
    body = {"namespace": list(r.namespace), "key": r.key, "value": r.value, "index": index, "ttl_seconds": ttl}
    return MemoryItem.model_validate(http.call(r, "POST", "/memories", body=body))


def get_memory(http: HttpBackend, r: rq.GetMemory) -> MemoryItem | None:
    query = _query(namespace=_labels(r.namespace), key=r.key, refresh_ttl=r.refresh_ttl)
    found = http.maybe(r, "GET", "/memories/item", query=query)
    return None if found is None else MemoryItem.model_validate(found)


def delete_memory(http: HttpBackend, r: rq.DeleteMemory) -> None:
    http.call(r, "DELETE", "/memories/item", query=_query(namespace=_labels(r.namespace), key=r.key))


def search_memories(http: HttpBackend, r: rq.SearchMemories) -> MemoryHits:
    query = _query(
        prefix=_labels(r.prefix) if r.prefix else None,
        q=r.query,
        mode=r.mode,
        filter=json.dumps(r.filter) if r.filter else None,
        limit=r.limit,
        cursor=r.cursor,
    )
    return MemoryHits.model_validate(http.call(r, "GET", "/memories/search", query=query))


def search_messages(http: HttpBackend, r: rq.SearchMessages | rq.SearchSessionMessages) -> MessageHits:
    query = _query(
        q=r.query,
        session_id=getattr(r, "session_id", None),
        mode=r.mode,
        limit=r.limit,
        cursor=r.cursor,
    )
    return MessageHits.model_validate(http.call(r, "GET", "/messages/search", query=query))


search_session_messages = search_messages


def list_namespaces(http: HttpBackend, r: rq.ListNamespaces) -> Page[tuple[str, ...]]:
    query = _query(
        prefix=_labels(r.prefix),
        suffix=_labels(r.suffix),
        max_depth=r.max_depth,
        limit=r.limit,
        cursor=r.cursor,
    )
    found = http.call(r, "GET", "/memories/namespaces", query=query)
    return Page[tuple[str, ...]](items=[tuple(ns) for ns in found["items"]], next_cursor=found.get("next_cursor"))


def forget_owner(http: HttpBackend, r: rq.ForgetOwner) -> bool:
    return bool(http.call(r, "DELETE", "/memories")["done"])


def save_owner_records(http: HttpBackend, r: rq.SaveOwnerRecords) -> None:
    http.call(r, "PUT", _path("owner", "records", r.kind), body={"records": r.records})


def load_owner_records(http: HttpBackend, r: rq.LoadOwnerRecords) -> list[Any]:
    return cast(list[Any], http.call(r, "GET", _path("owner", "records", r.kind))["records"])
