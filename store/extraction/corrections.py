"""An owner's correction of a memory's text, written once as steps (`store.extraction.steps`) that
`SessionStore` drives and `AsyncSessionStore` awaits: the memory read, its new text put with the text it had kept
first in its `history` (change `corrected`), its provenance, other fields and expiry as they were; only `text` is
indexed (what a search finds it by), as with an extracted memory."""

from __future__ import annotations

from typing import Any

from store.calls import CALLS
from store.core import memories as m
from store.core import validation as v
from store.core.steps import ask
from store.core.timeutil import iso
from store.errors import InvalidInput, MemoryNotFound
from store.extraction.consolidation import updated
from store.extraction.steps import Flow, now
from store.extraction.strategies import MAX_TEXT
from store.models import MemoryItem


def correction(owner: Any, namespace: Any, key: Any, text: Any) -> Flow[MemoryItem]:
    """The steps of `correct_memory`, its arguments checked first (InvalidInput before any step: an owner, a
    namespace and key as `put_memory` takes them, a text of 1 to MAX_TEXT characters). The steps end with the
    memory as put; MemoryNotFound when the owner has no such memory. Two calls: a get, a put (the last writer
    wins, as with `put_memory`)."""
    who, ns, name = v.owner(owner), m.namespace(namespace), m.key(key)
    checked = v.text(text, "text", MAX_TEXT)
    if checked is None or not checked.strip():
        raise InvalidInput("text must be a non-empty string")
    return _corrected(who, ns, name, checked.strip())


def _corrected(owner: str, namespace: m.Namespace, key: str, text: str) -> Flow[MemoryItem]:
    found = yield from ask(CALLS.get_memory, owner, namespace, key)
    if found is None:
        raise MemoryNotFound(f"no memory {key!r} in that namespace")
    value = dict(found.value)
    if value.get("text") == text:
        return found  # nothing to correct: nothing written
    at = yield from now()
    new = updated(value, text, value.get("source"), "corrected", iso(at))
    if "source" not in value:
        del new["source"]  # a memory put by hand has no provenance to keep
    left = None if found.expires_at is None else found.expires_at - at  # an expiry stays where it was
    if left is not None and left.total_seconds() <= 0:
        raise MemoryNotFound(f"no memory {key!r} in that namespace")  # it expired meanwhile
    return (yield from ask(CALLS.put_memory, owner, namespace, key, new, index=["text"], ttl=left))
