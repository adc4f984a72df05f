"""The settings a deployment chooses by environment variable, read in one place: `SessionStore.from_env` (every
deployed function) and the local stack (`make run`) both build their store's `Settings` here, so that no
variable is honoured by one and forgotten by the other.

| variable | setting | read by |
| --- | --- | --- |
| MEMORY_EMBEDDER | `embedder` | `store.embeddings.embedder_from_env` |
| EXTRACTION_MODEL, EXTRACTION_API_KEY | `extraction_model` | `store.extraction.triggers.model_from_env` |
| EXTRACTION_STRATEGIES | `extraction_strategies` | `store.extraction.triggers.strategies_from_env` |

(The tables, the bucket and the AWS variables name resources, not settings: `SessionStore.from_env` reads
them. EXTRACTION_EVERY and EXTRACTION_IDLE_MINUTES are the stream function's, read as it runs.)"""

from __future__ import annotations

import os

from store.embeddings import embedder_from_env
from store.extraction.triggers import model_from_env, strategies_from_env
from store.settings import Settings

VARIABLES = ("MEMORY_EMBEDDER", "EXTRACTION_MODEL", "EXTRACTION_API_KEY", "EXTRACTION_STRATEGIES")


def embedder_name(default: str = "") -> str:
    """The embedder MEMORY_EMBEDDER names, or `default` when it is not set ("" or "none": none)."""
    return os.environ.get("MEMORY_EMBEDDER", "").strip() or default


def settings_from_env(default_embedder: str = "") -> Settings:
    """The `Settings` the variables above choose; each one not set leaves its setting at the default
    (`default_embedder` for MEMORY_EMBEDDER: the local stack's offline model). InvalidInput, naming the
    variable, for a value none of them takes."""
    return Settings(
        embedder=embedder_from_env(embedder_name(default_embedder)),
        extraction_model=model_from_env(),
        extraction_strategies=tuple(s.name for s in strategies_from_env()),
    )
