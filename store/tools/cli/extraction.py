"""The CLI's memory extraction commands: run the strategies over a session now, list a session's runs, and
show one memory with where it came from (its source messages, the run that made it) and its history."""

from __future__ import annotations

from typing import Any, TextIO

from store.conversation import viewed
from store.errors import InvalidInput
from store.extraction.run_records import FORGET_TRIGGER
from store.extraction.triggers import model_from_env
from store.tools.cli.commands import _namespace
from store.tools.cli.show import as_json, short, table
from store.tools.cli.target import Target


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if hasattr(value, "strftime") else str(value or "")


def _runs_table(runs: list[Any], out: TextIO) -> None:
    rows = [
        (
            _when(r.started_at),
            r.strategy,
            f"{r.first_seq}-{r.last_seq}",
            "forgotten" if r.trigger == FORGET_TRIGGER else r.status + (f" ({r.error})" if r.error else ""),
            ", ".join(f"{c.action} {'/'.join(c.namespace)} {c.key}" for c in r.changes) or "-",
            r.unchanged,
            r.input_tokens + r.output_tokens,
        )
        for r in runs
    ]
    table(("STARTED", "STRATEGY", "MESSAGES", "STATUS", "CHANGES", "KNOWN", "TOKENS"), rows, out)


def _shown_runs(args: Any, runs: list[Any], out: TextIO, none: str) -> int:
    if args.json:
        out.write(as_json(runs) + "\n")
    elif runs:
        _runs_table(runs, out)
    else:
        out.write(none + "\n")
    return 0


def memories_extract(args: Any, t: Target, out: TextIO) -> int:
    """Extract memories from a session now, with the model EXTRACTION_MODEL names (`bedrock:<model id>` or
    `openai:<base URL>#<model>`), asked from this machine."""
    model = model_from_env()
    if model is None:
        raise InvalidInput("set EXTRACTION_MODEL (bedrock:<model id>, or openai:<base URL>#<model>) to extract")
    runs = t.store.extract_memories(args.session_id, strategies=args.strategy or None, owner=t.owner, model=model)
    return _shown_runs(args, runs, out, "nothing new to extract")


def memories_runs(args: Any, t: Target, out: TextIO) -> int:
    """The session's extraction runs, oldest first."""
    return _shown_runs(args, t.store.list_extraction_runs(args.session_id, owner=t.owner), out, "no extraction runs")


def memories_show(args: Any, t: Target, out: TextIO) -> int:
    """One memory: its text, where it came from (session, messages, strategy, model, when; the messages
    themselves when the session is the owner's and still there) and its earlier texts."""
    found = t.store.get_memory(t.owner, _namespace(args.namespace), args.key)
    if found is None:
        raise InvalidInput(f"no memory {args.key!r} in {args.namespace}")
    value = found.value
    source = value.get("source") if isinstance(value.get("source"), dict) else None
    messages = _source_messages(t, source) if source else []
    if args.json:
        out.write(as_json({"memory": found, "source_messages": messages}) + "\n")
        return 0
    out.write(f"{'/'.join(found.namespace)} {found.key}\n  {value.get('text', as_json(value))}\n")
    if source:
        cited = ", ".join(str(s) for s in source.get("seqs") or [])
        out.write(
            f"from session {source.get('session_id')} messages {cited}, by {source.get('strategy')} "
            f"({source.get('model')}) at {source.get('extracted_at')}\n"
        )
    for m in messages:
        out.write(f"  [{m.seq}] {m.canonical.role}: {short(m.canonical.text(), 100)}\n")
    for h in value.get("history") or []:
        if isinstance(h, dict):
            out.write(f"  was ({h.get('change')} at {h.get('replaced_at')}): {short(str(h.get('text')), 100)}\n")
    return 0


def _source_messages(t: Target, source: dict[str, Any]) -> list[Any]:
    """The messages a memory came from, as the conversation view shows them, while its session is the owner's
    and still holds them (none otherwise)."""
    seqs = [s for s in source.get("seqs") or [] if isinstance(s, int)] if isinstance(source.get("seqs"), list) else []
    if not isinstance(source.get("session_id"), str) or not seqs:
        return []
    try:
        page = t.store.list_messages(
            source["session_id"], after_seq=min(seqs) - 1, before_seq=max(seqs) + 1, owner=t.owner
        )
    except Exception:  # the session is gone, or another owner's: the memory is shown without them
        return []
    return [viewed(m) for m in page.items if m.seq in seqs]


def memories_extraction(args: Any, t: Target, out: TextIO) -> int:
    """The owner's choice about memory extraction; with --on or --off (and --strategy), set first."""
    if args.on or args.off or args.strategy:
        choice = t.store.set_extraction(t.owner, enabled=not args.off, strategies=args.strategy or None)
    else:
        choice = t.store.get_extraction(t.owner)
    if args.json:
        out.write(as_json(choice) + "\n")
        return 0
    strategies = ", ".join(choice.strategies) if choice.strategies else "the store's default"
    out.write(f"extraction {'on' if choice.enabled else 'off'}; strategies: {strategies}\n")
    return 0


def memories_correct(args: Any, t: Target, out: TextIO) -> int:
    """Correct a memory's text: the text it had is kept first in its history (`memories show` shows it)."""
    from store.tools.cli.commands import _namespace

    fixed = t.store.correct_memory(t.owner, _namespace(args.namespace), args.key, args.text)
    out.write(as_json(fixed) + "\n" if args.json else f"corrected {'/'.join(fixed.namespace)} {fixed.key}\n")
    return 0


def memories_forget(args: Any, t: Target, out: TextIO) -> int:
    """Forget every memory of the owner (and what extraction runs recorded of them); asks for --yes."""
    if not args.yes:
        raise InvalidInput("forgetting every memory of the owner cannot be undone: add --yes")
    done = t.store.forget_owner(t.owner)
    if args.json:
        out.write(as_json({"done": done}) + "\n")
    else:
        out.write("forgotten\n" if done else "forgetting: the rest is finished by the stack's cascade\n")
    return 0
