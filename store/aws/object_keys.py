"""Key layout of the S3 bucket. Every key is built from validated ids and hashes: an owner (any printable
string) and an artifact name (user text) only ever appear as SHA-256 digests, so no caller string
becomes a key path. Owner and session scoping is the key's prefix:

    sessions/<owner-digest>/<session-id>/artifacts/<name-digest>/<upload-id>
    sessions/<owner-digest>/<session-id>/uploads/<upload-id>   (where a presigned PUT lands; never a version)
    sessions/<owner-digest>/<session-id>/traces/<run-id>/<batch, 10 digits>.jsonl.gz
    sessions/<owner-digest>/<session-id>/payloads/<write-id>/<sha256 of the stored bytes>
    checkpoints/<scope>/<key>/payloads/<write-id>/<sha256 of the stored bytes>   (no owner)
    checkpoints/<scope>/owners/<owner-digest>/<key>/payloads/<write-id>/<sha256 of the stored bytes>
"""

from __future__ import annotations

import hashlib
import re

DIGEST_CHARS = 32
UPLOAD_ID = re.compile(r"[0-9a-f]{32}")


def digest(text: str) -> str:
    """A short, fixed-length SHA-256 digest of `text` (128 bits: collisions are not a practical concern)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def session_prefix(owner: str, session_id: str) -> str:
    """Everything of one session lives under this prefix (delete removes it whole)."""
    return f"sessions/{digest(owner)}/{session_id}/"


def memory_prefix(owner: str) -> str:
    """An owner's memories' objects (values too large for an item) live under this prefix."""
    return f"memories/{digest(owner)}/"


def checkpoint_prefix(scope: str, key: str, owner: str | None = None) -> str:
    """Objects of a run or workflow checkpoint (session checkpoints use their session's prefix), in its
    owner's namespace when it has one."""
    if owner is None:
        return f"checkpoints/{scope}/{key}/"
    return f"checkpoints/{scope}/owners/{digest(owner)}/{key}/"


def artifact_key(prefix: str, name: str, upload_id: str) -> str:
    """One uploaded object of an artifact; its version number lives in DynamoDB, allocated at commit."""
    return f"{prefix}artifacts/{digest(name)}/{upload_id}"


def incoming_key(prefix: str, upload_id: str) -> str:
    """Where a presigned upload's bytes land. A version never lives here: confirm copies them to the
    version's `artifact_key`, which no URL is issued for."""
    return f"{prefix}uploads/{upload_id}"


def trace_key(prefix: str, run_id: str, batch: int) -> str:
    return f"{prefix}traces/{run_id}/{batch:010d}.jsonl.gz"


def payload_key(prefix: str, write_id: str, payload: bytes) -> str:
    """Where a spilled body goes: named by the SHA-256 of its bytes (a reader verifies them against
    it) within the write that made it (so no two items share an object, and an object can be deleted
    as soon as its one item lets go of it)."""
    return f"{prefix}payloads/{write_id}/{hashlib.sha256(payload).hexdigest()}"


def copied_payload_key(prefix: str, write_id: str, source_key: str) -> str:
    """Where a copy of the spilled body at `source_key` goes under another prefix (the same bytes: the same
    digest), within the write `write_id` that places it."""
    return f"{prefix}payloads/{write_id}/{payload_sha256(source_key)}"


def payload_sha256(key: str) -> str:
    """The digest a payload key promises (its last segment)."""
    return key.rsplit("/", 1)[-1]
