"""The CLI's commands: each takes the parsed options, the target store and the output stream, prints for
a person (or JSON with --json) and returns the exit status."""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from store.conversation import viewed
from store.core import codec
from store.errors import ArtifactNotFound, InvalidInput, SessionNotFound
from store.tools.cli.show import Progress, as_json, message_lines, short, table
from store.tools.cli.target import Target
from store.tools.export import export_session, import_session, iter_messages, json_line
from store.tools.trace_view import spans, waterfall


def mint_token(args: Any, out: TextIO) -> int:
    """`agent-store token --sub NAME`: ask the running local stack (--api) for a development token for NAME,
    with the operator key it printed at start, so that a second owner needs no restart and no code."""
    import json
    import os

    from store.backends.http import HttpBackend
    from store.requests import HealthCheck
    from store.tools.cli.target import API_ENV, OPERATOR_ENV, TOKEN_ENV

    api, key = args.api or os.environ.get(API_ENV), args.operator_key or os.environ.get(OPERATOR_ENV)
    if not api or not key:
        raise InvalidInput(
            f"token needs the local stack's API and its operator key (printed by make run): --api and "
            f"--operator-key ({API_ENV}, {OPERATOR_ENV})"
        )
    http = HttpBackend(api, "", timeout=args.timeout)
    reply = http.send("POST", "/_local/token", body={"sub": args.sub}, headers={"X-Agent-Store-Operator": key})
    if reply.status == 404:
        raise InvalidInput(f"{api} mints no tokens: only the local stack (make run) does")
    if reply.status == 403:
        raise InvalidInput("the local stack refused the operator key (it is printed when the stack starts)")
    checked = http.check(reply, HealthCheck())
    minted = str(json.loads(checked.body)["token"]) if checked is not None else ""
    out.write(f"export {TOKEN_ENV}={minted}\n" if args.export else minted + "\n")
    return 0


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else ""


def sessions_list(args: Any, t: Target, out: TextIO) -> int:
    """A page of the owner's conversations, most recently updated first (--all: every page; --internal: with
    the sessions adapters keep for themselves). An untitled session shows its first user message."""
    items, cursor = [], args.cursor
    while True:
        page = t.store.list_sessions(t.owner, limit=args.limit, cursor=cursor, conversations_only=not args.internal)
        items += page.items
        cursor = page.next_cursor
        if not args.all or cursor is None:
            break
    if args.json:
        out.write(as_json({"items": items, "next_cursor": cursor}) + "\n")
        return 0
    rows = [
        (s.id, short(s.title or s.preview or "", 40), s.last_seq, s.usage.total_tokens or "", _when(s.updated_at))
        for s in items
    ]
    table(("ID", "TITLE", "MESSAGES", "TOKENS", "UPDATED"), rows, out)
    if cursor is not None:
        sys.stderr.write(f"more: --cursor {cursor}\n")
    return 0


def sessions_search(args: Any, t: Target, out: TextIO) -> int:
    """One bounded search call: hits best first, and how far it got."""
    hits = t.store.search(t.owner, args.query, limit=args.limit, cursor=args.cursor)
    if args.json:
        document = {
            "items": list(hits),
            "next_cursor": hits.next_cursor,
            "sessions_searched": hits.sessions_searched,
            "messages_searched": hits.messages_searched,
        }
        out.write(as_json(document) + "\n")
        return 0
    table(
        ("SESSION", "SEQ", "SCORE", "SNIPPET"),
        [(h.session_id, h.seq, f"{h.score:.2f}", short(h.snippet, 80)) for h in hits],
        out,
    )
    sys.stderr.write(f"searched {hits.sessions_searched} sessions, {hits.messages_searched} messages\n")
    if hits.next_cursor:
        sys.stderr.write(f"older sessions: --cursor {hits.next_cursor}\n")
    return 0


def sessions_show(args: Any, t: Target, out: TextIO) -> int:
    """A session: its head, the transcript (or its last N), state, interrupt, artifacts and trace runs; of a
    session whose transcript is still being copied in, its head and the copy's progress."""
    head = t.store.get_session(args.session_id)
    if head is not None and head.copying:
        _show_copying(head, args.json, out)
        return 0
    full = t.store.load_full(args.session_id, last=args.last)
    artifacts = t.store.list_artifacts(args.session_id)
    runs = t.store.list_trace_runs(args.session_id)
    interrupt = t.store.load_interrupt(args.session_id)
    if args.json:
        viewed_full = {"session": full.session, "messages": [viewed(m) for m in full.messages], "state": full.state}
        document = {"full": viewed_full, "interrupt": interrupt, "artifacts": artifacts, "trace_runs": runs}
        out.write(as_json(document) + "\n")
        return 0
    _show_head(t, args.session_id, full, out)
    _show_transcript(full, args.full, out)
    if interrupt is not None:
        out.write(f"\ninterrupt pending: {short(as_json(interrupt), 200)}\n")
    if artifacts:
        out.write("\nartifacts\n")
        table(
            ("NAME", "VERSION", "SIZE", "TYPE"), [(a.name, a.version, a.size, a.content_type) for a in artifacts], out
        )
    if runs:
        out.write(f"\ntrace runs: {', '.join(runs)}\n")
    branches = t.store.list_branches(args.session_id)
    if branches:
        out.write(f"\nbranches (agent-store sessions branches {args.session_id}): ")
        out.write(", ".join(f"{b.id} (after message {b.from_seq})" for b in branches) + "\n")
    return 0


def _show_copying(head: Any, as_document: bool, out: TextIO) -> None:
    """A session whose transcript is still being copied in: its head and the copy's progress."""
    if as_document:
        out.write(as_json({"session": head}) + "\n")
        return
    out.write(f"session {head.id}  {head.title or head.preview or ''}\n")
    out.write(f"  its transcript is being copied: {head.copied or 0} of {head.last_seq} messages; ")
    out.write("shown once the copy is done\n")


def _show_head(t: Target, session_id: str, full: Any, out: TextIO) -> None:
    """The session's head: title, model, counts, times, usage, where it was forked from, metadata, its other
    agents (Strands) and its checkpoint log (LangGraph)."""
    s = full.session
    out.write(f"session {s.id}  {s.title or s.preview or ''}\n")
    out.write(f"  model {s.model or '-'}; {s.last_seq} messages; ")
    out.write(f"created {_when(s.created_at)}, updated {_when(s.updated_at)}\n")
    if s.usage.numbers():
        out.write("  usage: " + ", ".join(f"{k} {v}" for k, v in s.usage.numbers().items()) + "\n")
    source = s.metadata.get("forked_from")
    if isinstance(source, dict):
        out.write(f"  forked from {source.get('session_id')} at message {source.get('seq')}")
        out.write("\n")
    if s.metadata:
        out.write(f"  metadata: {short(as_json(s.metadata), 200)}\n")
    agents = t.store.list_sessions(t.owner, metadata={"strands_parent": session_id}, limit=50).items
    if agents:
        out.write("  other agents: " + ", ".join(f"{a.metadata.get('agent_id', '?')} ({a.id})" for a in agents) + "\n")
    if s.metadata.get("langgraph") == "thread":  # its state names its log's generation once it was rewritten
        saved = full.state.state if full.state is not None and isinstance(full.state.state, dict) else {}
        out.write(f"  checkpoints: the thread's log, {session_id}.g{saved.get('generation', 0)}\n")


def _show_transcript(full: Any, whole: bool, out: TextIO) -> None:
    """The transcript read (all of it, or the last N: said so) and the state."""
    s = full.session
    shown = len(full.messages)
    out.write(f"\ntranscript ({shown} of {s.last_seq} messages)\n" if shown < s.last_seq else "\ntranscript\n")
    for message in full.messages:
        out.write("\n".join(message_lines(message, full=whole)) + "\n")
    if full.state is not None:
        out.write(f"\nstate (version {full.state.version}, as of message {full.state.seq}): ")
        out.write(short(as_json(full.state.state), 400) + "\n")


def sessions_export(args: Any, t: Target, out: TextIO) -> int:
    """The session as JSON lines (docs/export-format.md), to --output or stdout; progress on stderr."""
    session = t.store.get_session(args.session_id)
    if session is None:
        raise SessionNotFound(args.session_id)
    kinds = [k for k in (args.records or "").split(",") if k]
    progress = Progress(f"export {args.session_id}", session.last_seq, quiet=args.quiet)
    with ExitStack() as stack:
        sink = out if args.output in (None, "-") else stack.enter_context(_create(args.output))
        counts = export_session(t.store, args.session_id, sink, records=kinds, progress=progress)
    progress.finish()
    sys.stderr.write(
        f"exported {args.session_id}: {counts.messages} messages, {counts.artifacts} artifact versions, "
        f"{counts.trace_events} trace events, {counts.records} records\n"
    )
    return 0


def _create(path: str) -> TextIO:
    try:
        return open(path, "x", encoding="utf-8")
    except FileExistsError:
        raise InvalidInput(f"{path} exists: export to a new file") from None


def sessions_import(args: Any, t: Target, out: TextIO) -> int:
    """An export into the target (as --as ID, else its own id); idempotent."""
    with ExitStack() as stack:
        if args.file == "-":
            source: TextIO = sys.stdin
        else:
            try:
                source = stack.enter_context(open(args.file, encoding="utf-8"))
            except OSError as exc:
                raise InvalidInput(f"cannot read {args.file}: {exc.strerror}") from None
        progress = Progress(f"import {Path(args.file).name}", quiet=args.quiet)
        session_id, counts = import_session(t.store, t.owner, source, session_id=args.as_id, progress=progress)
    progress.finish()
    written = ", ".join(f"{n} {k}" for k, n in counts.written.items()) or "nothing new"
    if args.json:
        out.write(as_json({"session_id": session_id, "written": counts.written, "read": counts.messages}) + "\n")
    else:
        out.write(f"imported {session_id}: {counts.messages} messages read; written: {written}\n")
    return 0


def sessions_delete(args: Any, t: Target, out: TextIO) -> int:
    """Delete a session and everything it owns (asks first on a terminal, unless --yes)."""
    if t.store.get_session(args.session_id) is None:
        raise SessionNotFound(args.session_id)
    if not args.yes:
        if not sys.stdin.isatty():
            raise InvalidInput(f"deleting {args.session_id} cannot be undone: add --yes")
        answer = input(f"delete session {args.session_id} and everything it owns? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            out.write("not deleted\n")
            return 1
    t.store.delete_session(args.session_id)
    out.write(f"deleted {args.session_id}\n")
    return 0


def messages_tail(args: Any, t: Target, out: TextIO) -> int:
    """The last N messages; with --follow, each new one as it is appended (polling every --interval s),
    until Ctrl-C or --for seconds."""
    last = t.store.last_messages(args.session_id, args.n) if args.n else []
    seq = last[-1].seq if last else (t.store.get_session(args.session_id) or _missing(args.session_id)).last_seq
    for message in last:
        _emit(args, message, out)
    if not args.follow:
        return 0
    stop = None if args.for_seconds is None else time.monotonic() + args.for_seconds
    while stop is None or time.monotonic() < stop:
        time.sleep(args.interval)
        for message in iter_messages(t.store, args.session_id, after_seq=seq):
            _emit(args, message, out)
            seq = message.seq
    return 0


def _missing(session_id: str) -> Any:
    raise SessionNotFound(session_id)


def _emit(args: Any, message: Any, out: TextIO) -> None:
    if args.json:
        out.write(message.model_dump_json(exclude_none=True) + "\n")
    else:
        out.write("\n".join(message_lines(message, full=args.full)) + "\n")
    out.flush()


def traces_show(args: Any, t: Target, out: TextIO) -> int:
    """A run's events as a waterfall (the session's latest run when none is named)."""
    runs = t.store.list_trace_runs(args.session_id)
    if not runs:
        if t.store.get_session(args.session_id) is None:
            raise SessionNotFound(args.session_id)
        raise InvalidInput(f"session {args.session_id} has no trace runs")
    run = args.run or runs[-1]
    if run not in runs:
        raise InvalidInput(f"session {args.session_id} has no run {run!r} (runs: {', '.join(runs)})")
    events = t.store.load_trace_events(args.session_id, run)
    if args.json:
        out.write(as_json({"run_id": run, "events": events}) + "\n")
        return 0
    items = spans(events)
    total = max((s.end for s in items), default=0.0)
    out.write(f"run {run}: {len(items)} events over {total * 1000:.1f} ms\n")
    out.write("\n".join(waterfall(items, width=args.width)) + "\n")
    return 0


def traces_export(args: Any, t: Target, out: TextIO) -> int:
    """A session's runs (or one) as one OTLP/JSON ExportTraceServiceRequest."""
    import json

    from store.tools.otlp import otlp_document

    runs = t.store.list_trace_runs(args.session_id)
    if not runs and t.store.get_session(args.session_id) is None:
        raise SessionNotFound(args.session_id)
    if args.run is not None and args.run not in runs:
        raise InvalidInput(f"session {args.session_id} has no run {args.run!r}")
    chosen = [args.run] if args.run else runs
    document = otlp_document(args.session_id, [(r, t.store.load_trace_events(args.session_id, r)) for r in chosen])
    text = json.dumps(document) + "\n"
    if args.output in (None, "-"):
        out.write(text)
    else:
        with _create(args.output) as sink:
            sink.write(text)
    return 0


def artifacts_list(args: Any, t: Target, out: TextIO) -> int:
    """The latest version of each artifact."""
    found = t.store.list_artifacts(args.session_id)
    if args.json:
        out.write(as_json(found) + "\n")
        return 0
    rows = [(a.name, a.version, a.size, a.content_type, _when(a.created_at)) for a in found]
    table(("NAME", "VERSION", "SIZE", "TYPE", "CREATED"), rows, out)
    return 0


def artifacts_get(args: Any, t: Target, out: TextIO) -> int:
    """An artifact version's bytes, to --output (or stdout when it is not a terminal)."""
    data = t.store.get_artifact(args.session_id, args.name, version=args.version)
    if data is None:
        raise ArtifactNotFound(args.session_id, args.name, args.version)
    if args.output in (None, "-"):
        if sys.stdout.isatty():
            raise InvalidInput("an artifact is bytes: give --output FILE, or pipe stdout")
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        try:
            with open(args.output, "xb") as sink:
                sink.write(data)
        except FileExistsError:
            raise InvalidInput(f"{args.output} exists: write to a new file") from None
        sys.stderr.write(f"wrote {len(data):,} bytes to {args.output}\n")
    return 0


def _session_line(verb: str, session: Any) -> str:
    copying = (
        f"; its transcript is being copied ({session.copied or 0} of {session.last_seq}), readable once it is done"
        if session.copying
        else ""
    )
    return f"{verb} {session.id}: {session.last_seq} messages{copying}\n"


def sessions_fork(args: Any, t: Target, out: TextIO) -> int:
    """A new session holding the session's messages up to --at (all by default), its state and artifacts."""
    fork = t.store.fork_session(args.session_id, at_seq=args.at, new_session_id=args.new_id, title=args.title)
    if args.json:
        out.write(as_json(fork) + "\n")
        return 0
    out.write(_session_line(f"forked {args.session_id} at message {fork.last_seq} into", fork))
    return 0


def sessions_rewind(args: Any, t: Target, out: TextIO) -> int:
    """Continue the session from message --to; the transcript as it was is kept as a branch."""
    before = {b.id for b in t.store.list_branches(args.session_id)}
    session = t.store.rewind_session(args.session_id, args.to, branch=args.branch)
    kept = [b for b in t.store.list_branches(args.session_id) if b.id not in before]
    if args.json:
        out.write(as_json({"session": session, "branch": kept[0] if kept else None}) + "\n")
        return 0
    out.write(_session_line("rewound", session))
    if kept:
        out.write(f"the transcript as it was is the branch {kept[0].id} (restore: agent-store sessions restore ")
        out.write(f"{args.session_id} {kept[0].id})\n")
    return 0


def sessions_branches(args: Any, t: Target, out: TextIO) -> int:
    """The branches the session keeps, oldest first."""
    branches = t.store.list_branches(args.session_id)
    if args.json:
        out.write(as_json({"items": branches}) + "\n")
        return 0
    rows = [(b.id, b.from_seq, b.last_seq, short(b.preview or "", 40), _when(b.created_at)) for b in branches]
    table(("BRANCH", "AFTER", "MESSAGES", "FIRST TURN", "KEPT"), rows, out)
    return 0


def sessions_restore(args: Any, t: Target, out: TextIO) -> int:
    """Make a branch the session's transcript again; the one it replaces is kept as a branch."""
    session = t.store.restore_branch(args.session_id, args.branch, keep_as=args.keep_as)
    if args.json:
        out.write(as_json(session) + "\n")
        return 0
    out.write(_session_line(f"restored {args.branch} in", session))
    return 0


# ---------------------------------------------------------------- long-term memory


def _namespace(text: str | None) -> tuple[str, ...]:
    """A namespace as the command line gives it: labels joined by "/", or a JSON array of labels (for labels
    that hold a "/")."""
    if not text:
        return ()
    if text.startswith("["):
        found = codec.parse(text, "the namespace", max_depth=2)
        if not isinstance(found, list) or not all(isinstance(x, str) for x in found):
            raise InvalidInput('a namespace in JSON is an array of strings, e.g. ["projects", "a/b"]')
        return tuple(found)
    return tuple(text.split("/"))


def _shown(value: Any) -> str:
    text = value.get("text") if isinstance(value, dict) else None
    return short(text if isinstance(text, str) else as_json(value), 80)


def memories_list(args: Any, t: Target, out: TextIO) -> int:
    """The owner's namespaces; with --namespace, the memories under it (namespace and key order)."""
    if args.namespace is None:
        names = t.store.list_namespaces(t.owner, limit=args.limit).items
        if args.json:
            out.write(as_json([list(n) for n in names]) + "\n")
        else:
            table(("NAMESPACE",), [("/".join(n),) for n in names], out)
        return 0
    found = t.store.search_memories(t.owner, _namespace(args.namespace), limit=min(args.limit, 100)).items
    if args.json:
        out.write(as_json(found) + "\n")
        return 0
    rows = [("/".join(h.namespace), h.key, _shown(h.value), _when(h.updated_at)) for h in found]
    table(("NAMESPACE", "KEY", "VALUE", "UPDATED"), rows, out)
    return 0


SEARCHED = {
    "semantic": "searched by meaning (semantic)",
    "keyword": "searched by words (keyword)",
    "hybrid": "searched by words and meaning (hybrid)",
}


def memories_search(args: Any, t: Target, out: TextIO) -> int:
    """Memories ranked against the query, with their scores (higher is better), and how the search ran (with
    --json: the page, its `items` and `mode`)."""
    page = t.store.search_memories(
        t.owner, _namespace(args.namespace), query=args.query, mode=args.mode, limit=min(args.limit, 100)
    )
    if args.json:
        out.write(as_json(page) + "\n")
        return 0
    rows = [
        (f"{h.score:.3f}" if h.score is not None else "-", "/".join(h.namespace), h.key, _shown(h.value))
        for h in page.items
    ]
    table(("SCORE", "NAMESPACE", "KEY", "VALUE"), rows, out)
    shown = SEARCHED.get(page.mode or "", "listed")
    if args.mode == "auto" and page.mode == "keyword":
        shown += ": the store has no embedder"
    out.write(shown + "\n")
    return 0


def memories_get(args: Any, t: Target, out: TextIO) -> int:
    found = t.store.get_memory(t.owner, _namespace(args.namespace), args.key)
    if found is None:
        raise InvalidInput(f"no memory {args.key!r} in {args.namespace}")
    out.write(as_json(found if args.json else found.value) + "\n")
    return 0


def memories_put(args: Any, t: Target, out: TextIO) -> int:
    try:
        value = codec.parse(args.value, "the value")
    except InvalidInput:
        value = {"text": args.value}
    if not isinstance(value, dict):
        value = {"text": args.value}
    made = t.store.put_memory(t.owner, _namespace(args.namespace), args.key, value, ttl=args.ttl)
    out.write(as_json(made) + "\n" if args.json else f"put {'/'.join(made.namespace)} {made.key}\n")
    return 0


def memories_delete(args: Any, t: Target, out: TextIO) -> int:
    t.store.delete_memory(t.owner, _namespace(args.namespace), args.key)
    if not args.json:
        out.write(f"deleted {args.namespace} {args.key}\n")
    return 0


def memories_export(args: Any, t: Target, out: TextIO) -> int:
    """Every memory under --namespace (all of the owner's by default), one JSON object a line, namespace by
    namespace (a namespace's first 1,000: a store's listing is bounded per call)."""
    prefix = _namespace(args.namespace)
    names_cursor = None
    while True:
        names = t.store.list_namespaces(t.owner, prefix=prefix or None, limit=100, cursor=names_cursor)
        for ns in names.items:
            cursor = None
            while True:
                page = t.store.search_memories(t.owner, ns, limit=100, cursor=cursor)
                for hit in page.items:
                    if hit.namespace == ns:
                        out.write(json_line(hit.model_dump(mode="json", exclude={"score"})))
                cursor = page.next_cursor
                if cursor is None:
                    break
        names_cursor = names.next_cursor
        if names_cursor is None:
            return 0
