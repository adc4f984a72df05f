"""A session's messages, found by meaning and by words: how the message index lies among the owner's memories.

Each indexed message is a memory of the store's own (`core.memories.reserved` namespaces, which no caller can
name, list or search): namespace (INDEX_ROOT, the session's id as stored), key its sequence number, value
{"session_id", "seq", "role", "text"}; its words and embedding are indexed as a memory's are, so a message
search is a memory search under that prefix (the owner's partition, the same vector index, hybrid ranking)
and forgetting an owner removes the index with the memories. How far a session is indexed is the session's
records of kind RECORDS_KIND (they go with the session, and outlive a forget: what was forgotten is not indexed
again). The backends share this module; the index is written off the turn's
path (the stream's function, or in-process on the memory backend) by `store.recall`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.core import memories as m
from store.models import MemoryHit, MemoryHits, MessageHit, MessageHits


@dataclass(frozen=True)
class IndexEntry:
    """One message as its session's index keeps it: its place, who said it, its words (`text`) and their
    embedding (`indexed`: None when the store has no embedder, or the message no words)."""

    seq: int
    role: str
    text: str
    indexed: m.Indexed | None = None


INDEX_ROOT = m.reserved("messages")
RECORDS_KIND = "message-index"  # the session's records that say how far its index goes
MAX_TEXT = 4000  # characters of a message the index keeps (and embeds)
SEQ_DIGITS = 12


def session_namespace(session_id: str) -> m.Namespace:
    """The namespace of a session's indexed messages."""
    return (INDEX_ROOT, session_id)


def seq_key(seq: int) -> str:
    """A message's key in its session's index: its sequence number, zero-padded so keys sort as numbers."""
    return f"{seq:0{SEQ_DIGITS}d}"


def entry_value(session_id: str, entry: IndexEntry) -> dict[str, Any]:
    """The memory value that keeps `entry`."""
    return {"session_id": session_id, "seq": entry.seq, "role": entry.role, "text": entry.text}


def progress_records(through: int, through_id: str) -> list[dict[str, Any]]:
    """The session records (kind RECORDS_KIND) that say it is indexed through message `through` (of id
    `through_id`)."""
    return [{"through": through, "id": through_id}]


def indexed_through(records: list[Any]) -> tuple[int, str]:
    """How far a session's records say its index goes (0: not at all), and that message's id."""
    first = records[0] if records and isinstance(records[0], dict) else {}
    through, mid = first.get("through"), first.get("id")
    if not isinstance(through, int) or isinstance(through, bool) or through <= 0:
        return 0, ""
    return through, mid if isinstance(mid, str) else ""


def entry_memories(
    session_id: str, entries: tuple[IndexEntry, ...]
) -> list[tuple[m.Namespace, str, dict[str, Any], str, m.Indexed | None]]:
    """The memories (namespace, key, value, indexed text, embedding) that keep a session's `entries`."""
    ns = session_namespace(session_id)
    return [(ns, seq_key(e.seq), entry_value(session_id, e), e.text, e.indexed) for e in entries]


def search_prefix(session_id: str | None) -> m.Namespace:
    """The namespace prefix a message search looks under: its session's, or the whole index."""
    return session_namespace(session_id) if session_id is not None else (INDEX_ROOT,)


def message_hit(hit: MemoryHit) -> MessageHit | None:
    """The message a memory hit of the index stands for (None when it does not read as one)."""
    value = hit.value
    session, seq, role, text = (value.get(k) for k in ("session_id", "seq", "role", "text"))
    if not (isinstance(session, str) and isinstance(seq, int) and isinstance(role, str) and isinstance(text, str)):
        return None
    return MessageHit(session_id=session, seq=seq, role=role, text=text, score=hit.score)


def message_hits(found: MemoryHits, live: set[str] | None = None) -> MessageHits:
    """`found` as messages; with `live`, only those of the sessions it names (a session deleted or expired
    whose index is not removed yet is absent)."""
    hits = [h for h in (message_hit(x) for x in found.items) if h is not None]
    kept = [h for h in hits if live is None or h.session_id in live]
    return MessageHits(items=kept, next_cursor=found.next_cursor, mode=found.mode)


def sessions_of(found: MemoryHits) -> list[str]:
    """The sessions `found` names, each once, in order."""
    return list(dict.fromkeys(h.session_id for h in (message_hit(x) for x in found.items) if h is not None))
