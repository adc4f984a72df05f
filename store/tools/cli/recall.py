"""The CLI's recall commands: what the model sees for a session's next turn (`agent-store context`), and the
owner's messages searched by meaning and words (`agent-store messages search`)."""

from __future__ import annotations

from typing import Any, TextIO

from store.tools.cli.show import as_json, short, table
from store.tools.cli.target import Target

SEARCHED = {"semantic": "by meaning", "keyword": "by words", "hybrid": "by meaning and words"}


def context(args: Any, t: Target, out: TextIO) -> int:
    """The context's parts, each with where it comes from and what it costs, then the budget's use (with
    --json: the whole context; with --text: the text a model reads)."""
    found = t.store.context(args.session_id, args.query, args.budget, owner=t.owner, memories=not args.no_memories)
    if args.json:
        out.write(as_json(found) + "\n")
        return 0
    if args.text:
        out.write(found.as_text() + "\n")
        return 0
    rows = []
    parts = ([found.summary] if found.summary else []) + found.memories + found.recalled + found.recent
    for p in parts:
        where = (
            "/".join(p.namespace or ()) + f" {p.key}"
            if p.kind != "message"
            else f"#{p.seqs[0]}" + (" (recent)" if p.recent else "")
        )
        shown = f"{p.role}: {p.text}" if p.role else p.text
        rows.append((p.kind, where, p.tokens, short(shown, 70)))
    table(("PART", "FROM", "TOKENS", "TEXT"), rows, out)
    share = 100 * found.used_tokens / found.budget_tokens
    asked = f' for "{short(found.query, 60)}"' if found.query else " (no question: the recent window)"
    out.write(f"{found.used_tokens:,} of {found.budget_tokens:,} tokens ({share:.0f}%){asked}\n")
    return 0


def messages_search(args: Any, t: Target, out: TextIO) -> int:
    """The owner's messages ranked against the query, each with its session and sequence number."""
    page = t.store.search_messages(
        t.owner, args.query, session_id=args.session, mode=args.mode, limit=min(args.limit, 100)
    )
    if args.json:
        out.write(as_json(page) + "\n")
        return 0
    rows = [
        (f"{h.score:.3f}" if h.score is not None else "-", h.session_id, h.seq, short(f"{h.role}: {h.text}", 70))
        for h in page.items
    ]
    table(("SCORE", "SESSION", "SEQ", "MESSAGE"), rows, out)
    out.write(f"searched {SEARCHED.get(page.mode or '', 'by words')}\n")
    return 0
