"""What every function shares: one store per Lambda container, built from the environment on first use."""

from __future__ import annotations

import importlib
import logging
import os
import random
from typing import Any

from store import SessionStore
from store.session_store import forget_sdk_sessions

_store: SessionStore | None = None

# botocore logs whole request and response bodies at DEBUG, and those are the sessions' data: however the
# function's log level is set, the SDK's loggers stop at INFO.
for _sdk in ("botocore", "boto3", "s3transfer", "urllib3"):
    logging.getLogger(_sdk).setLevel(logging.INFO)

# The API function's clients give up on an unanswered request sooner than the SDK's defaults (5 s to
# connect, 60 s to read), so that three attempts of one call fit in a request's budget.
API_CONNECT_TIMEOUT = 2
API_READ_TIMEOUT = 6
API_ATTEMPTS = 3

# X-Ray subsegments for the one library the functions call AWS through. Powertools' default patches every
# library the X-Ray SDK knows (HTTP clients, database drivers, ...), importing each one it finds installed.
TRACED_MODULES = ("botocore",)


def request_budget() -> float | None:
    """REQUEST_BUDGET_SECONDS: the most one API request may take (the template sets it below the function's
    timeout), or None where no budget is set (the cascade, the local tools)."""
    value = os.environ.get("REQUEST_BUDGET_SECONDS")
    return float(value) if value else None


# every answer: never sniffed into another type, never cached by a shared cache (it is one owner's data)
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}

# what is left of the function's time when the request starts, less this, bounds the request's retries
TIMEOUT_MARGIN_SECONDS = 2.0


def time_budget(context: Any) -> float:
    """Seconds this request may spend: the configured budget, within what the invocation has left."""
    left = float(context.get_remaining_time_in_millis()) / 1000 - TIMEOUT_MARGIN_SECONDS
    budget = request_budget()
    return max(0.0, left if budget is None else min(budget, left))


def store() -> SessionStore:
    """The container's store (SESSIONS_TABLE, MESSAGES_TABLE, ARTIFACTS_BUCKET; clients reused across calls)."""
    global _store
    if _store is None:
        config = None
        if request_budget() is not None:
            from botocore.config import Config

            config = Config(
                connect_timeout=API_CONNECT_TIMEOUT,
                read_timeout=API_READ_TIMEOUT,
                retries={"mode": "standard", "max_attempts": API_ATTEMPTS},
            )
        _store = SessionStore.from_env(config=config)
    return _store


def installed_store() -> SessionStore | None:
    """The store `use_store` installed (or the one built from the environment), None before either."""
    return _store


def use_store(instance: SessionStore | None) -> None:
    """Serve events with `instance` (the local stack and tests); None goes back to the environment's."""
    global _store
    _store = instance


def after_restore() -> None:
    """After a Lambda SnapStart restore: what was made before the snapshot is shared by every environment
    restored from it, so make it again: the store (its clients' connections and credentials, its position
    cache) and the SDK sessions, on first use; and the random generator's seed (backoff jitter must differ
    between environments, or their retries collide in step)."""
    global _store
    _store = None
    forget_sdk_sessions()
    random.seed()


def register_snapstart_hooks() -> bool:
    """Register `after_restore` with the Lambda runtime's SnapStart hooks (`snapshot_restore_py`, present
    in Python 3.12+ runtimes); False where there is no such runtime (without SnapStart nothing is needed)."""
    try:
        hooks = importlib.import_module("snapshot_restore_py")
    except ImportError:
        return False
    hooks.register_after_restore(after_restore)
    return True
