"""The context for a turn on LoCoMo (issue 58): how much of each question's evidence lands in what
`SessionStore.context` hands the model, at a token budget, against the recent window alone (what the
frameworks do by default) and the whole conversation; the message index's own search (R@k per session and
across the owner); and the token estimate against a real tokenizer.

    python -m bench.context_recall --data PATH [--embedder e5-small|wordllama|none] [--budgets 1000,2000,4000]
                                   [--sample K] [--record]

PATH as bench.locomo's (LoCoMo's locomo10.json or its zip; never committed). Each conversation is one session
written through the store (its first speaker's turns as user messages, the other's as assistant messages,
"<speaker>: <text>"); each question with evidence is asked at the session's end with `context(session,
query=question, budget_tokens=B)` on the memory backend (DynamoDB reads the same: the contract suite). A
question's evidence is in the context when the message of each evidence turn is (recent or recalled); the
share is averaged over questions. No extraction model is reachable here, so there are no memories or summary:
the figures are the messages' alone. The method is written beside the table, in bench/report_template.md."""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from bench.locomo import DATA, Conversation, load
from store import SessionStore, Settings
from store.recall.rendering import cost
from store.recall.tokens import count_tokens

OWNER = "locomo"
BUDGETS = (1000, 2000, 4000)
KS = (5, 10)


def _order(did: str) -> tuple[int, int]:
    session, _, turn = did.removeprefix("D").partition(":")
    return int(session), int(turn)


def write(store: SessionStore, conv: Conversation) -> dict[str, int]:
    """The conversation as one session, its turns in order: each evidence id's sequence number."""
    store.create_session(OWNER, session_id=conv.name)
    ordered = sorted(conv.turns, key=_order)
    first = conv.turns[ordered[0]].partition(":")[0]
    messages = [
        {"role": "user" if conv.turns[d].partition(":")[0] == first else "assistant", "content": conv.turns[d]}
        for d in ordered
    ]
    for at in range(0, len(messages), 90):
        store.append_messages(conv.name, messages[at : at + 90], owner=OWNER)
    return {did: i + 1 for i, did in enumerate(ordered)}


def recent_window(store: SessionStore, conv: Conversation, budget: int) -> set[int]:
    """The messages the recent window alone holds at `budget`: the newest that fit, by the same count."""
    shown: set[int] = set()
    used = 0
    for record in store.list_messages(conv.name, newest_first=True, limit=1000, owner=OWNER).items:
        text = str(record.content)
        spent = cost("message", text, record.role)
        if used + spent > budget:
            break
        used += spent
        shown.add(record.seq)
    return shown


def measure(
    store: SessionStore, conversations: list[Conversation], budgets: tuple[int, ...], sample: int
) -> dict[str, Any]:
    seqs = {c.name: write(store, c) for c in conversations}
    for conv in conversations:
        store.index_messages(conv.name, owner=OWNER)
    asked = [(c, q) for c in conversations for q in c.questions][::sample]
    rows = []
    for budget in budgets:
        ours = window = 0.0
        used = 0
        started = time.perf_counter()
        windows = {c.name: recent_window(store, c, budget) for c in conversations}
        for conv, (question, evidence, _) in asked:
            wanted = {seqs[conv.name][e] for e in evidence}
            context = store.context(conv.name, _query(question), budget_tokens=budget, owner=OWNER, memories=False)
            assert context.used_tokens <= budget
            shown = {p.seqs[0] for p in context.recent + context.recalled}
            ours += len(wanted & shown) / len(wanted)
            window += len(wanted & windows[conv.name]) / len(wanted)
            used += context.used_tokens
        rows.append(
            {
                "budget": budget,
                "context": round(100 * ours / len(asked), 1),
                "recent window": round(100 * window / len(asked), 1),
                "mean tokens used": round(used / len(asked)),
                "seconds a context": round((time.perf_counter() - started) / len(asked), 3),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    whole = [sum(cost("message", t) for t in c.turns.values()) for c in conversations]
    return {
        "questions": len(asked),
        "messages": sum(len(c.turns) for c in conversations),
        "rows": rows,
        "whole conversation tokens": {"mean": round(sum(whole) / len(whole)), "max": max(whole)},
        "search": search(store, asked, seqs),
        "tokens": token_error(conversations),
    }


def _query(question: str) -> str:
    return " ".join(question.split())[:2048]


def search(store: SessionStore, asked: list[Any], seqs: dict[str, dict[str, int]]) -> dict[str, Any]:
    """R@k of the message index's own search (hybrid), within each question's session and across the owner."""
    out: dict[str, Any] = {}
    for scope in ("session", "owner"):
        sums = dict.fromkeys(KS, 0.0)
        for conv, (question, evidence, _) in asked:
            hits = store.search_messages(
                OWNER, _query(question), session_id=conv.name if scope == "session" else None, limit=max(KS)
            ).items
            found = [(h.session_id, h.seq) for h in hits]
            for k in KS:
                sums[k] += sum(1 for e in evidence if (conv.name, seqs[conv.name][e]) in found[:k]) / len(evidence)
        out[scope] = {f"R@{k}": round(100 * sums[k] / len(asked), 1) for k in KS}
        print(scope, json.dumps(out[scope]), flush=True)
    return out


def token_error(conversations: list[Conversation]) -> dict[str, Any]:
    """The estimate against the Llama 2 tokenizer (wordllama's, offline) on every turn as the context renders it."""
    import os

    import wordllama
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(
        os.path.join(os.path.dirname(wordllama.__file__), "tokenizers", "l2_supercat_tokenizer_config.json")
    )
    lines = [f"[1] user: {t}" for c in conversations for t in c.turns.values()]
    real = [len(tokenizer.encode(line, add_special_tokens=False).ids) for line in lines]
    estimated = [count_tokens(line) for line in lines]
    ratios = [e / r for e, r in zip(estimated, real, strict=True) if r]
    return {
        "lines": len(lines),
        "estimate / tokenizer, in all": round(sum(estimated) / sum(real), 3),
        "lines the estimate counts fewer": round(100 * sum(1 for x in ratios if x < 1) / len(ratios), 1),
        "tokenizer": "Llama 2 (wordllama 0.4's l2_supercat)",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--embedder", default="e5-small")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    parser.add_argument("--sample", type=int, default=1, help="every K-th question")
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    from store.embeddings import embedder_from_env

    store = SessionStore.memory(Settings(embedder=embedder_from_env(args.embedder)))
    budgets = tuple(int(b) for b in re.split(r"[, ]+", args.budgets) if b)
    result = measure(store, load(args.data), budgets, args.sample)
    print(json.dumps(result, indent=2))
    if args.record:
        from datetime import UTC, datetime

        from bench.report import record

        record(
            "context_locomo",
            {
                **result,
                "embedder": args.embedder,
                "sample": args.sample,
                "data": DATA,
                "date": str(datetime.now(UTC).date()),
            },
        )


if __name__ == "__main__":
    main()
