"""Streaming an artifact's bytes into S3 (one PutObject, or a multipart upload above the threshold)
and hashing an object back out, without ever holding more than one part in memory."""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import Any

from store.dynamo.calls import AwsError, Plan, Read
from store.dynamo.plans.base import Context
from store.dynamo.plans.objects import s3
from store.errors import PayloadTooLarge, StoreError

MAX_PARTS = 10_000
HASH_CHUNK = 1024 * 1024


@dataclass
class Source:
    """Bytes taken from a caller's data (bytes, or a stream read through `Read` steps), hashed as taken."""

    data: Any
    offset: int = 0
    pending: bytes = b""
    done: bool = False
    size: int = 0
    sha: Any = field(default_factory=hashlib.sha256)

    def take(self, n: int) -> Plan[bytes]:
        """Exactly `n` bytes, or fewer only at the end of the data."""
        if isinstance(self.data, bytes):
            out = self.data[self.offset : self.offset + n]
            self.offset += len(out)
        else:
            buf = bytearray(self.pending)
            while len(buf) < n and not self.done:
                chunk = yield Read(self.data, n - len(buf))
                if not chunk:
                    self.done = True
                buf += chunk
            out, self.pending = bytes(buf[:n]), bytes(buf[n:])
        self.size += len(out)
        self.sha.update(out)
        return out


@dataclass(frozen=True)
class Uploaded:
    size: int
    sha256: str


def upload(ctx: Context, key: str, data: Any, content_type: str) -> Plan[Uploaded]:
    """Write `data` (bytes or a stream) to `key`: one PutObject up to `multipart_threshold` bytes, else a
    multipart upload in `part_size` parts (aborted if anything fails)."""
    source = Source(data)
    settings = ctx.settings
    first = yield from source.take(settings.multipart_threshold + 1)
    if len(first) <= settings.multipart_threshold:
        yield s3("put_object", ctx, Key=key, Body=first, ContentType=content_type)
        return Uploaded(source.size, source.sha.hexdigest())
    resp = yield s3("create_multipart_upload", ctx, Key=key, ContentType=content_type)
    upload_id = resp["UploadId"]
    try:
        parts = yield from _parts(ctx, key, upload_id, source, first)
        yield s3("complete_multipart_upload", ctx, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
    except (AwsError, StoreError):
        with contextlib.suppress(AwsError):  # else the bucket's lifecycle rule aborts it after a day
            yield s3("abort_multipart_upload", ctx, Key=key, UploadId=upload_id)
        raise
    return Uploaded(source.size, source.sha.hexdigest())


def _parts(ctx: Context, key: str, upload_id: str, source: Source, buffer: bytes) -> Plan[list[dict[str, Any]]]:
    part_size = ctx.settings.part_size
    parts: list[dict[str, Any]] = []
    while True:
        if len(buffer) < part_size:
            buffer += yield from source.take(part_size - len(buffer))
        if not buffer:
            return parts
        part, buffer = buffer[:part_size], buffer[part_size:]
        number = len(parts) + 1
        if number > MAX_PARTS:
            raise PayloadTooLarge(f"an artifact may have at most {MAX_PARTS} parts of {part_size} bytes")
        resp = yield s3("upload_part", ctx, Key=key, UploadId=upload_id, PartNumber=number, Body=part)
        parts.append({"PartNumber": number, "ETag": resp["ETag"]})
        if len(part) < part_size:
            return parts


def digest_object(ctx: Context, key: str) -> Plan[Uploaded | None]:
    """Size and SHA-256 of an object, read as a stream; None when there is no such object."""
    try:
        resp = yield s3("get_object", ctx, stream=True, Key=key)
    except AwsError as err:
        if err.code in ("NoSuchKey", "404"):
            return None
        raise
    source = Source(resp["Body"])
    while (yield from source.take(HASH_CHUNK)):
        pass
    return Uploaded(source.size, source.sha.hexdigest())
