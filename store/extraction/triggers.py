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
from typing import Any

from store.errors import InvalidInput
from store.extraction.strategies import Strategy, strategies

DEFAULT_EVERY = 10
HEAD_SK = "HEAD"


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


def _number(image: Mapping[str, Any], name: str) -> int:
    value = image.get(name)
    try:
        return int(value["N"]) if isinstance(value, Mapping) and "N" in value else 0
    except (TypeError, ValueError):
        return 0


def _string(image: Mapping[str, Any], name: str) -> str | None:
    value = image.get(name)
    return value["S"] if isinstance(value, Mapping) and isinstance(value.get("S"), str) else None


def due(records: Iterable[Mapping[str, Any]], every: int) -> dict[str, str]:
    """The sessions (id -> owner) whose head, in these stream records (Lambda's DynamoDB stream event
    records), moved its `last_seq` across a multiple of `every`. A head being deleted is never due."""
    found: dict[str, str] = {}
    for record in records:
        change = record.get("dynamodb") or {}
        if record.get("eventName") != "MODIFY" or _string(change.get("Keys") or {}, "sk") != HEAD_SK:
            continue
        new, old = change.get("NewImage") or {}, change.get("OldImage") or {}
        session_id, owner = _string(new, "id"), _string(new, "owner")
        if session_id is None or owner is None or "deleting" in new:
            continue
        if _number(new, "last_seq") // every > _number(old, "last_seq") // every:
            found[session_id] = owner
    return found
