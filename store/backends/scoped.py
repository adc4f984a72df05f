"""An owner's view of any backend, as the HTTP API presents it (docs/decisions.md, "One id model"): every
session the owner owns, named by the id the owner knows it by. A session made over the API or by an adapter
lives in the owner's namespace (`scoped_id`: two owners may both have a "chat-42") and is named by its local
id; a session the library made for the owner under an id of its own is named by that id, as the library
returned it. An id in a request names the session of the owner's namespace when there is one, else the
owner's session of that store id (another owner's is absent either way); new sessions (create, fork) go in
the namespace. The CLI uses it on the tables directly, so that `agent-store --owner alice sessions show
chat-42` names the session the API calls chat-42 for alice; the API's handlers use `localized` on answers."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from store import requests as rq
from store.artifact_reader import ArtifactReader
from store.backend import Backend
from store.core.rules import FORKED_FROM
from store.core.scoped_ids import MAX_LOCAL_ID, VERBATIM, local_id, owner_tag, scoped_id, unscoped_id
from store.core.validation import ident
from store.errors import InvalidInput, SessionExists, SessionNotFound, StoreError
from store.models import Branches, Checkpoint, FullSession, SearchHits, Session

M = TypeVar("M")
CHECKPOINTS = (rq.SaveCheckpoint, rq.LoadCheckpoint, rq.DeleteCheckpoint)
R = TypeVar("R")


def localized(owner: str, value: M) -> M:
    """`value` (a model, or a list of them, nested) with every session id of `owner`'s namespace as the owner
    names it; ids outside the namespace are left as they are."""
    return cast(M, _localized(owner, value))


def scrubbed(owner: str, message: str) -> str:
    """A message (an error's) with `owner`'s namespace taken off the ids it names."""
    return message.replace(owner_tag(owner) + VERBATIM, "")


def _localized(owner: str, value: Any) -> Any:
    if isinstance(value, ArtifactReader):  # the reader stays; the version it reports is the owner's
        value.version = _localized(owner, value.version)
        return value
    if isinstance(value, list):
        return [_localized(owner, v) for v in value]
    if not isinstance(value, BaseModel):
        return value
    changes: dict[str, Any] = {}
    for name in type(value).model_fields:
        field = getattr(value, name)
        if name == "session_id" and isinstance(field, str):
            changes[name] = unscoped_id(owner, field) or field
        elif isinstance(field, BaseModel | list):
            changes[name] = _localized(owner, field)
    if isinstance(value, Session):
        changes.update(_session_ids(owner, value))
    if isinstance(value, Checkpoint) and value.scope == "session":
        changes["key"] = unscoped_id(owner, value.key) or value.key
    return value.model_copy(update=changes) if changes else value


def _session_ids(owner: str, session: Session) -> dict[str, Any]:
    """A session's id, and its fork's source in its metadata, as the owner names them."""
    changes: dict[str, Any] = {"id": unscoped_id(owner, session.id) or session.id}
    source = session.metadata.get(FORKED_FROM)
    if isinstance(source, dict) and isinstance(source.get("session_id"), str):
        local = unscoped_id(owner, source["session_id"])
        if local is not None:  # a fork's source, as the owner names it
            changes["metadata"] = {**session.metadata, FORKED_FROM: {**source, "session_id": local}}
    return changes


class ScopedBackend(Backend):
    """`inner`, seen by `owner`: every request is the owner's (its `owner` set: another owner's session is
    absent), a session id names the owner's session of its namespace, or else the owner's session of that
    store id (see the module docstring), and results name sessions as the owner knows them. With
    `scope_ids=False` the requests are still the owner's, but ids are taken and shown as stored."""

    def __init__(self, inner: Backend, owner: str, *, scope_ids: bool = True) -> None:
        if not isinstance(inner, Backend):
            raise InvalidInput("ScopedBackend wraps a sync backend (a SessionStore's), not an async one")
        self.inner = inner
        self.owner = owner
        self.scope_ids = scope_ids
        self.name = f"{inner.name} as {owner}" + ("" if scope_ids else " (ids as stored)")
        self.supports = inner.supports

    def execute(self, request: rq.Request[R]) -> R:
        if isinstance(request, rq.LoadFull) and request.with_states:
            return cast(R, self._load_full(request))
        return self._execute(request)

    def _load_full(self, request: rq.LoadFull) -> FullSession:
        """`load_full` whose other sessions are the owner's too, each named as the owner names it: every store
        id it may be is read in the same transaction, and the first that exists answers for it (as a name is
        resolved for any other call), its state and the session itself alike."""
        named = {
            other: self._candidates(other, "with_states") if self.scope_ids else [other]
            for other, _ in request.with_states
        }
        store_ids = dict.fromkeys(c for ids in named.values() for c in ids)
        full = self._execute(replace(request, with_states=tuple((c, None) for c in store_ids)))
        found = full.sessions
        chosen = {other: next((c for c in ids if found.get(c) is not None), None) for other, ids in named.items()}
        full.states = {other: full.states[c] if c else None for other, c in chosen.items()}
        full.sessions = {other: localized(self.owner, full.sessions[c]) if c else None for other, c in chosen.items()}
        return full

    def _execute(self, request: rq.Request[R]) -> R:
        names = {f.name for f in fields(request)}
        changes: dict[str, Any] = {}
        if "owner" in names:
            changes["owner"] = self.owner
        if not self.scope_ids:
            return self.inner.execute(replace(request, **changes))
        if isinstance(request, rq.CreateSession):
            return cast(R, self._create(replace(request, **changes)))
        if isinstance(request, rq.ForkSession):
            changes["new_session_id"] = scoped_id(self.owner, local_id(request.new_session_id, "new_session_id"))
        field = "key" if isinstance(request, CHECKPOINTS) else "session_id"
        named: str | None = None
        if isinstance(request, rq.InSession) or (isinstance(request, CHECKPOINTS) and request.scope == "session"):
            named = ident(getattr(request, field), field)
        try:
            if named is None:
                return cast(R, self._mine(self.inner.execute(replace(request, **changes))))
            if isinstance(request, rq.DeleteSession):  # idempotent, so it says nothing of which id it found
                return cast(R, self._mine(self.inner.execute(replace(request, session_id=self._which(named)))))
            return self._first_found(request, changes, field, named)
        except StoreError as exc:  # ids in the message as the owner names them
            exc.args = (scrubbed(self.owner, str(exc)),)
            if isinstance(getattr(exc, "session_id", None), str):
                exc.session_id = unscoped_id(self.owner, exc.session_id) or exc.session_id  # type: ignore[attr-defined]
            raise

    def _first_found(self, request: rq.Request[R], changes: dict[str, Any], field: str, named: str) -> R:
        """The request run on the first of the ids `named` may be (`_candidates`) that names a session: a
        SessionNotFound (or a GetSession's None) moves on to the next, the last one's stands."""
        ids = self._candidates(named, field)
        for at, store_id in enumerate(ids):
            last = at == len(ids) - 1
            try:
                result = self.inner.execute(replace(request, **changes, **{field: store_id}))
            except SessionNotFound:
                if last:
                    raise
                continue
            if result is None and isinstance(request, rq.GetSession) and not last:
                continue
            return cast(R, self._mine(result))
        raise AssertionError("unreachable: a session id has at least one candidate")

    def _candidates(self, named: str, field: str) -> list[str]:
        """The store ids `named` may be, first to last: the owner's namespace's (when the id may be a local
        one), then the store id itself."""
        if len(named) > MAX_LOCAL_ID:
            return [named]
        return [scoped_id(self.owner, local_id(named, field)), named]

    def _which(self, named: str) -> str:
        """The store id of the owner's session `named` (its namespace's when neither exists)."""
        candidates = self._candidates(named, "session_id")
        for store_id in candidates:
            if self.inner.execute(rq.GetSession(session_id=store_id, owner=self.owner)) is not None:
                return store_id
        return candidates[0]

    def _create(self, request: rq.CreateSession) -> Session:
        """A new session in the owner's namespace; SessionExists when the owner has a session by that name
        already (in the namespace, or one the library made under that id)."""
        local = local_id(request.session_id)
        if self.inner.execute(rq.GetSession(session_id=local, owner=self.owner)) is not None:
            raise SessionExists(local)
        try:
            made = self.inner.execute(replace(request, session_id=scoped_id(self.owner, local)))
        except SessionExists:
            raise SessionExists(local) from None
        return cast(Session, self._mine(made))

    def _mine(self, result: Any) -> Any:
        if isinstance(result, SearchHits):
            return SearchHits(
                localized(self.owner, list(result)),
                next_cursor=result.next_cursor,
                sessions_searched=result.sessions_searched,
                messages_searched=result.messages_searched,
            )
        if isinstance(result, Branches):
            return Branches(localized(self.owner, list(result)), next_cursor=result.next_cursor)
        return localized(self.owner, result)

    def close(self) -> None:
        self.inner.close()
