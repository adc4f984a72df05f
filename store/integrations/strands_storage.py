"""Strands' unified `Storage` contract (`strands.storage.Storage`: async `write`, `read`, `delete`, `list`,
`search` over bytes) on this store, for `SnapshotSessionManager` and Strands' other subsystems.

    from strands import Agent
    from strands.session import SnapshotSessionManager
    from store.integrations.strands import SessionStoreStorage

    storage = SessionStoreStorage(store, owner=user_id, retention=timedelta(days=30))
    agent = Agent(session_manager=SnapshotSessionManager("chat-42", storage=storage))
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import copy
import hashlib
import re
from collections.abc import Coroutine
from typing import Any, TypeVar

from strands.storage.search.keyword import KeywordSearchStrategy
from strands.storage.storage import _NAMESPACED
from strands.types.exceptions import StorageError

from store.async_session_store import AsyncSessionStore
from store.core.lru import Lru
from store.core.scoped_ids import scoped_id
from store.errors import SessionExists, SessionNotFound, StoreError
from store.integrations._calls import AnyStore, as_async, at_home, or_missing
from store.integrations.strands_ids import FRAMEWORK, session_store_id

T = TypeVar("T")

SESSIONS_NAMESPACE = "session/"
SHARED_KEYS = "strands-storage"
# keys Strands overwrites on every invocation (SnapshotSessionManager's latest snapshot of an agent or an
# orchestrator): kept as a record of the session (1 transaction a write), listed through an empty artifact
HOT_SUFFIX = "snapshot_latest.json"
IN_RECORDS = "application/vnd.agent-store.in-records"  # the content type of a hot key's listing artifact
HOT_KNOWN = 4096


class SessionStoreStorage:
    """Strands' unified `Storage` (async `write`, `read`, `delete`, `list`, `search` over bytes) on this
    store, for `SnapshotSessionManager` and Strands' other subsystems.

    A key under `session/<session id>/` is an artifact of that Strands session's store session (the one
    `StrandsSessionRepository` uses, in the owner's namespace), named by the rest of the key; any other
    key is an artifact of the owner's `strands-storage` session. So every write is a new artifact version
    (bytes in S3, streamed), a session's keys go with it when it is deleted or its `retention` runs out,
    and a session whose last key is deleted is deleted too. Keys follow Strands' own rules (no `..`, no
    backslash, runs of `/` collapsed) and the store's artifact names (at most 512 bytes).

    The key Strands overwrites on every invocation, an agent's or orchestrator's `snapshot_latest.json`, is
    kept instead as a record of the session (`save_records`: 1 transaction, its body compressed, in S3 only
    past an item's size), with an empty artifact of that name so that `list` finds it: writing the latest
    snapshot is 1 request (2 the first time a process writes that key) and reading it 1."""

    def __init__(
        self,
        store: AnyStore,
        *,
        owner: str = "strands",
        retention: Any = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """`loop`: the event loop an AsyncSessionStore's clients belong to. Strands' `SnapshotSessionManager`
        runs storage calls on a loop of its own (in a thread) when an agent is called synchronously; with
        `loop` given, those calls are sent to it. Unneeded for a `SessionStore`."""
        self.store = store
        self._store = as_async(store)  # typed calls, on either store
        self.owner = owner
        self.retention = retention
        self.loop = loop
        self._prefix = ""  # a namespace's keys are relative to it (`namespace`)
        self._listed: Lru[bool] = Lru(HOT_KNOWN)  # hot keys whose listing artifact is known to exist

    def namespace(self, prefix: str) -> SessionStoreStorage:
        """A view of this storage scoped to `prefix`, as Strands' own storages give: its keys are relative to
        the prefix (nested views nest), `list` and `search` see only keys under it and score them without
        it. A key is placed by its full name, so keys under `session/<id>/` still live in that Strands
        session (its retention and deletion)."""
        normalized = _normalized(prefix, allow_empty=True).rstrip("/")
        scoped = copy.copy(self)
        scoped._prefix = f"{self._prefix}{normalized}/" if normalized else self._prefix
        scoped._namespaced = _NAMESPACED  # type: ignore[attr-defined]  # Strands' marker: wrap no further
        return scoped

    async def _home(self, pending: Coroutine[Any, Any, T]) -> T:
        """A store call, on the loop an AsyncSessionStore's clients belong to (`loop`) when given."""
        return await at_home(self.loop if isinstance(self.store, AsyncSessionStore) else None, pending)

    def _place(self, key: str) -> tuple[str, str, str | None]:
        """(store session id, artifact name, Strands session id or None) of a key of this view."""
        key = self._prefix + _normalized(key, allow_empty=False)
        if key.startswith(SESSIONS_NAMESPACE) and key.count("/") >= 2:
            strands_session, name = key[len(SESSIONS_NAMESPACE) :].split("/", 1)
            return session_store_id(self.owner, strands_session), name, strands_session
        return scoped_id(self.owner, SHARED_KEYS), key, None

    def _key(self, strands_session: str | None, name: str) -> str:
        return name if strands_session is None else f"{SESSIONS_NAMESPACE}{strands_session}/{name}"

    async def write(self, key: str, data: bytes) -> None:
        sid, name, strands_session = self._place(key)
        try:
            if _hot(name):
                await self._write_hot(sid, name, strands_session, bytes(data))
            else:
                await self._put(sid, name, strands_session, bytes(data), None)
        except StoreError as exc:
            raise StorageError(f"write of {key!r} failed: {exc}") from exc

    async def _write_hot(self, sid: str, name: str, strands_session: str | None, data: bytes) -> None:
        """Keep a hot key's bytes as the session's record (creating the session and the key's listing artifact
        the first time: a record found means the artifact was made before it)."""
        kind, place = _hot_kind(name), f"{sid}\x00{name}"
        for attempt in range(2):
            if self._listed.get(place) is None:
                found = await self._home(or_missing(None, self._store.load_records(sid, kind, owner=self.owner)))
                if not found:
                    await self._put(sid, name, strands_session, b"", IN_RECORDS)
                self._listed.put(place, True)
            try:
                await self._home(self._store.save_records(sid, kind, [_as_record(data)], owner=self.owner))
                return
            except SessionNotFound:  # deleted since this process last wrote it: made again, as a new key is
                self._listed.drop(place)
                if attempt:
                    raise

    async def _put(
        self, sid: str, name: str, strands_session: str | None, data: bytes, content_type: str | None
    ) -> None:
        """An artifact version of `name`, the store session made first when there is none."""
        try:
            await self._home(self._store.put_artifact(sid, name, data, content_type=content_type, owner=self.owner))
        except SessionNotFound:
            meta = {"framework": FRAMEWORK, "strands_storage": strands_session or SHARED_KEYS}
            with contextlib.suppress(SessionExists):
                await self._home(
                    self._store.create_session(
                        self.owner,
                        session_id=sid,
                        title=(strands_session or SHARED_KEYS)[:200],
                        metadata=meta,
                        retention=self.retention,
                    )
                )
            await self._home(self._store.put_artifact(sid, name, data, content_type=content_type, owner=self.owner))

    async def read(self, key: str) -> bytes | None:
        sid, name, _ = self._place(key)
        try:
            if _hot(name):  # its record; a key written before records kept it: its artifact
                found = await self._home(
                    or_missing(None, self._store.load_records(sid, _hot_kind(name), owner=self.owner))
                )
                if found:
                    return _from_record(found[0])
            data: bytes | None = await self._home(
                or_missing(None, self._store.get_artifact(sid, name, owner=self.owner))
            )
        except StoreError as exc:
            raise StorageError(f"read of {key!r} failed: {exc}") from exc
        return None if _hot(name) and data == b"" else data  # a listing artifact whose record is not written

    async def delete(self, key: str) -> None:
        sid, name, _ = self._place(key)
        try:
            if _hot(name):
                self._listed.drop(f"{sid}\x00{name}")
                await self._home(or_missing(None, self._store.save_records(sid, _hot_kind(name), [], owner=self.owner)))
            await self._home(or_missing(None, self._store.delete_artifact(sid, name, owner=self.owner)))
            left = await self._home(or_missing(None, self._store.list_artifacts(sid, owner=self.owner)))
            if left == []:
                await self._home(self._store.delete_session(sid, owner=self.owner))
        except StoreError as exc:
            raise StorageError(f"delete of {key!r} failed: {exc}") from exc

    async def list(self, query: str = "") -> list[str]:
        """Keys that start with `query`, sorted: one session's artifacts when the prefix names a Strands
        session, else those of every storage session of the owner (a listing of sessions first)."""
        prefix = self._prefix + _normalized(query, allow_empty=True)
        try:
            places: builtins.list[tuple[str, str | None]] = []
            if prefix.startswith(SESSIONS_NAMESPACE) and "/" in prefix[len(SESSIONS_NAMESPACE) :]:
                one = prefix[len(SESSIONS_NAMESPACE) :].split("/", 1)[0]
                places.append((session_store_id(self.owner, one), one))
            else:
                cursor = None
                while True:
                    wanted = {"framework": FRAMEWORK}
                    page = await self._home(
                        self._store.list_sessions(self.owner, limit=100, cursor=cursor, metadata=wanted)
                    )
                    for session in page.items:
                        kind = session.metadata.get("strands_storage")
                        if kind is not None:
                            places.append((session.id, None if kind == SHARED_KEYS else str(kind)))
                    cursor = page.next_cursor
                    if cursor is None:
                        break
            keys: list[str] = []
            for sid, origin in places:
                found = await self._home(or_missing([], self._store.list_artifacts(sid, owner=self.owner)))
                keys += [self._key(origin, a.name) for a in found]
        except StoreError as exc:
            raise StorageError(f"list of {query!r} failed: {exc}") from exc
        return sorted(k[len(self._prefix) :] for k in keys if k.startswith(prefix))

    async def search(self, query: str) -> builtins.list[Any]:
        """Strands' default keyword search over the keys."""
        results: builtins.list[Any] = await KeywordSearchStrategy().search(self, query)
        return results


def _hot(name: str) -> bool:
    """True for a key Strands overwrites on every invocation (kept as a record)."""
    return name == HOT_SUFFIX or name.endswith("/" + HOT_SUFFIX)


def _hot_kind(name: str) -> str:
    """The record kind holding a hot key's bytes (names are user text: a digest)."""
    return "strands.latest." + hashlib.sha256(name.encode()).hexdigest()[:40]


def _as_record(data: bytes) -> dict[str, str]:
    """Bytes as a record: UTF-8 text as it is (the store's codec compresses it), anything else base64."""
    try:
        return {"t": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b": base64.b64encode(data).decode("ascii")}


def _from_record(record: Any) -> bytes | None:
    if not isinstance(record, dict):
        return None
    if "t" in record:
        return str(record["t"]).encode("utf-8")
    return base64.b64decode(str(record.get("b", "")))


def _normalized(key: str, *, allow_empty: bool) -> str:
    """A Strands storage key as Strands' path-based backends read it: runs of `/` collapsed, no backslash,
    no `..` segment; a key (not a prefix) is stripped of its slashes and must not be empty."""
    if not isinstance(key, str) or "\\" in key:
        raise StorageError(f"invalid storage key {key!r}: backslashes are not allowed")
    collapsed = re.sub("/+", "/", key).lstrip("/")
    if not allow_empty:
        collapsed = collapsed.rstrip("/")
        if not collapsed:
            raise StorageError("storage keys must not be empty")
    if ".." in collapsed.split("/"):
        raise StorageError(f"invalid storage key {key!r}: '..' segments are not allowed")
    return collapsed
