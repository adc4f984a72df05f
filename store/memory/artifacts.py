"""The in-memory backend: artifacts and presigned uploads."""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta

from store.artifact_reader import ArtifactReader
from store.core import rules
from store.core.http_headers import upload_headers
from store.core.timeutil import is_expired
from store.core.validation import new_id
from store.errors import ArtifactNotFound, InvalidInput, PayloadTooLarge
from store.memory.core import ArtifactEntry, MemoryCore, UploadEntry, read_all
from store.models import ArtifactVersion, PresignedUpload
from store.requests import (
    ConfirmArtifactUpload,
    DeleteArtifact,
    GetArtifact,
    ListArtifacts,
    ListArtifactVersions,
    OpenArtifact,
    PresignArtifact,
    PresignArtifactUpload,
    PutArtifact,
)


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

    def put_artifact(self, request: PutArtifact) -> ArtifactVersion:
        session_id, owner, name = request.session_id, request.owner, request.name
        content_type, metadata = request.content_type, request.metadata
        with self._lock:
            self._need(session_id, owner)
        content = read_all(request.data)
        with self._lock:
            self._need(session_id, owner)
            return self._version(session_id, name, content, content_type, metadata)

    def get_artifact(self, request: GetArtifact) -> bytes | None:
        session_id, owner, name, version = request.session_id, request.owner, request.name, request.version
        with self._lock:
            found = self._find_version(session_id, owner, name, version)
            return None if found is None else found[1]

    def open_artifact(self, request: OpenArtifact) -> ArtifactReader | None:
        session_id, owner, name, version = request.session_id, request.owner, request.name, request.version
        with self._lock:
            found = self._find_version(session_id, owner, name, version)
        if found is None:
            return None
        stream = io.BytesIO(found[1])
        return ArtifactReader(found[0], stream.read, stream.close)

    def list_artifacts(self, request: ListArtifacts) -> list[ArtifactVersion]:
        session_id, owner = request.session_id, request.owner
        with self._lock:
            arts = self._need(session_id, owner).artifacts
            latest = [vis[-1][0] for a in arts.values() if (vis := a.visible())]
            return sorted(latest, key=lambda a: a.name)

    def list_artifact_versions(self, request: ListArtifactVersions) -> list[ArtifactVersion]:
        session_id, owner, name = request.session_id, request.owner, request.name
        with self._lock:
            art = self._need(session_id, owner).artifacts.get(name)
            return [av for av, _ in (art.visible() if art is not None else [])]

    def delete_artifact(self, request: DeleteArtifact) -> None:
        session_id, owner, name = request.session_id, request.owner, request.name
        with self._lock:
            entry = self._need(session_id, owner)
            art = entry.artifacts.get(name)
            if art is None or not art.live:
                return
            rules.check_unpinned("delete_artifact", 0, entry.pinned)  # a fork's copy takes its objects along
            art.live, art.deleted_through, art.versions = False, art.latest, {}
            self._touch(entry)

    def presign_artifact(self, request: PresignArtifact) -> str:
        session_id, owner, spec = request.session_id, request.owner, request.presign
        if spec.method == "PUT":
            return self.presign_artifact_upload(
                PresignArtifactUpload(session_id=session_id, owner=owner, presign=spec)
            ).url
        with self._lock:
            found = self._find_version(session_id, owner, spec.name, spec.version)
        if found is None:
            raise ArtifactNotFound(session_id, spec.name, spec.version)
        av = found[0]
        return f"memory://artifacts/{session_id}/{av.sha256}?version={av.version}&expires_in={spec.expires_in}"

    def presign_artifact_upload(self, request: PresignArtifactUpload) -> PresignedUpload:
        session_id, owner, spec = request.session_id, request.owner, request.presign
        with self._lock:
            session = self._need(session_id, owner).session
            upload_id = new_id()
            expires = self._now() + timedelta(seconds=spec.expires_in)
            self._uploads[upload_id] = UploadEntry(session_id, session.owner, session.created_at, spec, expires)
        return PresignedUpload(
            url=f"memory://uploads/{upload_id}",
            upload_id=upload_id,
            session_id=session_id,
            name=spec.name,
            expires_at=expires,
            headers=upload_headers(spec.content_type, spec.size, spec.sha256),
            max_size=spec.max_size,
            size=spec.size,
            sha256=spec.sha256,
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

    def confirm_artifact_upload(self, request: ConfirmArtifactUpload) -> ArtifactVersion:
        session_id, owner, name, upload_id = request.session_id, request.owner, request.name, request.upload
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
            spec = pending.request
            pending.version = self._version(session_id, name, pending.data, spec.content_type, spec.metadata)
            pending.data = None
            return pending.version
