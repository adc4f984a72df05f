"""The HTTP headers of artifact transfers, the same on every backend: what a client sends with a presigned
upload, and how a download is served (as an attachment, never rendered in the origin that serves it)."""

from __future__ import annotations

import base64
import re
from urllib.parse import quote

_UNSAFE_FILENAME = re.compile(r'[^A-Za-z0-9._ -]|["\\]')


def upload_headers(content_type: str, size: int | None, sha256: str | None) -> dict[str, str]:
    """The headers of a presigned PUT, every one of them signed: its content type, `If-None-Match: *`
    (the URL writes once: a second PUT finds the object there and fails), and the declared size and
    SHA-256 (S3 refuses a body of another length, or whose digest differs)."""
    headers = {"Content-Type": content_type, "If-None-Match": "*"}
    if size is not None:
        headers["Content-Length"] = str(size)
    if sha256 is not None:
        headers["x-amz-checksum-sha256"] = sha256_base64(sha256)
    return headers


def sha256_base64(hex_digest: str) -> str:
    """A hex SHA-256 as S3's checksum headers carry it (base64 of the 32 bytes)."""
    return base64.b64encode(bytes.fromhex(hex_digest)).decode()


def sha256_hex(base64_digest: str) -> str | None:
    """S3's base64 checksum as hex, or None when it is not one."""
    try:
        raw = base64.b64decode(base64_digest, validate=True)
    except ValueError:
        return None
    return raw.hex() if len(raw) == 32 else None


def attachment(name: str) -> str:
    """A Content-Disposition that makes a browser save an artifact (named by its last segment) instead of
    displaying it: an ASCII fallback and the exact name in RFC 5987 form."""
    filename = name.rsplit("/", 1)[-1]
    fallback = _UNSAFE_FILENAME.sub("_", filename) or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
