"""Session ids namespaced by owner, for the boundaries where ids come from many tenants (the HTTP API, the
framework adapters): two owners may both call a session "chat-42" without seeing or blocking each other,
and an id tells nobody whether another owner has one like it.

    scoped_id("alice", "chat-42")  ->  "<24 hex digits of alice's digest>.chat-42"

The library itself stores whatever id it is given (callers that pass no owner, or scope ids their own way,
keep doing so); these two functions are the one mapping the API and the adapters share, so a session an
agent made through an adapter is the same session its owner's front end reads over HTTP.
"""

from __future__ import annotations

import hashlib

from store.core.validation import ID_PATTERN, ident, owner
from store.errors import InvalidInput

TAG_CHARS = 24  # 96 bits of the owner's SHA-256: owners are verified subjects, not chosen to collide
MAX_LOCAL_ID = 100  # the tag, its separator and the id stay within the store's 128 characters
VERBATIM = "."  # tag.local: the local id as given (reversible)
HASHED = ":"  # tag:hash: a local id that is not a store id, or too long (not reversible)


def owner_tag(owner_: str) -> str:
    """The fixed-length tag that starts every id scoped to `owner_`."""
    return hashlib.sha256(owner(owner_).encode("utf-8")).hexdigest()[:TAG_CHARS]


def scoped_id(owner_: str, local_id: str) -> str:
    """The store session id of `local_id` in `owner_`'s namespace: the tag and the id itself when the id is
    a store id of at most MAX_LOCAL_ID characters, else the tag and a digest of it (stable, one-way)."""
    tag = owner_tag(owner_)
    if ID_PATTERN.fullmatch(local_id) and len(local_id) <= MAX_LOCAL_ID:
        return f"{tag}{VERBATIM}{local_id}"
    digest = hashlib.sha256(local_id.encode("utf-8", "surrogatepass")).hexdigest()[:64]
    return f"{tag}{HASHED}{digest}"


def local_id(value: object, what: str = "session_id") -> str:
    """`value` as an owner's own session id: a store id of at most MAX_LOCAL_ID characters (the rest of the
    store's 128 hold the owner's tag), else InvalidInput, so that the id stays reversible and listed."""
    checked = ident(value, what)
    if len(checked) > MAX_LOCAL_ID:
        raise InvalidInput(f"{what}: an owner's session ids are at most {MAX_LOCAL_ID} characters")
    return checked


def unscoped_id(owner_: str, session_id: str) -> str | None:
    """The local id that `scoped_id(owner_, ...)` turned into `session_id`, or None when `session_id` is not
    a reversible id of `owner_`'s namespace."""
    prefix = owner_tag(owner_) + VERBATIM
    return session_id[len(prefix) :] if session_id.startswith(prefix) else None
