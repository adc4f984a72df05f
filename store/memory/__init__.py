"""The in-memory backend: the reference semantics of the public API, for tests and local use.

It is not a model of DynamoDB: it keeps sessions in dicts under one lock. It shares with the DynamoDB
backend everything that is not storage: body encoding and its size limits, cursors, search scoring,
usage arithmetic and the definition of expiry, so both behave the same."""

from __future__ import annotations

from store.backend import Backend, Methods
from store.memory.artifacts import MemoryArtifacts
from store.memory.checkpoints import MemoryCheckpoints
from store.memory.forks import MemoryForks
from store.memory.memories import InProcessMemories
from store.memory.messages import MemoryMessages
from store.memory.operations import MemoryOperations
from store.memory.sessions import MemorySessions
from store.memory.state import MemoryState
from store.memory.traces import MemoryTraces


class MemoryBackend(
    MemoryOperations,
    MemorySessions,
    MemoryForks,
    MemoryMessages,
    MemoryState,
    MemoryCheckpoints,
    MemoryArtifacts,
    MemoryTraces,
    InProcessMemories,
    Methods,
    Backend,
):
    """Sessions in a dict, guarded by one re-entrant lock; `execute` calls the method its request names."""

    name = "memory"


__all__ = ["MemoryBackend"]
