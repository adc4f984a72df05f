"""Where the CLI's store is: a deployed or local API (`--api URL`, a token), or the tables themselves
(the environment's SESSIONS_TABLE, MESSAGES_TABLE, ARTIFACTS_BUCKET, as `SessionStore.from_env()` reads
them) seen as one owner (`--owner`). Either way a session is named as its owner names it over the API, and
another owner's sessions are absent."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any

from store.backends.http import HttpBackend
from store.backends.scoped import ScopedBackend
from store.core import codec
from store.errors import InvalidInput
from store.session_store import SessionStore

API_ENV = "AGENT_STORE_API"
TOKEN_ENV = "AGENT_STORE_TOKEN"  # nosec B105: the name of a variable, not a token
OWNER_ENV = "AGENT_STORE_OWNER"
OPERATOR_ENV = "AGENT_STORE_OPERATOR_KEY"  # nosec B105: the name of a variable, not a key


@dataclass
class Target:
    """The store the commands use and the owner they act as (what `list_sessions(owner)` is given)."""

    store: SessionStore
    owner: str
    where: str


def token_subject(token: str) -> str | None:
    """The `sub` claim of a JWT, read without verifying it (the API verifies; this only names the owner)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = codec.parse(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)), "a token", max_depth=8)
    except (ValueError, InvalidInput):
        return None
    subject = payload.get("sub") if isinstance(payload, dict) else None
    return subject if isinstance(subject, str) and subject else None


def resolve(args: Any, given: SessionStore | None = None) -> Target:
    """The target the options name: `given` (a store handed to `main`, seen as --owner), --api (with --token
    or AGENT_STORE_TOKEN), or the environment's tables as --owner (or AGENT_STORE_OWNER)."""
    api = args.api or os.environ.get(API_ENV)
    if given is None and api:
        token = args.token or os.environ.get(TOKEN_ENV)
        if not token:
            raise InvalidInput(f"--api needs a token: --token, or {TOKEN_ENV} in the environment")
        http = SessionStore(backend=HttpBackend(api, token, timeout=args.timeout))
        return Target(http, token_subject(token) or "me", api)
    owner: str | None = args.owner or os.environ.get(OWNER_ENV)
    if not owner:
        raise InvalidInput(f"name the owner whose sessions to use: --owner, or {OWNER_ENV} (or use --api)")
    store = given if given is not None else SessionStore.from_env()
    if getattr(args, "any_owner", False):  # the operator, across owners, said so by name
        return Target(store, owner, f"{store.backend_name} (any owner's sessions, ids as stored)")
    mine = SessionStore(
        backend=ScopedBackend(store.backend, owner, scope_ids=not args.unscoped), settings=store.settings
    )
    return Target(mine, owner, store.backend_name + (" (ids as stored)" if args.unscoped else ""))
