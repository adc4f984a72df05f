"""When extraction runs by itself, and with what, from a deployment's configuration.

- Every N messages: `due` reads the sessions table's stream (the head's change on each write) and names the
  sessions whose `last_seq` crossed a multiple of N in that change: no read, no state of its own. A run reads
  from where the strategy's last finished run stopped, so a trigger missed (a failed run) is made up by the
  next one, and one fired twice finds its range done.
- The model and strategies come from the environment (`model_from_env`, `strategies_from_env`):
  EXTRACTION_MODEL is `bedrock:<model id>` (Converse; deployed, the template's ExtractionModelId), or
  `openai:<base URL>#<model>` (an OpenAI-compatible endpoint; EXTRACTION_API_KEY when it needs one), or empty
  (off). EXTRACTION_STRATEGIES lists built-in names ("facts,preferences", the default); EXTRACTION_EVERY the N
  (10 by default)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from store.aws import keys
from store.errors import InvalidInput
from store.extraction.strategies import Strategy, strategies

DEFAULT_EVERY = 10
DEFAULT_IDLE_MINUTES = 30
IDLE_SCOPE = "workflow"
IDLE_PREFIX = "xi."  # an idle timer's checkpoint key: this and the session id
IDLE_PK = keys.checkpoint_key(IDLE_SCOPE, IDLE_PREFIX)[keys.PK]["S"]  # its partition key, as the stream shows it
TTL_PRINCIPAL = "dynamodb.amazonaws.com"  # who removes an item whose TTL passed


def model_from_env(spec: str | None = None) -> Any:
    """The model EXTRACTION_MODEL (or `spec`) names, or None when it is empty or "none"."""
    given = (os.environ.get("EXTRACTION_MODEL", "") if spec is None else spec).strip()
    if not given or given == "none":
        return None
    kind, _, rest = given.partition(":")
    if kind == "bedrock" and rest:
        from store.extraction.bedrock import BedrockConverseModel

        return BedrockConverseModel(rest)
    if kind == "openai" and "#" in rest:
        from store.extraction.openai_compatible import OpenAICompatibleModel

        url, _, model = rest.rpartition("#")
        return OpenAICompatibleModel(url, model, api_key=os.environ.get("EXTRACTION_API_KEY") or None)
    raise InvalidInput("EXTRACTION_MODEL is bedrock:<model id> or openai:<base URL>#<model>")


def strategies_from_env(spec: str | None = None) -> tuple[Strategy, ...]:
    """The built-in strategies EXTRACTION_STRATEGIES (or `spec`) names, comma-separated (default: facts and
    preferences)."""
    given = os.environ.get("EXTRACTION_STRATEGIES", "") if spec is None else spec
    names = [n.strip() for n in given.split(",") if n.strip()]
    return strategies(names or None)


def every_from_env(spec: str | None = None) -> int:
    """EXTRACTION_EVERY (or `spec`): extract after every this many messages of a session (1 to 1,000)."""
    given = os.environ.get("EXTRACTION_EVERY", "") if spec is None else spec
    try:
        every = int(given) if given.strip() else DEFAULT_EVERY
    except ValueError:
        raise InvalidInput("EXTRACTION_EVERY must be a whole number") from None
    if not 1 <= every <= 1000:
        raise InvalidInput("EXTRACTION_EVERY must be from 1 to 1,000")
    return every


def idle_from_env(spec: str | None = None) -> int:
    """EXTRACTION_IDLE_MINUTES (or `spec`): extract a session idle this long (0: never; at most a week)."""
    given = os.environ.get("EXTRACTION_IDLE_MINUTES", "") if spec is None else spec
    try:
        minutes = int(given) if given.strip() else DEFAULT_IDLE_MINUTES
    except ValueError:
        raise InvalidInput("EXTRACTION_IDLE_MINUTES must be a whole number") from None
    if not 0 <= minutes <= 7 * 24 * 60:
        raise InvalidInput("EXTRACTION_IDLE_MINUTES must be from 0 to 10,080")
    return minutes


def idle_key(session_id: str) -> str | None:
    """The key of a session's idle timer (a workflow checkpoint whose TTL is the idle time), or None for an id
    too long to carry (the checkpoint key is at most 128 characters)."""
    key = IDLE_PREFIX + session_id
    return key if len(key) <= 128 else None


def _number(image: Mapping[str, Any], name: str) -> int:
    value = image.get(name)
    try:
        return int(value["N"]) if isinstance(value, Mapping) and "N" in value else 0
    except (TypeError, ValueError):
        return 0


def _string(image: Mapping[str, Any], name: str) -> str | None:
    value = image.get(name)
    return value["S"] if isinstance(value, Mapping) and isinstance(value.get("S"), str) else None


@dataclass(frozen=True)
class HeadMove:
    """A session head's `last_seq` moving forward, as a stream record shows it (a head being deleted aside)."""

    session_id: str
    owner: str | None
    before: int
    after: int


def head_moves(records: Iterable[Mapping[str, Any]], *, backward: bool = False) -> list[HeadMove]:
    """The session heads, in these stream records (Lambda's DynamoDB stream event records), whose `last_seq`
    moved forward (or, with `backward`, either way: a popped message), in order; a head being deleted never
    counts."""
    found: list[HeadMove] = []
    for record in records:
        change = record.get("dynamodb") or {}
        if record.get("eventName") != "MODIFY" or _string(change.get("Keys") or {}, keys.SK) != keys.HEAD:
            continue
        new, old = change.get("NewImage") or {}, change.get("OldImage") or {}
        session_id = _string(new, "id")
        before, after = _number(old, "last_seq"), _number(new, "last_seq")
        if session_id is not None and "deleting" not in new and (after > before or (backward and after != before)):
            found.append(HeadMove(session_id, _string(new, "owner"), before, after))
    return found


def due(moves: Iterable[HeadMove], every: int) -> dict[str, str]:
    """The sessions (id -> owner) whose head moved its `last_seq` across a multiple of `every`."""
    return {m.session_id: m.owner for m in moves if m.owner is not None and m.after // every > m.before // every}


def changed(moves: Iterable[HeadMove]) -> dict[str, int]:
    """The sessions (id -> last_seq) whose head moved forward: the sessions whose idle timer starts again."""
    found: dict[str, int] = {}
    for m in moves:
        found[m.session_id] = max(found.get(m.session_id, 0), m.after)
    return found


def idle(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The sessions whose idle timer ran out: its checkpoint removed by DynamoDB's TTL (no other removal)."""
    found: list[str] = []
    for record in records:
        change = record.get("dynamodb") or {}
        who = record.get("userIdentity") or {}
        pk = _string(change.get("Keys") or {}, keys.PK) or ""
        if record.get("eventName") == "REMOVE" and who.get("principalId") == TTL_PRINCIPAL and pk.startswith(IDLE_PK):
            found.append(pk[len(IDLE_PK) :])
    return found
