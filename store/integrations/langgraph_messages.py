"""LangGraph: a checkpoint's `messages` channel kept by reference to the thread's conversation.

The thread's conversation (its own session) holds each message of the root graph's `messages` channel once,
as `message_to_dict` wrote it. A checkpoint does not repeat them: it stores the channel as entries, each
either a run of the conversation's sequence numbers `[first, last, digest of their message ids]` or one
message inline `["v", kind, data]` (LangGraph's serde: a message the conversation does not hold, or holds
otherwise). So a checkpoint's size does not grow with the thread's history.

A run's digest names exactly which messages it means: a conversation changed since (a rewind's branch, a
pop) is seen as such, and the run is then read from the line that holds it (`Lines`), never misread."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict

from store.models import MessageRecord

Entry = list[Any]  # [first, last, digest] or ["v", kind, data]
INLINE = "v"


def ids_digest(ids: Sequence[str]) -> str:
    """A short digest of a run of message ids (which messages a run of sequence numbers means)."""
    return hashlib.sha256("\x00".join(ids).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def message_id(record: MessageRecord) -> str:
    """The LangChain message id of a conversation record ("" when it has none)."""
    content = record.content if isinstance(record.content, dict) else {}
    data = content.get("data")
    return str(data.get("id") or "") if isinstance(data, dict) else ""


def _as_message(record: MessageRecord) -> BaseMessage | None:
    """The LangChain message a conversation record holds (None when it holds something else)."""
    if not isinstance(record.content, dict) or "type" not in record.content:
        return None
    try:
        return messages_from_dict([record.content])[0]
    except (KeyError, TypeError, ValueError):
        return None


KNOWN_MAX = 10_000  # messages a saver keeps of one thread's conversation (the latest): memory stays bounded


@dataclass
class Known:
    """What a saver knows of one thread's conversation: the message at each sequence number it wrote or
    read there (as the conversation gives it back), and where each message id is; the latest KNOWN_MAX
    (older ones of a longer thread are written inline again, and read from the conversation)."""

    by_seq: dict[int, tuple[str, BaseMessage]] = field(default_factory=dict)
    by_id: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def learn(self, records: Iterable[MessageRecord]) -> None:
        """Remember these records of the conversation's current line (a later record at a sequence number
        replaces an earlier one: the line was rewound). Safe from several threads (a saver's readers)."""
        with self._lock:
            self._learn(list(records))

    def _learn(self, records: list[MessageRecord]) -> None:
        for record in records:
            message = _as_message(record)
            mid = message_id(record)
            if message is None or not mid:
                self.by_seq.pop(record.seq, None)
                continue
            self.by_seq[record.seq] = (mid, message)
            self.by_id[mid] = record.seq
        if len(self.by_seq) > KNOWN_MAX:
            for seq in sorted(self.by_seq)[: len(self.by_seq) - KNOWN_MAX]:
                mid, _ = self.by_seq.pop(seq)
                if self.by_id.get(mid) == seq:
                    del self.by_id[mid]

    def seq_of(self, message: BaseMessage) -> int | None:
        """Where the conversation holds exactly this message (same id, equal in every field), if it does."""
        seq = self.by_id.get(str(message.id or ""))
        if seq is None or seq not in self.by_seq:
            return None
        mid, held = self.by_seq[seq]
        return seq if mid == message.id and held == message else None


def entries_of(messages: Sequence[BaseMessage], known: Known, dumps: Callable[[Any], list[Any]]) -> list[Entry]:
    """The channel `messages` as entries: runs of consecutive sequence numbers of the conversation, and
    inline the messages it does not hold."""
    entries: list[Entry] = []
    run: list[int] = []
    run_ids: list[str] = []

    def close() -> None:
        if run:
            entries.append([run[0], run[-1], ids_digest(run_ids)])
            run.clear()
            run_ids.clear()

    for message in messages:
        seq = known.seq_of(message)
        if seq is None:
            close()
            entries.append([INLINE, *dumps(message)])
            continue
        if run and seq != run[-1] + 1:
            close()
        run.append(seq)
        run_ids.append(str(message.id))
    close()
    return entries


def runs(entries: Sequence[Entry]) -> list[tuple[int, int, str]]:
    """The runs of sequence numbers the entries name."""
    return [(e[0], e[1], e[2]) for e in entries if e and e[0] != INLINE]


Line = dict[int, tuple[str, BaseMessage]]  # a line of the conversation: seq -> (message id, message)


def line_of(records: Iterable[MessageRecord]) -> Line:
    """The records of one line of the conversation (the current one or a branch), by sequence number."""
    return {r.seq: (message_id(r), m) for r in records if (m := _as_message(r)) is not None}


def run_ids(ids_at: Callable[[int], str | None], first: int, last: int, digest: str) -> list[str] | None:
    """The message ids at sequence numbers `first`..`last` (`ids_at`: None where there is none) when they are
    exactly the run's (their digest is its digest), else None."""
    ids = [ids_at(seq) for seq in range(first, last + 1)]
    found = [i for i in ids if i is not None]
    return found if len(found) == len(ids) and ids_digest(found) == digest else None


def run_in(line: Line, first: int, last: int, digest: str) -> list[BaseMessage] | None:
    """The run's messages when `line` holds exactly them (copies: the caller may change them), else None."""
    if run_ids(lambda seq: line[seq][0] if seq in line else None, first, last, digest) is None:
        return None
    return [line[seq][1].model_copy(deep=True) for seq in range(first, last + 1)]


def channel_ids(
    entries: Sequence[Entry], ids_at: Callable[[int], str | None], loads: Callable[[list[Any]], Any]
) -> list[str] | None:
    """The message ids of the channel the entries stand for, its runs read through `ids_at`; None when a run
    is not there."""
    out: list[str] = []
    for entry in entries:
        if entry and entry[0] == INLINE:
            out.append(str(loads(list(entry[1:])).id or ""))
        elif (ids := run_ids(ids_at, entry[0], entry[1], entry[2])) is not None:
            out += ids
        else:
            return None
    return out


def rebuild(
    entries: Sequence[Entry], lines: Sequence[Line], loads: Callable[[list[Any]], Any]
) -> list[BaseMessage] | None:
    """The channel the entries stand for, each run read from the first of `lines` that holds it; None when
    none holds one of them."""
    out: list[BaseMessage] = []
    for entry in entries:
        if entry and entry[0] == INLINE:
            out.append(loads(list(entry[1:])))
            continue
        found = next((m for line in lines if (m := run_in(line, entry[0], entry[1], entry[2])) is not None), None)
        if found is None:
            return None
        out += found
    return out
