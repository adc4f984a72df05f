"""The in-memory backend: the reference semantics of the public API, for tests and local use.

It is not a model of DynamoDB: it keeps sessions in dicts under one lock. It shares with the DynamoDB
backend everything that is not storage: body encoding and its size limits, cursors, search scoring,
usage arithmetic and the definition of expiry, so both behave the same."""

from __future__ import annotations

from store.backend import Backend, Methods
from store.memory.artifacts import MemoryArtifacts
from store.memory.checkpoints import MemoryCheckpoints
from store.memory.forks import MemoryForks
from store.memory.message_index import InProcessMessageIndex
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
    InProcessMessageIndex,
    Methods,
    Backend,
):
    """Sessions in a dict, guarded by one re-entrant lock; `execute` calls the method its request names."""

    name = "memory"

    def inventory(self) -> list[str]:
        """Everything this backend holds, expired or not, one name per thing, sorted: `session:<id>`,
        `message:<id>/<seq>` (and a branch's `message:<id>/<branch>/<seq>`), `state:<id>`, `slot:<id>/<name>`,
        `checkpoint:<scope>/<key>`, `claim:<id>/<key>`, `artifact:<id>/<name>/<version>`,
        `trace:<id>/<run>/<batch>`, `upload:<id>` (what deleting everything must bring to []: a test of an
        application's cleanup can assert it). Long-term memories are `memory_inventory`'s."""
        found: list[str] = []
        with self._lock:
            for sid, entry in self._sessions.items():
                found += entry.inventory(sid)
            found += [f"checkpoint:{scope}/{key}" for scope, _, key in self._checkpoints]
            found += [f"upload:{u}" for u in self._uploads]
        return sorted(found)

    def dump(self) -> str:
        """What this backend's sessions hold, as text (each session with its messages, state, slots, artifacts
        and traces; checkpoints; uploads): two equal dumps, equal contents. Long-term memory is
        `memory_inventory`'s."""
        with self._lock:
            return repr((self._sessions, self._checkpoints, self._uploads))

    def memory_inventory(self) -> str:
        """The long-term memories this backend holds (every owner's), as text: two equal, equal memories."""
        with self._lock:
            return repr(self._memories)


__all__ = ["MemoryBackend"]
