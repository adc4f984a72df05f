"""LongMemEval (Wu et al., ICLR 2025) through memory extraction: how much of what a question needs the
extracted memories bring back, and what extraction costs. It runs where a model is reachable.

    # the data (never committed): 500 questions, each with its own history of ~50 sessions (~115k tokens)
    curl -LO https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_s_cleaned.json
    python -m bench.longmemeval --data longmemeval_s_cleaned.json --estimate            # cost, no model
    EXTRACTION_MODEL=bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0 \\
        python -m bench.longmemeval --data longmemeval_s_cleaned.json --limit 50 [--answer] [--record]

For each question: one owner; each history session a session of the store (its turns appended in order), its
facts and preferences extracted (`extract_memories`, until nothing is left to read); then the question asked of
the owner's memories (`search_memories(owner, (), query=question, limit=k)`, the store's embedder). Each
memory names the session it came from (its provenance), so **session recall@k** (the share of the question's
evidence sessions, `answer_session_ids`, that some memory among the first k came from) needs no judge. With
`--answer` the model also answers from the first 10 memories and judges its answer against the reference
(LongMemEval's own evaluation uses GPT-4o as the judge; this is the same model judging itself: report it as
such). Counted: model questions and the tokens the model reported, per question and per history turn.

`--estimate` needs no model: the characters each run would send (instructions, schema and conversation, in
runs of at most `Limits.max_messages` messages and `Limits.max_prompt_chars` characters, for both strategies),
as tokens at 4 characters a token, priced at `--price-in` / `--price-out` dollars per million tokens (answers
taken as 10% of what is sent): an estimate, not a measurement."""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

from store import SessionStore, Settings
from store.extraction.limits import Limits
from store.extraction.models import ModelRequest
from store.extraction.strategies import DEFAULT, one_field
from store.front.messages import APPEND_MAX

KS = (1, 5, 10, 50)
CHARS_PER_TOKEN = 4
ANSWER_SHARE = 0.1  # answers are short: a tenth of what is sent, for the estimate
ANSWER_SCHEMA = one_field("answer", "string")
JUDGE_SCHEMA = one_field("correct", "boolean")


def load(path: Path) -> list[dict[str, Any]]:
    """The benchmark's items (its JSON list), each checked for the fields the harness reads."""
    items = json.loads(path.read_text())
    need = ("question_id", "question", "answer", "haystack_session_ids", "haystack_sessions", "answer_session_ids")
    for item in items:
        missing = [f for f in need if f not in item]
        if missing:
            raise ValueError(f"{item.get('question_id', '?')}: not LongMemEval's shape, no {', '.join(missing)}")
    return list(items)


def estimate(items: list[dict[str, Any]], limits: Limits, price_in: float, price_out: float) -> dict[str, Any]:
    """What extracting every item's history would send, estimated (module docstring)."""
    overhead = sum(len(s.instructions) + len(json.dumps(s.schema)) for s in DEFAULT)
    sent = 0
    runs = 0
    turns = 0
    for item in items:
        for session in item["haystack_sessions"]:
            chars = sum(len(t.get("content") or "") + 16 for t in session)
            count = max(1, math.ceil(len(session) / limits.max_messages), math.ceil(chars / limits.max_prompt_chars))
            runs += count * len(DEFAULT)
            sent += chars * len(DEFAULT) + overhead * count
            turns += len(session)
    tokens_in = sent / CHARS_PER_TOKEN
    tokens_out = tokens_in * ANSWER_SHARE
    return {
        "questions": len(items),
        "history turns": turns,
        "runs": runs,
        "estimated input tokens": round(tokens_in),
        "estimated output tokens": round(tokens_out),
        "estimated dollars": round(tokens_in / 1e6 * price_in + tokens_out / 1e6 * price_out, 2),
        "prices (per million tokens, in/out)": [price_in, price_out],
    }


def ingest(store: SessionStore, owner: str, item: dict[str, Any]) -> dict[str, int]:
    """The item's history as the owner's sessions, each extracted until nothing is left: the runs' counts."""
    tally = {"runs": 0, "failed": 0, "model calls": 0, "input tokens": 0, "output tokens": 0, "turns": 0}
    dates = item.get("haystack_dates") or [None] * len(item["haystack_session_ids"])
    for sid, date, turns in zip(item["haystack_session_ids"], dates, item["haystack_sessions"], strict=True):
        session = store.create_session(owner, session_id=str(sid), metadata={"date": str(date)} if date else None)
        said = [{"role": t["role"], "content": t.get("content") or ""} for t in turns]
        for at in range(0, len(said), APPEND_MAX):
            store.append_messages(session.id, said[at : at + APPEND_MAX])
        tally["turns"] += len(said)
        while runs := store.extract_memories(session.id):
            for run in runs:
                tally["runs"] += 1
                tally["failed"] += run.status != "succeeded"
                tally["model calls"] += run.model_calls
                tally["input tokens"] += run.input_tokens
                tally["output tokens"] += run.output_tokens
            if all(r.status != "succeeded" for r in runs):
                break  # the model keeps failing: the next run would read the same range again
    return tally


def recall(hits: list[Any], evidence: list[str], k: int) -> float:
    """The share of the evidence sessions that some memory among the first k hits came from."""
    found = {h.value.get("source", {}).get("session_id") for h in hits[:k] if isinstance(h.value.get("source"), dict)}
    return sum(1 for e in evidence if e in found) / len(evidence) if evidence else 0.0


def answered(store: SessionStore, item: dict[str, Any], hits: list[Any]) -> bool:
    """The model's answer from the first 10 memories, judged by the model against the reference."""
    model = store.settings.extraction_model
    notes = "\n".join(f"- {h.value.get('text')}" for h in hits[:10])
    reply = model(
        ModelRequest(
            "Answer the user's question from these memories of earlier conversations. Say you do not know when "
            "they do not tell.",
            f"<memories>\n{notes}\n</memories>\nToday is {item.get('question_date', 'unknown')}.\n"
            f"Question: {item['question']}",
            ANSWER_SCHEMA,
            "answer",
            300,
        )
    )
    verdict = model(
        ModelRequest(
            "Judge whether the response answers the question as the reference answer does (for a question that "
            "cannot be answered, whether the response says so).",
            f"Question: {item['question']}\nReference answer: {item['answer']}\n"
            f"Response: {reply.data.get('answer', '')}",
            JUDGE_SCHEMA,
            "judge",
            50,
        )
    )
    return bool(verdict.data.get("correct"))


def run(store: SessionStore, items: list[dict[str, Any]], *, answer: bool = False) -> dict[str, Any]:
    """Each item ingested, extracted and asked (module docstring): the averages and the totals."""
    sums = dict.fromkeys(KS, 0.0)
    totals: dict[str, float] = {}
    correct = 0
    started = time.perf_counter()
    for item in items:
        owner = f"lme-{item['question_id']}"
        for name, value in ingest(store, owner, item).items():
            totals[name] = totals.get(name, 0) + value
        hits = store.search_memories(owner, (), query=item["question"], limit=max(KS)).items
        evidence = [str(e) for e in item["answer_session_ids"]]
        for k in KS:
            sums[k] += recall(hits, evidence, k)
        if answer:
            correct += answered(store, item, hits)
    n = len(items) or 1
    out: dict[str, Any] = {f"session recall@{k}": round(100 * sums[k] / n, 1) for k in KS}
    out.update(questions=len(items), seconds=round(time.perf_counter() - started, 1), **totals)
    spent = totals.get("input tokens", 0) + totals.get("output tokens", 0)
    out["tokens per history turn"] = round(spent / max(1, totals.get("turns", 1)), 1)
    if answer:
        out["answered correctly (the model judging itself)"] = round(100 * correct / n, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--limit", type=int, help="the first N questions")
    parser.add_argument("--estimate", action="store_true", help="what extraction would cost; no model")
    parser.add_argument("--price-in", type=float, default=1.0, help="dollars per million input tokens")
    parser.add_argument("--price-out", type=float, default=5.0, help="dollars per million output tokens")
    parser.add_argument("--answer", action="store_true", help="also answer and judge with the model")
    parser.add_argument("--embedder", default="e5-small")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    items = load(args.data)[: args.limit]
    if args.estimate:
        result = estimate(items, Limits(), args.price_in, args.price_out)
    else:
        from store.embeddings import embedder_from_env
        from store.extraction.triggers import model_from_env

        model = model_from_env()
        if model is None:
            raise SystemExit("set EXTRACTION_MODEL (bedrock:<model id> or openai:<base URL>#<model>)")
        store = SessionStore.memory(Settings(embedder=embedder_from_env(args.embedder), extraction_model=model))
        result = {"model": model.model_id, "embedder": args.embedder, **run(store, items, answer=args.answer)}
    print(json.dumps(result, indent=2))
    if args.record:
        from datetime import UTC, datetime

        from bench.report import record

        path = Path(__file__).parent / "results.json"
        kept = json.loads(path.read_text()).get("longmemeval") or {}
        kept["estimate" if args.estimate else "run"] = {"date": datetime.now(UTC).date().isoformat(), **result}
        record("longmemeval", kept)


if __name__ == "__main__":
    main()
