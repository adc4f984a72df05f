"""The store's public operations as one class (every backend's, and nothing built above them: `SessionStore` is it
with the configuration and memory extraction), and `CALLS`, the stand-in by which flows above the store (memory
extraction's runs, the LangGraph saver's) name the operations they ask for (`store.core.steps.ask`), typed."""

from __future__ import annotations

from store.core.steps import names_of
from store.front.artifacts import Artifacts
from store.front.checkpoints import Checkpoints
from store.front.forks import Forks
from store.front.memories import Memories
from store.front.message_index import MessageIndex
from store.front.messages import Messages
from store.front.operations import Operations
from store.front.sessions import Sessions
from store.front.state import State
from store.front.traces import Traces


class PublicOperations(
    Sessions, Forks, Messages, State, Checkpoints, Artifacts, Traces, MessageIndex, Memories, Operations
):
    """Sessions, transcripts, state, checkpoints, records, artifacts, traces, memories and the message index: the
    operations every backend carries out (`SessionStore` adds the store's configuration and memory extraction)."""


CALLS = names_of(PublicOperations)  # `ask(CALLS.get_memory, owner, namespace, key)`: a typed call of the store
