"""Streaming an artifact's bytes into S3 (one PutObject, or a multipart upload above the threshold),
hashing an object back out without ever holding more than one part in memory, and reading and copying
an uploaded object inside the bucket (a presigned upload's checks at confirm)."""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import Any

from store.aws.calls import AwsError, Parallel, Plan, Read
from store.aws.plans.base import PARALLEL_REQUESTS, Context
from store.aws.plans.objects import bucket, s3
from store.core.http_headers import sha256_hex
from store.errors import Conflict, PayloadTooLarge, StoreError

MAX_PARTS = 10_000
HASH_CHUNK = 1024 * 1024


@dataclass
class Source:
    """Bytes taken from a caller's data: bytes, or a stream read through `Read` steps."""

    data: Any
    offset: int = 0
    pending: bytes = b""
    done: bool = False

    def take(self, n: int) -> Plan[bytes | bytearray]:
        """Exactly `n` bytes, or fewer only at the end of the data."""
        if isinstance(self.data, bytes):
            out = self.data[self.offset : self.offset + n]
            self.offset += len(out)
            return out
        buf = bytearray(self.pending)
        self.pending = b""
        while len(buf) < n and not self.done:
            chunk = yield Read(self.data, n - len(buf))
            if not chunk:
                self.done = True
            buf += chunk
        if len(buf) > n:  # an iterator's chunk ran past n: keep the rest for the next take
            self.pending = bytes(buf[n:])
            del buf[n:]
        return buf

    def unread(self, data: bytes | bytearray) -> None:
        """Put bytes back in front of what `take` returns next."""
        if isinstance(self.data, bytes):
            self.offset -= len(data)
        else:
            self.pending = bytes(data) + self.pending


@dataclass
class Hashed:
    """Running size and SHA-256 of what has been sent."""

    size: int = 0
    sha: Any = field(default_factory=hashlib.sha256)

    def add(self, data: bytes | bytearray) -> bytes | bytearray:
        self.size += len(data)
        self.sha.update(data)
        return data


@dataclass(frozen=True)
class Uploaded:
    size: int
    sha256: str


def upload(ctx: Context, key: str, data: Any, content_type: str) -> Plan[Uploaded]:
    """Write `data` (bytes or a stream) to `key`: one PutObject up to `multipart_threshold` bytes, else a
    multipart upload in `part_size` parts (aborted if anything fails). At most one part is held."""
    source, sent = Source(data), Hashed()
    settings = ctx.settings
    first = yield from source.take(settings.multipart_threshold + 1)
    if len(first) <= settings.multipart_threshold:
        yield s3("put_object", ctx, Key=key, Body=sent.add(first), ContentType=content_type)
        return Uploaded(sent.size, sent.sha.hexdigest())
    source.unread(first)
    del first
    resp = yield s3("create_multipart_upload", ctx, Key=key, ContentType=content_type)
    upload_id = resp["UploadId"]
    try:
        parts = yield from _parts(ctx, key, upload_id, source, sent)
        yield s3("complete_multipart_upload", ctx, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
    except (AwsError, StoreError):
        with contextlib.suppress(AwsError):  # else the bucket's lifecycle rule aborts it after a day
            yield s3("abort_multipart_upload", ctx, Key=key, UploadId=upload_id)
        raise
    return Uploaded(sent.size, sent.sha.hexdigest())


def _parts(ctx: Context, key: str, upload_id: str, source: Source, sent: Hashed) -> Plan[list[dict[str, Any]]]:
    """Upload the parts, `settings.part_concurrency` at a time (so at most that many are held)."""
    part_size = ctx.settings.part_size
    parts: list[dict[str, Any]] = []
    last = False
    while not last:
        batch: list[tuple[int, bytes | bytearray]] = []
        while len(batch) < ctx.settings.part_concurrency and not last:
            part = yield from source.take(part_size)
            last = len(part) < part_size
            if part or (not parts and not batch):
                batch.append((len(parts) + len(batch) + 1, sent.add(part)))
        if not batch:
            break
        if batch[-1][0] > MAX_PARTS:
            raise PayloadTooLarge(f"an artifact may have at most {MAX_PARTS} parts of {part_size} bytes")
        calls = tuple(
            s3("upload_part", ctx, Key=key, UploadId=upload_id, PartNumber=number, Body=body) for number, body in batch
        )
        responses = yield Parallel(calls)
        parts.extend({"PartNumber": n, "ETag": r["ETag"]} for (n, _), r in zip(batch, responses, strict=True))
        del batch, calls  # hold one batch of parts at a time
    return parts


@dataclass(frozen=True)
class Stored:
    """What S3 says of an object without reading it: its size, ETag, and SHA-256 when it has that checksum."""

    size: int
    etag: str
    sha256: str | None


def head_object(ctx: Context, key: str) -> Plan[Stored | None]:
    """The object's metadata (its SHA-256 checksum included, when it was uploaded with one), or None."""
    try:
        resp = yield s3("head_object", ctx, Key=key, ChecksumMode="ENABLED")
    except AwsError as err:
        if err.code in ("NoSuchKey", "404", "NotFound"):
            return None
        raise
    checksum = resp.get("ChecksumSHA256")
    return Stored(int(resp["ContentLength"]), str(resp["ETag"]), sha256_hex(checksum) if checksum else None)


def digest_object(ctx: Context, key: str, *, if_match: str | None = None) -> Plan[Uploaded | None]:
    """Size and SHA-256 of an object, read as a stream; None when there is no such object (or, with
    `if_match`, when it is no longer the object with that ETag)."""
    params = {"IfMatch": if_match} if if_match else {}
    try:
        resp = yield s3("get_object", ctx, stream=True, Key=key, **params)
    except AwsError as err:
        if err.code in ("NoSuchKey", "404", "PreconditionFailed", "412"):
            return None
        raise
    source, seen = Source(resp["Body"]), Hashed()
    while chunk := (yield from source.take(HASH_CHUNK)):
        seen.add(chunk)
    return Uploaded(seen.size, seen.sha.hexdigest())


def copy_object(ctx: Context, source: str, target: str, stored: Stored, content_type: str) -> Plan[None]:
    """Copy `source` to `target` inside the bucket (S3 moves the bytes; none pass through here), only while
    `source` is still the object with `stored.etag`: one CopyObject up to `settings.copy_part_bytes`,
    else a multipart copy of that part size, parts copied concurrently (aborted if anything fails).
    Conflict when `source` changed meanwhile."""
    origin = {"Bucket": bucket(ctx), "Key": source}
    try:
        if stored.size <= ctx.settings.copy_part_bytes:
            yield s3("copy_object", ctx, Key=target, CopySource=origin, CopySourceIfMatch=stored.etag)
            return
        resp = yield s3("create_multipart_upload", ctx, Key=target, ContentType=content_type)
    except AwsError as err:
        raise _changed(err) from err
    upload_id = resp["UploadId"]
    part = ctx.settings.copy_part_bytes
    ranges = [(i + 1, start, min(start + part, stored.size) - 1) for i, start in enumerate(range(0, stored.size, part))]
    try:
        parts: list[dict[str, Any]] = []
        for first in range(0, len(ranges), PARALLEL_REQUESTS):
            batch = ranges[first : first + PARALLEL_REQUESTS]
            calls = tuple(
                s3(
                    "upload_part_copy",
                    ctx,
                    Key=target,
                    UploadId=upload_id,
                    PartNumber=number,
                    CopySource=origin,
                    CopySourceRange=f"bytes={lo}-{hi}",
                    CopySourceIfMatch=stored.etag,
                )
                for number, lo, hi in batch
            )
            responses = yield Parallel(calls)
            parts += [
                {"PartNumber": b[0], "ETag": r["CopyPartResult"]["ETag"]} for b, r in zip(batch, responses, strict=True)
            ]
        yield s3("complete_multipart_upload", ctx, Key=target, UploadId=upload_id, MultipartUpload={"Parts": parts})
    except AwsError as err:
        with contextlib.suppress(AwsError):
            yield s3("abort_multipart_upload", ctx, Key=target, UploadId=upload_id)
        raise _changed(err) from err


def _changed(err: AwsError) -> BaseException:
    """A copy's failure: StoreError when its source changed (its ETag condition failed), else the error."""
    if err.code in ("PreconditionFailed", "412"):
        return Conflict("the upload changed while it was being confirmed; confirm again")
    return err
