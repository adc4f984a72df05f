"""Time and duration helpers shared by every backend: one definition of "now", "expired" and formats."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from store.errors import InvalidInput

Clock = Callable[[], datetime]

MAX_DURATION = timedelta(days=3650)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def to_duration(value: timedelta | int | float | None, what: str, *, allow_none: bool = True) -> timedelta | None:
    """Normalise a duration argument (timedelta or seconds) to a positive timedelta, or None when allowed."""
    if value is None:
        if allow_none:
            return None
        raise InvalidInput(f"{what} is required")
    if isinstance(value, bool) or not isinstance(value, timedelta | int | float):
        raise InvalidInput(f"{what} must be a timedelta or a number of seconds, not {type(value).__name__}")
    if not isinstance(value, timedelta) and not -MAX_DURATION.total_seconds() <= value <= MAX_DURATION.total_seconds():
        raise InvalidInput(f"{what} must be at most {MAX_DURATION.days} days")
    td = value if isinstance(value, timedelta) else timedelta(seconds=value)
    if td <= timedelta(0):
        raise InvalidInput(f"{what} must be positive")
    if td > MAX_DURATION:
        raise InvalidInput(f"{what} must be at most {MAX_DURATION.days} days")
    return td


def expiry(now: datetime, duration: timedelta) -> datetime:
    """The expiry instant for something written at `now` that lives `duration`, rounded up to a whole
    second (DynamoDB's TTL attribute holds whole epoch seconds, so every backend rounds the same way)."""
    return datetime.fromtimestamp(math.ceil((now + duration).timestamp()), UTC)


def is_expired(expires_at: datetime | None, now: datetime) -> bool:
    """True when `expires_at` is set and `now` has reached it: expired means absent."""
    return expires_at is not None and now >= expires_at


def epoch(dt: datetime) -> int:
    """Whole epoch seconds of an expiry instant (already rounded by `expiry`)."""
    return math.ceil(dt.timestamp())


def now_epoch(now: datetime) -> int:
    """Epoch seconds for comparisons: an item is live while its TTL is greater than this."""
    return math.floor(now.timestamp())


def from_epoch(value: int) -> datetime:
    """The UTC instant of whole epoch seconds."""
    return datetime.fromtimestamp(value, UTC)


def iso(dt: datetime) -> str:
    """Fixed-width, lexically sortable UTC timestamp with microseconds (used in keys and attributes)."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(value: str) -> datetime:
    """Inverse of `iso`."""
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def aware(value: datetime | None, what: str) -> datetime | None:
    """Check a caller's datetime: it must be timezone-aware; it is returned in UTC."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime")
    if value.tzinfo is None:
        raise InvalidInput(f"{what} must be timezone-aware")
    return value.astimezone(UTC)
