"""Memory that writes itself: extraction strategies distil a session's conversation (any framework's, read as
the canonical conversation) into the owner's memories, consolidated with what is already there.

    from store.extraction import OpenAICompatibleModel
    store = SessionStore.memory(Settings(extraction_model=OpenAICompatibleModel("http://127.0.0.1:11434/v1", "qwen3")))
    runs = store.extract_memories(session.id, strategies=["facts", "preferences"])

DESIGN.md, "Long-term memory"; docs/decisions.md, "Memory extraction"."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time each name is loaded on first use (below)
    from store.extraction.bedrock import BedrockConverseModel
    from store.extraction.limits import Limits
    from store.extraction.models import (
        ChatModel,
        FunctionModel,
        ModelError,
        ModelOutputInvalid,
        ModelRefused,
        ModelRejected,
        ModelReply,
        ModelRequest,
        ModelThrottled,
        ModelTimeout,
        ModelUnavailable,
    )
    from store.extraction.openai_compatible import OpenAICompatibleModel
    from store.extraction.run_records import RUNS_KIND, ExtractionRun, ExtractionRuns, MemoryChange
    from store.extraction.strategies import BUILT_IN, EPISODES, FACTS, PREFERENCES, SUMMARY, Strategy

_WHERE = {
    "BUILT_IN": "strategies",
    "BedrockConverseModel": "bedrock",
    "ChatModel": "models",
    "EPISODES": "strategies",
    "ExtractionRun": "run_records",
    "ExtractionRuns": "run_records",
    "FACTS": "strategies",
    "FunctionModel": "models",
    "Limits": "limits",
    "MemoryChange": "run_records",
    "ModelError": "models",
    "ModelOutputInvalid": "models",
    "ModelRefused": "models",
    "ModelRejected": "models",
    "ModelReply": "models",
    "ModelRequest": "models",
    "ModelThrottled": "models",
    "ModelTimeout": "models",
    "ModelUnavailable": "models",
    "OpenAICompatibleModel": "openai_compatible",
    "PREFERENCES": "strategies",
    "RUNS_KIND": "run_records",
    "SUMMARY": "strategies",
    "Strategy": "strategies",
}
__all__ = [
    "BUILT_IN",
    "EPISODES",
    "FACTS",
    "PREFERENCES",
    "RUNS_KIND",
    "SUMMARY",
    "BedrockConverseModel",
    "ChatModel",
    "ExtractionRun",
    "ExtractionRuns",
    "FunctionModel",
    "Limits",
    "MemoryChange",
    "ModelError",
    "ModelOutputInvalid",
    "ModelRefused",
    "ModelRejected",
    "ModelReply",
    "ModelRequest",
    "ModelThrottled",
    "ModelTimeout",
    "ModelUnavailable",
    "OpenAICompatibleModel",
    "Strategy",
]


def __getattr__(name: str) -> Any:
    """The package's names, each from its module on first use (`store.settings` imports `limits` early, before
    the modules that need the store's models)."""
    if name not in _WHERE:
        raise AttributeError(name)
    return getattr(importlib.import_module(f"store.extraction.{_WHERE[name]}"), name)
