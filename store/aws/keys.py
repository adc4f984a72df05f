"""Key layout of both tables. Attribute and index names here must equal template.yaml's (a test checks);
every key is built from validated ids only."""

from __future__ import annotations

from store.aws.attrs import Item, n, s
from store.aws.object_keys import digest

# Sessions table (template.yaml: SessionsTable)
PK = "pk"
SK = "sk"
GSI1PK = "gsi1pk"
GSI1SK = "gsi1sk"
BY_OWNER = "by_owner"
TTL = "ttl"

# Messages table (template.yaml: MessagesTable)
SID = "sid"
SEQ = "seq"
MID = "mid"
BY_MESSAGE_ID = "by_message_id"

HEAD = "HEAD"
STATE = "STATE"
INTERRUPT = "INTERRUPT"
CHECKPOINT = "CP"
RECORDS_PREFIX = "REC#"
IDEMPOTENCY_PREFIX = "IDEM#"
OWNER_INDEX_PREFIX = "S#"


def session_pk(session_id: str) -> str:
    return f"S#{session_id}"


def session_key(session_id: str, sk: str) -> Item:
    """Key of an item in a session's partition of the sessions table (HEAD, STATE, ...)."""
    return {PK: s(session_pk(session_id)), SK: s(sk)}


def head_key(session_id: str) -> Item:
    return session_key(session_id, HEAD)


def records_sk(kind: str) -> str:
    return f"{RECORDS_PREFIX}{kind}"


def idempotency_sk(key: str) -> str:
    return f"{IDEMPOTENCY_PREFIX}{key}"


def owner_index_key(owner: str, session_id: str) -> Item:
    """The owner's consistent index entry for a session (used by search, which must see every write)."""
    return {PK: s(f"O#{owner}"), SK: s(f"{OWNER_INDEX_PREFIX}{session_id}")}


def checkpoint_key(scope: str, key: str, owner: str | None = None) -> Item:
    """Session-scope checkpoints live in the session's partition (and go with it); run and workflow
    checkpoints have partitions of their own, one namespace per owner (the owner's digest is in the key),
    so owners neither see nor block each other's keys; without an owner, the shared namespace."""
    if scope == "session":
        return session_key(key, CHECKPOINT)
    if owner is None:
        return {PK: s(f"C#{scope}#{key}"), SK: s(CHECKPOINT)}
    return {PK: s(f"C#{scope}#{digest(owner)}#{key}"), SK: s(CHECKPOINT)}


def message_key(session_id: str, seq: int) -> Item:
    return {SID: s(session_id), SEQ: n(seq)}


def owner_sort_key(updated_at_iso: str, session_id: str) -> str:
    """by_owner sort key: most recently updated sorts last (queried newest first)."""
    return f"{updated_at_iso}#{session_id}"


ARTIFACT_PREFIX = "ART#"
ARTIFACT_VERSION_PREFIX = "ARTV#"
RUN_PREFIX = "RUN#"


def artifact_sk(name_digest: str) -> str:
    """An artifact's index item (its latest version), by the digest of its name."""
    return f"{ARTIFACT_PREFIX}{name_digest}"


def artifact_versions_prefix(name_digest: str) -> str:
    return f"{ARTIFACT_VERSION_PREFIX}{name_digest}#"


def artifact_version_sk(name_digest: str, version: int) -> str:
    return f"{artifact_versions_prefix(name_digest)}{version:010d}"


def run_sk(run_id: str) -> str:
    """A trace run's item: how many batches it has."""
    return f"{RUN_PREFIX}{run_id}"
