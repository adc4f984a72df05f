"""A session as JSON lines, and back: how a session moves between stacks (`agent-store sessions export |
import`). The format is documented in docs/export-format.md; every line is one JSON object with a `type`:

    {"type": "session", "format": "agent-session-store/export", "version": 1, "session": {...}}
    {"type": "message", "message": {...}, "canonical": {...}}   one per message, in sequence order: as
                                                           stored, and its canonical view (for readers;
                                                           import restores `message` and ignores it)
    {"type": "state", "state": {...}}                      the current state, when one was saved
    {"type": "interrupt", "interrupt": {...}}              the pending interrupt, when there is one
    {"type": "records", "kind": "...", "records": [...]}   per kind asked for
    {"type": "artifact", "version": {...}, "data": "<base64>"}   every version of every artifact, oldest first
    {"type": "trace", "run_id": "...", "events": [...]}    per run, in the order the runs started

Import is idempotent: run twice, or after an import cut short, it writes only what the target lacks (the
messages past the target's last one, each batch under an idempotency key; a state or interrupt that
differs; artifact versions past the target's count; trace events past the target's count per run)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from store.conversation import canonical
from store.core import codec
from store.errors import Conflict, InvalidInput, SessionExists, SessionNotFound
from store.models import ArtifactVersion, Message, MessageRecord, Session, StateSnapshot
from store.session_store import SessionStore

FORMAT = "agent-session-store/export"
VERSION = 1
LINE_ENVELOPE = 4  # the line's own object around a stored value ({"type": "message", "message": {"content": ...}})
PAGE = 500  # messages read per request on export
BATCH = 50  # messages written per append on import
RECORD_FIELDS = {"seq", "session_id", "created_at", "kind"}  # a record's place in its transcript, not the message


@dataclass
class Counts:
    """What an export wrote or an import found and wrote, by kind of line."""

    messages: int = 0
    artifacts: int = 0
    trace_events: int = 0
    records: int = 0
    state: int = 0
    written: dict[str, int] = field(default_factory=dict)

    def wrote(self, kind: str, n: int = 1) -> None:
        self.written[kind] = self.written.get(kind, 0) + n


Progress = Callable[[str, int], None]  # (kind, how many so far)


def json_line(obj: dict[str, Any]) -> str:
    """One JSON object as a line of JSON lines (compact, UTF-8 as is)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str) + "\n"


def export_session(
    store: SessionStore,
    session_id: str,
    out: TextIO,
    *,
    records: Iterable[str] = (),
    progress: Progress | None = None,
) -> Counts:
    """Write session `session_id` to `out` as JSON lines (the module's format); SessionNotFound when it
    does not exist. `records`: the kinds of records to include (a store does not list them)."""
    session = store.get_session(session_id)
    if session is None:
        raise SessionNotFound(session_id)
    counts = Counts()
    out.write(
        json_line({"type": "session", "format": FORMAT, "version": VERSION, "session": session.model_dump(mode="json")})
    )
    for record in iter_messages(store, session_id):
        message = record.model_dump(mode="json", exclude_none=True)
        view = canonical(record).model_dump(mode="json", exclude_none=True)
        out.write(json_line({"type": "message", "message": message, "canonical": view}))
        counts.messages += 1
        if progress and counts.messages % PAGE == 0:
            progress("messages", counts.messages)
    state = store.load_state(session_id)
    if state is not None:
        out.write(json_line({"type": "state", "state": state.model_dump(mode="json")}))
        counts.state = 1
    interrupt = store.load_interrupt(session_id)
    if interrupt is not None:
        out.write(json_line({"type": "interrupt", "interrupt": interrupt}))
    for kind in records:
        found = store.load_records(session_id, kind)
        out.write(json_line({"type": "records", "kind": kind, "records": found}))
        counts.records += len(found)
    for latest in store.list_artifacts(session_id):
        for version in store.list_artifact_versions(session_id, latest.name):
            data = store.get_artifact(session_id, version.name, version=version.version) or b""
            out.write(
                json_line(
                    {
                        "type": "artifact",
                        "version": version.model_dump(mode="json"),
                        "data": base64.b64encode(data).decode(),
                    }
                )
            )
            counts.artifacts += 1
            if progress:
                progress("artifacts", counts.artifacts)
    for run in store.list_trace_runs(session_id):
        events = store.load_trace_events(session_id, run)
        out.write(json_line({"type": "trace", "run_id": run, "events": events}))
        counts.trace_events += len(events)
    if progress:
        progress("done", counts.messages)
    return counts


def iter_messages(store: SessionStore, session_id: str, *, after_seq: int | None = None) -> Iterator[MessageRecord]:
    """Every message after `after_seq`, in order, a page at a time."""
    cursor = None
    while True:
        page = store.list_messages(session_id, after_seq=after_seq, limit=PAGE, cursor=cursor)
        yield from page.items
        cursor = page.next_cursor
        if cursor is None:
            return


def read_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The objects of an export, checked: InvalidInput for a line that is not an object with a known type,
    or a first line that is not this format's session line."""
    first = True
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        obj = codec.parse(text, f"line {number}", max_depth=codec.MAX_DEPTH + LINE_ENVELOPE)
        if not isinstance(obj, dict) or obj.get("type") not in KINDS:
            raise InvalidInput(f"line {number} is not a line of an export (a JSON object with a known type)")
        if first and (obj["type"] != "session" or obj.get("format") != FORMAT):
            raise InvalidInput(f"line {number}: an export starts with its session line (format {FORMAT!r})")
        if first and obj.get("version") != VERSION:
            raise InvalidInput(f"export format version {obj.get('version')!r} is not {VERSION}")
        first = False
        yield obj


KINDS = frozenset({"session", "message", "state", "interrupt", "records", "artifact", "trace"})


@dataclass
class _Importer:
    store: SessionStore
    owner: str
    session_id: str
    progress: Progress | None
    counts: Counts = field(default_factory=Counts)
    pending: list[MessageRecord] = field(default_factory=list)
    last_seq: int = 0
    artifact_counts: dict[str, int] = field(default_factory=dict)

    def session(self, exported: Session, rename: str | None) -> None:
        self.session_id = rename or exported.id
        try:
            self.store.create_session(
                self.owner,
                session_id=self.session_id,
                title=exported.title,
                model=exported.model,
                metadata=exported.metadata,
                retention=exported.retention,
            )
            self.counts.wrote("session")
        except SessionExists:
            pass
        target = self.store.get_session(self.session_id, owner=self.owner)
        if target is None:  # the id is taken by another owner's session: never write into it
            raise SessionExists(self.session_id)
        self.last_seq = target.last_seq

    def message(self, record: MessageRecord) -> None:
        self.counts.messages += 1
        if record.seq < self.last_seq:
            return  # the target has it (an earlier import): its last one is checked below
        if record.seq == self.last_seq:
            if self.store.get_message(self.session_id, record.id, owner=self.owner) is None:
                raise Conflict(
                    f"session {self.session_id!r} holds other messages than the export's: import into a new id"
                )
            return
        self.pending.append(record)
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        key = hashlib.sha256(f"import:{self.session_id}:{batch[0].id}:{batch[0].seq}".encode()).hexdigest()[:48]
        messages = [
            Message.model_validate(r.model_dump(exclude={"seq", "session_id", "created_at", "kind"})) for r in batch
        ]
        try:
            written = self.store.append_messages(
                self.session_id, messages, expected_seq=self.last_seq, idempotency_key=key, owner=self.owner
            )
        except Conflict:
            raise Conflict(
                f"session {self.session_id!r} changed while it was imported (or holds other messages past "
                f"seq {self.last_seq}): import into a new id with --as"
            ) from None
        for source, target in zip(batch, written, strict=True):
            if source.kind == "compaction":
                self.store.mark_compaction(self.session_id, target.id, owner=self.owner)
        self.last_seq = written[-1].seq
        self.counts.wrote("messages", len(written))
        if self.progress:
            self.progress("messages", self.counts.messages)

    def state(self, snapshot: StateSnapshot) -> None:
        self.flush()
        self.counts.state = 1
        current = self.store.load_state(self.session_id, owner=self.owner)
        if current is None or current.state != snapshot.state:
            self.store.save_state(self.session_id, snapshot.state, owner=self.owner)
            self.counts.wrote("state")

    def interrupt(self, interrupt: dict[str, Any]) -> None:
        if self.store.load_interrupt(self.session_id, owner=self.owner) != interrupt:
            self.store.save_interrupt(self.session_id, interrupt, owner=self.owner)
            self.counts.wrote("interrupt")

    def records(self, kind: str, records: list[Any]) -> None:
        self.counts.records += len(records)
        if self.store.load_records(self.session_id, kind, owner=self.owner) != records:
            self.store.save_records(self.session_id, kind, records, owner=self.owner)
            self.counts.wrote("records", len(records))

    def artifact(self, version: ArtifactVersion, data: bytes) -> None:
        self.counts.artifacts += 1
        if version.name not in self.artifact_counts:
            self.artifact_counts[version.name] = len(
                self.store.list_artifact_versions(self.session_id, version.name, owner=self.owner)
            )
        seen = self.artifact_counts.setdefault(version.name, 0)
        if version.version <= seen:
            return
        if hashlib.sha256(data).hexdigest() != version.sha256:
            raise InvalidInput(
                f"artifact {version.name!r} version {version.version}: its bytes do not match its sha256"
            )
        self.store.put_artifact(
            self.session_id,
            version.name,
            data,
            content_type=version.content_type,
            metadata=version.metadata,
            owner=self.owner,
        )
        self.artifact_counts[version.name] = seen + 1
        self.counts.wrote("artifacts")
        if self.progress:
            self.progress("artifacts", self.counts.artifacts)

    def trace(self, run_id: str, events: list[dict[str, Any]]) -> None:
        self.counts.trace_events += len(events)
        have = len(self.store.load_trace_events(self.session_id, run_id, owner=self.owner))
        missing = events[have:]
        if missing:
            self.store.append_trace_events(self.session_id, run_id, missing, owner=self.owner)
            self.counts.wrote("trace_events", len(missing))


def import_session(
    store: SessionStore,
    owner: str,
    lines: Iterable[str],
    *,
    session_id: str | None = None,
    progress: Progress | None = None,
) -> tuple[str, Counts]:
    """Write an export into `store` as `owner`'s session `session_id` (else the exported id); returns the id
    and the counts. Every read and write is `owner`'s: a target id another owner's session holds is refused
    (SessionExists), and nothing of theirs is read or changed.
    Idempotent (see the module); InvalidInput for a malformed export, before anything of a bad line is written."""
    importer: _Importer | None = None
    for obj in read_lines(lines):
        kind = obj["type"]
        try:
            if kind == "session":
                if importer is not None:
                    raise InvalidInput("an export holds one session: a second session line")
                importer = _Importer(store, owner, "", progress)
                importer.session(Session.model_validate(obj["session"]), session_id)
                continue
            if importer is None:  # read_lines has checked that the session line comes first
                raise InvalidInput("an export starts with its session line")
            if kind == "message":
                importer.message(MessageRecord.model_validate(obj["message"]))
                continue
            importer.flush()
            if kind == "state":
                importer.state(StateSnapshot.model_validate(obj["state"]))
            elif kind == "interrupt":
                importer.interrupt(dict(obj["interrupt"]))
            elif kind == "records":
                importer.records(str(obj["kind"]), list(obj["records"]))
            elif kind == "artifact":
                importer.artifact(ArtifactVersion.model_validate(obj["version"]), base64.b64decode(obj["data"]))
            elif kind == "trace":
                importer.trace(str(obj["run_id"]), list(obj["events"]))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InvalidInput):
                raise
            raise InvalidInput(f"a {kind} line of the export is malformed: {type(exc).__name__}: {exc}") from None
    if importer is None:
        raise InvalidInput("the export is empty")
    importer.flush()
    return importer.session_id, importer.counts
