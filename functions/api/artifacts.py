"""Routes for artifacts: uploads through a presigned URL plus confirm, downloads through a presigned
redirect, small bodies inline. A name goes in the path URL-encoded (`/` as `%2F`)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from functions.api.context import INLINE_ARTIFACT_BYTES, Absent, body_bytes, caller
from functions.api.schemas import ConfirmUpload, UploadRequest, Versions
from store import ArtifactNotFound, PayloadTooLarge
from store.core.http_headers import attachment
from store.core.validation import MAX_PRESIGN_SECONDS
from store.models import ArtifactVersion, PresignedUpload

router = APIGatewayHttpRouter()
DOWNLOAD_URL_SECONDS = 300


@router.get("/sessions/<session_id>/artifacts", tags=["artifacts"], summary="The latest version of each artifact")
def list_artifacts(session_id: str) -> Versions:
    me = caller(router.current_event)
    return Versions(items=me.store.list_artifacts(session_id))


@router.post(
    "/sessions/<session_id>/artifact-uploads",
    tags=["artifacts"],
    status_code=201,
    summary="Get a presigned URL to upload a new version (confirm it afterwards)",
)
def presign_artifact_upload(session_id: str, body: UploadRequest) -> Response[PresignedUpload]:
    me = caller(router.current_event)
    upload = me.store.presign_artifact_upload(
        session_id,
        body.name,
        expires_in=body.expires_in,
        content_type=body.content_type,
        metadata=body.metadata,
        size=body.size,
        max_size=body.max_size,
        sha256=body.sha256,
    )
    return Response(201, body=upload, content_type="application/json")


@router.post(
    "/sessions/<session_id>/artifact-uploads/<upload_id>/confirm",
    tags=["artifacts"],
    status_code=201,
    summary="Make an uploaded object the artifact's next version",
)
def confirm_artifact_upload(session_id: str, upload_id: str, body: ConfirmUpload) -> Response[ArtifactVersion]:
    me = caller(router.current_event)
    version = me.store.confirm_artifact_upload(session_id, body.name, upload_id)
    return Response(201, body=version, content_type="application/json")


@router.put(
    "/sessions/<session_id>/artifacts/<name>",
    tags=["artifacts"],
    status_code=201,
    summary="Upload a small artifact inline (at most 4 MB; larger ones through artifact-uploads)",
)
def put_artifact(session_id: str, name: str) -> Response[ArtifactVersion]:
    data = body_bytes(router.current_event)
    if len(data) > INLINE_ARTIFACT_BYTES:
        raise PayloadTooLarge(f"inline uploads are at most {INLINE_ARTIFACT_BYTES} bytes; use artifact-uploads")
    content_type, me = router.current_event.headers.get("content-type"), caller(router.current_event)
    version = me.store.put_artifact(session_id, unquote(name), data, content_type=content_type)
    return Response(201, body=version, content_type="application/json")


@router.get(
    "/sessions/<session_id>/artifacts/<name>",
    tags=["artifacts"],
    summary="Download a version: a redirect to a presigned URL (valid expires_in seconds), or the bytes inline "
    "(at most 4 MB)",
)
def get_artifact(  # type: ignore[no-untyped-def]  # unannotated: Powertools must not re-serialize the bytes
    session_id: str,
    name: str,
    version: Annotated[int | None, Query(ge=1)] = None,
    inline: Annotated[bool, Query()] = False,
    expires_in: Annotated[int, Query(ge=1, le=MAX_PRESIGN_SECONDS)] = DOWNLOAD_URL_SECONDS,
):

    me, artifact = caller(router.current_event), unquote(name)
    sid = session_id
    if not inline:
        try:
            url = me.store.presign_artifact(sid, artifact, version=version, expires_in=expires_in)
        except ArtifactNotFound:
            raise Absent("no such artifact version") from None
        return Response(302, headers={"Location": url})
    reader = me.store.open_artifact(sid, artifact, version=version)
    if reader is None:
        raise Absent("no such artifact version")
    with reader:
        if reader.version.size > INLINE_ARTIFACT_BYTES:
            raise PayloadTooLarge(f"inline downloads are at most {INLINE_ARTIFACT_BYTES} bytes; omit inline")
        data = reader.read()
    # a download, never a page: served as an attachment, its type not to be second-guessed
    headers = {"Content-Disposition": attachment(reader.version.name)}
    return Response(200, content_type=reader.version.content_type, body=data, headers=headers)


@router.get(
    "/sessions/<session_id>/artifacts/<name>/versions", tags=["artifacts"], summary="Every version, oldest first"
)
def list_artifact_versions(session_id: str, name: str) -> Versions:
    me = caller(router.current_event)
    return Versions(items=me.store.list_artifact_versions(session_id, unquote(name)))


@router.delete(
    "/sessions/<session_id>/artifacts/<name>", tags=["artifacts"], status_code=204, summary="Delete every version"
)
def delete_artifact(session_id: str, name: str) -> Response[None]:
    me = caller(router.current_event)
    me.store.delete_artifact(session_id, unquote(name))
    return Response(204)
