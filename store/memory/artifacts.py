"""The in-memory backend: artifacts and presigned uploads."""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta
from typing import Any

from store.artifact_reader import ArtifactReader
from store.backend import Presign
from store.errors import ArtifactNotFound, InvalidInput, PayloadTooLarge
from store.http_headers import upload_headers
from store.memory.core import ArtifactEntry, MemoryCore, UploadEntry, read_all
from store.models import ArtifactVersion, PresignedUpload
from store.streams import adrain, is_async_source
from store.timeutil import is_expired
from store.validation import new_id


class MemoryArtifacts(MemoryCore):
    """Artifacts and presigned uploads, in memory."""

    def _version(
        self, session_id: str, name: str, data: bytes, content_type: str, md: dict[str, str]
    ) -> ArtifactVersion:
        """Store `data` as the name's next version (under the lock)."""
        entry = self._sessions[session_id]
        art = entry.artifacts.setdefault(name, ArtifactEntry())
        if not art.live:
            art.deleted_through = art.latest
        art.latest += 1
        art.live = True
        av = ArtifactVersion(
            session_id=session_id,
            name=name,
            version=art.latest,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            content_type=content_type,
            metadata=dict(md),
            created_at=self._now(),
        )
        art.versions[art.latest] = (av, data)
        self._touch(entry)
        return av

    def _find_version(
        self, session_id: str, owner: str | None, name: str, version: int | None
    ) -> tuple[ArtifactVersion, bytes] | None:
        art = self._need(session_id, owner).artifacts.get(name)
        visible = art.visible() if art is not None else []
        if not visible:
            return None
        if version is None:
            return visible[-1]
        return next((v for v in visible if v[0].version == version), None)

    def put_artifact(
        self, session_id: str, owner: str | None, name: str, data: Any, content_type: str, metadata: dict[str, str]
    ) -> ArtifactVersion:
        with self._lock:
            self._need(session_id, owner)
        if is_async_source(data):  # the async store's callers: drained on their event loop
            return self._put_drained(session_id, owner, name, data, content_type, metadata)  # type: ignore[return-value]
        content = read_all(data)
        with self._lock:
            self._need(session_id, owner)
            return self._version(session_id, name, content, content_type, metadata)

    async def _put_drained(
        self, session_id: str, owner: str | None, name: str, data: Any, content_type: str, metadata: dict[str, str]
    ) -> ArtifactVersion:
        return self.put_artifact(session_id, owner, name, await adrain(data), content_type, metadata)

    def get_artifact(self, session_id: str, owner: str | None, name: str, version: int | None) -> bytes | None:
        with self._lock:
            found = self._find_version(session_id, owner, name, version)
            return None if found is None else found[1]

    def open_artifact(
        self, session_id: str, owner: str | None, name: str, version: int | None
    ) -> ArtifactReader | None:
        with self._lock:
            found = self._find_version(session_id, owner, name, version)
        if found is None:
            return None
        stream = io.BytesIO(found[1])
        return ArtifactReader(found[0], stream.read, stream.close)

    def list_artifacts(self, session_id: str, owner: str | None) -> list[ArtifactVersion]:
        with self._lock:
            arts = self._need(session_id, owner).artifacts
            latest = [vis[-1][0] for a in arts.values() if (vis := a.visible())]
            return sorted(latest, key=lambda a: a.name)

    def list_artifact_versions(self, session_id: str, owner: str | None, name: str) -> list[ArtifactVersion]:
        with self._lock:
            art = self._need(session_id, owner).artifacts.get(name)
            return [av for av, _ in (art.visible() if art is not None else [])]

    def delete_artifact(self, session_id: str, owner: str | None, name: str) -> None:
        with self._lock:
            entry = self._need(session_id, owner)
            art = entry.artifacts.get(name)
            if art is None or not art.live:
                return
            art.live, art.deleted_through, art.versions = False, art.latest, {}
            self._touch(entry)

    def presign_artifact(self, session_id: str, owner: str | None, request: Presign) -> str:
        if request.method == "PUT":
            return self.presign_artifact_upload(session_id, owner, request).url
        with self._lock:
            found = self._find_version(session_id, owner, request.name, request.version)
        if found is None:
            raise ArtifactNotFound(session_id, request.name, request.version)
        av = found[0]
        return f"memory://artifacts/{session_id}/{av.sha256}?version={av.version}&expires_in={request.expires_in}"

    def presign_artifact_upload(self, session_id: str, owner: str | None, request: Presign) -> PresignedUpload:
        with self._lock:
            session = self._need(session_id, owner).session
            upload_id = new_id()
            expires = self._now() + timedelta(seconds=request.expires_in)
            self._uploads[upload_id] = UploadEntry(session_id, session.owner, session.created_at, request, expires)
        return PresignedUpload(
            url=f"memory://uploads/{upload_id}",
            upload_id=upload_id,
            session_id=session_id,
            name=request.name,
            expires_at=expires,
            headers=upload_headers(request.content_type, request.size, request.sha256),
            max_size=request.max_size,
            size=request.size,
            sha256=request.sha256,
        )

    def receive_upload(self, url: str, data: bytes) -> None:
        """What an HTTP PUT to a presigned URL, with the headers it was issued with, does at S3 (for tests of
        the memory backend): store the bytes, unless the URL has expired, the upload already holds bytes
        (If-None-Match), or they are not the declared size or SHA-256 (signed headers S3 checks)."""
        with self._lock:
            pending = self._uploads.get(url.rstrip("/").rsplit("/", 1)[-1])
            if pending is None or is_expired(pending.expires_at, self._now()):
                raise InvalidInput("no such upload URL, or it has expired")
            if pending.data is not None or pending.version is not None:
                raise InvalidInput("precondition failed: the upload already holds its bytes")
            wanted = pending.request
            if wanted.size is not None and len(data) != wanted.size:
                raise InvalidInput("the body is not the size the URL was signed for")
            if wanted.sha256 is not None and hashlib.sha256(data).hexdigest() != wanted.sha256:
                raise InvalidInput("the body does not match the SHA-256 the URL was signed for")
            pending.data = bytes(data)

    def confirm_artifact_upload(self, session_id: str, owner: str | None, name: str, upload_id: str) -> ArtifactVersion:
        with self._lock:
            session = self._need(session_id, owner).session
            pending = self._uploads.get(upload_id)
            if pending is None:
                raise InvalidInput("no pending upload with that id (it expired, or was never issued)")
            if pending.session_id != session_id or pending.request.name != name:
                raise InvalidInput("upload does not belong to this session and artifact name")
            if (pending.owner, pending.life) != (session.owner, session.created_at):
                del self._uploads[upload_id]  # issued in a session that no longer exists: nobody can confirm it
                raise InvalidInput("upload was issued for an earlier session with this id; it has been discarded")
            if pending.version is not None:
                return pending.version
            if pending.data is None:
                raise InvalidInput("nothing has been uploaded to that URL yet")
            if len(pending.data) > pending.request.max_size:
                pending.data = None
                raise PayloadTooLarge(
                    f"the upload holds more than its limit of {pending.request.max_size} bytes; it was discarded"
                )
            request = pending.request
            pending.version = self._version(session_id, name, pending.data, request.content_type, request.metadata)
            pending.data = None
            return pending.version
