"""Many owners through backends that each serve one (the HTTP API's token, `ScopedBackend`'s owner): each
request goes to its owner's backend, as that owner's client would send it. A request that names no owner
goes to the owner of the session it names (the harness remembers who created which), so the library's
"no owner given" reads as "its owner asks"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from store import requests as rq
from store.backend import Backend

R = TypeVar("R")
DEFAULT_OWNER = "nobody-in-particular"  # who sends what names no owner and no known session


class Tenants(Backend):
    def __init__(self, name: str, backend_for: Callable[[str], Backend], owners: dict[str, str]) -> None:
        self.name = name
        self._backend_for = backend_for
        self._backends: dict[str, Backend] = {}
        self.owners = owners  # session id -> its owner, shared by every store over the same data
        self.supports = backend_for(DEFAULT_OWNER).supports

    def backend(self, owner: str) -> Backend:
        if owner not in self._backends:
            self._backends[owner] = self._backend_for(owner)
        return self._backends[owner]

    def owner_of(self, request: rq.Request[Any]) -> str:
        owner = getattr(request, "owner", None)
        if owner is None:
            sid = getattr(request, "session_id", None)
            if sid is None and getattr(request, "scope", None) == "session":
                sid = getattr(request, "key", None)
            owner = self.owners.get(sid) if isinstance(sid, str) else None
        return owner or DEFAULT_OWNER

    def execute(self, request: rq.Request[R]) -> R:
        owner = self.owner_of(request)
        result = self.backend(owner).execute(request)
        if isinstance(request, rq.CreateSession | rq.ForkSession):
            self.owners[getattr(result, "id", request.session_id)] = owner
        return result
