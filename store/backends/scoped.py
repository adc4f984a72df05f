"""An owner's namespace over any backend, as the HTTP API presents it: session ids in requests are the
owner's own names (scoped with `scoped_id` before they reach the store) and ids in results are those names
again (`localized`). The CLI uses it on the tables directly, so that `agent-store --owner alice sessions show
chat-42` names the session the API calls chat-42 for alice; the API's handlers use `localized` on answers."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from store import requests as rq
from store.artifact_reader import ArtifactReader
from store.backend import Backend
from store.core.rules import FORKED_FROM
from store.core.scoped_ids import VERBATIM, local_id, owner_tag, scoped_id, unscoped_id
from store.errors import InvalidInput, StoreError
from store.models import Branches, Checkpoint, Page, SearchHits, Session

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
        changes["id"] = unscoped_id(owner, value.id) or value.id
        source = value.metadata.get(FORKED_FROM)
        if isinstance(source, dict) and isinstance(source.get("session_id"), str):
            local = unscoped_id(owner, source["session_id"])
            if local is not None:  # a fork's source, as the owner names it
                changes["metadata"] = {**value.metadata, FORKED_FROM: {**source, "session_id": local}}
    if isinstance(value, Checkpoint) and value.scope == "session":
        changes["key"] = unscoped_id(owner, value.key) or value.key
    return value.model_copy(update=changes) if changes else value


class ScopedBackend(Backend):
    """`inner`, seen by `owner`: every request is the owner's (its `owner` set: another owner's session is
    absent), its session ids scoped, and sessions outside the owner's namespace (made by the library under
    unscoped ids) are not listed. With `scope_ids=False` the requests are still the owner's, but ids are
    taken and shown as stored (the sessions the library made under ids of its own)."""

    def __init__(self, inner: Backend, owner: str, *, scope_ids: bool = True) -> None:
        if not isinstance(inner, Backend):
            raise InvalidInput("ScopedBackend wraps a sync backend (a SessionStore's), not an async one")
        self.inner = inner
        self.owner = owner
        self.scope_ids = scope_ids
        self.name = f"{inner.name} as {owner}" + ("" if scope_ids else " (ids as stored)")
        self.supports = inner.supports

    def execute(self, request: rq.Request[R]) -> R:
        names = {f.name for f in fields(request)}
        changes: dict[str, Any] = {}
        if "owner" in names:
            changes["owner"] = self.owner
        if not self.scope_ids:
            return self.inner.execute(replace(request, **changes))
        if isinstance(request, rq.InSession | rq.CreateSession):
            changes["session_id"] = scoped_id(self.owner, local_id(request.session_id))
        if isinstance(request, rq.ForkSession):
            changes["new_session_id"] = scoped_id(self.owner, local_id(request.new_session_id, "new_session_id"))
        if isinstance(request, CHECKPOINTS) and request.scope == "session":
            changes["key"] = scoped_id(self.owner, local_id(request.key, "key"))
        try:
            result = self.inner.execute(replace(request, **changes))
        except StoreError as exc:  # ids in the message as the owner names them
            exc.args = (scrubbed(self.owner, str(exc)),)
            if isinstance(getattr(exc, "session_id", None), str):
                exc.session_id = unscoped_id(self.owner, exc.session_id) or exc.session_id  # type: ignore[attr-defined]
            raise
        return cast(R, self._mine(result))

    def _mine(self, result: Any) -> Any:
        if isinstance(result, SearchHits):
            hits = [h for h in result if unscoped_id(self.owner, h.session_id) is not None]
            return SearchHits(
                localized(self.owner, hits),
                next_cursor=result.next_cursor,
                sessions_searched=result.sessions_searched,
                messages_searched=result.messages_searched,
            )
        if isinstance(result, Branches):
            return Branches(localized(self.owner, list(result)), next_cursor=result.next_cursor)
        if isinstance(result, Page) and all(isinstance(s, Session) for s in result.items):
            mine = [s for s in result.items if unscoped_id(self.owner, s.id) is not None]
            return result.model_copy(update={"items": localized(self.owner, mine)})
        return localized(self.owner, result)

    def close(self) -> None:
        self.inner.close()
