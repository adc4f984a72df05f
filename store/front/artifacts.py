"""The public operations on versioned artifacts, their downloads and presigned uploads.

A part of `SessionStore` (and, wrapped, of `AsyncSessionStore`): each operation checks and normalises
its arguments, then hands them to the backend."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from store.artifact_reader import ArtifactReader
from store.core import validation as v
from store.errors import InvalidInput
from store.front.base import Domain
from store.models import ArtifactVersion, PresignedUpload
from store.requests import (
    ConfirmArtifactUpload,
    DeleteArtifact,
    GetArtifact,
    ListArtifacts,
    ListArtifactVersions,
    OpenArtifact,
    Presign,
    PresignArtifact,
    PresignArtifactUpload,
    PutArtifact,
)
from store.settings import Settings

DEFAULT_PRESIGN = timedelta(minutes=15)


def presign_request(
    settings: Settings,
    name: str,
    version: int | None,
    method: str,
    expires_in: timedelta | int,
    content_type: str | None,
    metadata: dict[str, str] | None,
    size: int | None,
    max_size: int | None,
    sha256: str | None,
) -> Presign:
    """The checked request behind both presign methods (an upload's limits from `settings`)."""
    limit, exact = v.upload_limits(size, max_size, settings) if method == "PUT" else (0, None)
    return Presign(
        v.artifact_name(name),
        v.version(version),
        method,
        v.presign_expiry(expires_in),
        v.content_type(content_type),
        v.artifact_metadata(metadata),
        max_size=limit,
        size=exact,
        sha256=None if sha256 is None else v.sha256_hex(sha256),
    )


class Artifacts(Domain):
    """Versioned artifacts, their downloads and presigned uploads."""

    def put_artifact(
        self,
        session_id: str,
        name: str,
        data: Any,
        *,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        owner: str | None = None,
    ) -> ArtifactVersion:
        """Store `data` (bytes, a binary stream with `read(n)`, or an iterable of bytes chunks; any size,
        streamed, never held whole) as the name's next version (1, 2, 3, ...), with its size, sha256,
        content type and string metadata."""
        return self._backend.execute(
            PutArtifact(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                name=v.artifact_name(name),
                data=v.data_source(data),
                content_type=v.content_type(content_type),
                metadata=v.artifact_metadata(metadata),
            )
        )

    def get_artifact(
        self, session_id: str, name: str, *, version: int | None = None, owner: str | None = None
    ) -> bytes | None:
        """The bytes of a version (the latest when `version` is None), or None when it does not exist."""
        return self._backend.execute(
            GetArtifact(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                name=v.artifact_name(name),
                version=v.version(version),
            )
        )

    def open_artifact(
        self, session_id: str, name: str, *, version: int | None = None, owner: str | None = None
    ) -> ArtifactReader | None:
        """A streaming reader of a version (`read(n)`, iteration; check `reader.version`), or None."""
        return self._backend.execute(
            OpenArtifact(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                name=v.artifact_name(name),
                version=v.version(version),
            )
        )

    def list_artifacts(self, session_id: str, *, owner: str | None = None) -> list[ArtifactVersion]:
        """The latest version of each artifact, sorted by name."""
        return self._backend.execute(
            ListArtifacts(session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner))
        )

    def list_artifact_versions(self, session_id: str, name: str, *, owner: str | None = None) -> list[ArtifactVersion]:
        """Every version of an artifact, oldest first (empty when there is none)."""
        return self._backend.execute(
            ListArtifactVersions(
                session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner), name=v.artifact_name(name)
            )
        )

    def delete_artifact(self, session_id: str, name: str, *, owner: str | None = None) -> None:
        """Delete every version of an artifact (its numbers are not reused); idempotent."""
        return self._backend.execute(
            DeleteArtifact(
                session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner), name=v.artifact_name(name)
            )
        )

    def presign_artifact(
        self,
        session_id: str,
        name: str,
        *,
        version: int | None = None,
        method: str = "GET",
        expires_in: timedelta | int = DEFAULT_PRESIGN,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        size: int | None = None,
        max_size: int | None = None,
        sha256: str | None = None,
        owner: str | None = None,
    ) -> str:
        """A SigV4 URL valid for `expires_in` (at most one hour). GET downloads a version (the latest by
        default; ArtifactNotFound if absent) as an attachment. PUT uploads a new version's bytes once
        (send the headers `presign_artifact_upload` lists: at least the same Content-Type and
        `If-None-Match: *`); they become a version only when `confirm_artifact_upload` is called with
        this URL. `size`, `max_size` and `sha256` bound and pin the upload as there."""
        method = v.presign_method(method)
        if method == "PUT" and version is not None:
            raise InvalidInput("a PUT URL uploads a new version; version must be None")
        if method == "GET" and (size, max_size, sha256) != (None, None, None):
            raise InvalidInput("size, max_size and sha256 describe an upload; a GET URL takes none of them")
        request = presign_request(
            self.settings, name, version, method, expires_in, content_type, metadata, size, max_size, sha256
        )
        return self._backend.execute(
            PresignArtifact(
                session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner), presign=request
            )
        )

    def presign_artifact_upload(
        self,
        session_id: str,
        name: str,
        *,
        expires_in: timedelta | int = DEFAULT_PRESIGN,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        size: int | None = None,
        max_size: int | None = None,
        sha256: str | None = None,
        owner: str | None = None,
    ) -> PresignedUpload:
        """`presign_artifact(method="PUT")` with everything a client needs: the URL, the headers to send
        (signed: the content type, `If-None-Match: *` so the URL writes once, and the declared size and
        SHA-256), the upload id to confirm, the size limit, and when the URL expires. Declare `size` (the
        exact byte count, enforced by S3) or `max_size` (enforced at confirm); without either the upload
        may hold `settings.default_upload_bytes`, and neither may exceed `settings.max_upload_bytes`.
        With `sha256` (hex) S3 verifies the bytes as they arrive and confirm need not read them back."""
        request = presign_request(
            self.settings, name, None, "PUT", expires_in, content_type, metadata, size, max_size, sha256
        )
        return self._backend.execute(
            PresignArtifactUpload(
                session_id=v.ident(session_id, "session_id"), owner=v.optional_owner(owner), presign=request
            )
        )

    def confirm_artifact_upload(
        self, session_id: str, name: str, upload: str, *, owner: str | None = None
    ) -> ArtifactVersion:
        """Make the bytes uploaded through a presigned PUT (`upload`: its URL or upload id) the name's next
        version: their size is checked against the upload's limit from the object's metadata (an oversize
        upload is PayloadTooLarge and discarded), their SHA-256 taken from S3's checksum when one was
        declared (else read back), and the object copied, server-side, to a key no URL was issued for, so
        nothing can change a committed version. Confirming twice returns the same version; InvalidInput
        when nothing was uploaded, or the upload is not this session's and name's (or was issued for an
        earlier session under the same id: then it is discarded)."""
        return self._backend.execute(
            ConfirmArtifactUpload(
                session_id=v.ident(session_id, "session_id"),
                owner=v.optional_owner(owner),
                name=v.artifact_name(name),
                upload=v.upload_id(upload),
            )
        )
