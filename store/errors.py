"""The store's exception hierarchy. Nothing else escapes a public call (botocore errors never do)."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class SessionNotFound(StoreError):
    """The session does not exist, has expired, is being deleted, or belongs to another owner."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} not found")
        self.session_id = session_id


class SessionExists(StoreError):
    """`create_session` was given an id that is already taken."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} already exists")
        self.session_id = session_id


class Conflict(StoreError):
    """An optimistic-concurrency expectation did not hold (stale `expected_seq` or `expected_version`,
    an idempotency key reused with a different payload, or contention that outlasted the retries)."""


class InvalidInput(StoreError, ValueError):
    """An argument is malformed: a bad id or name, a wrong type, a value out of range. Nothing was written."""


class PayloadTooLarge(StoreError):
    """A payload exceeds what the backend can store in one item or one transaction. Nothing was written."""


class AccessDenied(StoreError):
    """The HTTP API refused the caller's credentials: no token, an expired or unverifiable one, or one
    without a scope the deployment requires. Nothing was written."""


class StoreUnavailable(StoreError):
    """AWS could not be reached or refused the request after retries; the message names what failed."""


class MessageNotFound(StoreError, LookupError):
    """An update named a message that the session does not have."""

    def __init__(self, session_id: str, message_id: str) -> None:
        super().__init__(f"message {message_id!r} not found in session {session_id!r}")
        self.session_id = session_id
        self.message_id = message_id


class ArtifactNotFound(StoreError, LookupError):
    """An operation that needs an artifact version (presigning a download) named one that does not exist."""

    def __init__(self, session_id: str, name: str, version: int | None) -> None:
        which = "latest version" if version is None else f"version {version}"
        super().__init__(f"artifact {name!r} ({which}) not found in session {session_id!r}")
        self.session_id = session_id
        self.name = name
        self.version = version


class BranchNotFound(StoreError, LookupError):
    """A branch operation named a branch the session does not have (`restore_branch`, listing its
    messages)."""

    def __init__(self, session_id: str, branch: str) -> None:
        super().__init__(f"branch {branch!r} not found in session {session_id!r}")
        self.session_id = session_id
        self.branch = branch


class MemoryNotFound(StoreError, LookupError):
    """An operation that changes a memory (`correct_memory`) named one the owner does not have."""

    def __init__(self, message: str = "memory not found") -> None:
        super().__init__(message)
