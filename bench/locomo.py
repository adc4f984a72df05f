"""Retrieval on LoCoMo (Maharana et al., 2024: 10 long multi-session conversations, questions with annotated
evidence turns), measured from outside through the public API, as issue 47 describes it.

    python -m bench.locomo --data PATH [--modes semantic,keyword,hybrid] [--embedder wordllama|none]
                           [--noise 100000] [--backend memory|dynamodb]

PATH is LoCoMo's `locomo10.json` (github.com/snap-research/locomo, data/locomo10.json), or the repository's
`data/locomo10.zip`, or a folder of its per-conversation files. The data is never copied into this repository.

Each turn is put as one memory {"text": "<speaker>: <text>"} in one namespace per conversation; each question
with evidence is asked with `search_memories(owner, namespace, query=question, limit=50, mode=...)`.
recall@k = the share of a question's evidence turns among the first k hits, averaged over questions. With
`--noise N`, N unrelated memories (bench/noise.py) are put in every conversation's namespace first."""

from __future__ import annotations

import argparse
import io
import json
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store import SessionStore, Settings

KS = (5, 10, 25, 50)
OWNER = "locomo"


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: dict[str, str]  # dialog id -> "<speaker>: <text>"
    questions: list[tuple[str, tuple[str, ...], int]]  # (question, evidence dialog ids, category)


def _sessions(d: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    conv = d.get("conversation", d)
    for k, v in conv.items():
        if k.startswith("session_") and isinstance(v, list):
            yield v


def _conversation(name: str, d: dict[str, Any]) -> Conversation:
    turns = {t["dia_id"]: f"{t['speaker']}: {t['text']}" for s in _sessions(d) for t in s}
    qs = []
    for q in d["qa"]:
        evidence = tuple(e for e in q.get("evidence", []) if e in turns)
        if evidence:
            qs.append((str(q["question"]), evidence, int(q.get("category", 0))))
    return Conversation(name, turns, qs)


def load(path: Path) -> list[Conversation]:
    """LoCoMo's conversations from `locomo10.json`, its zip, or a folder of per-conversation files."""
    if path.is_dir():
        return [_conversation(p.stem, json.loads(p.read_text())) for p in sorted(path.glob("*.json"))]
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            names = sorted(n for n in z.namelist() if n.endswith(".json"))
            return [_conversation(Path(n).stem, json.load(io.BytesIO(z.read(n)))) for n in names]
    data = json.loads(path.read_text())
    return [_conversation(str(d.get("sample_id", i)), d) for i, d in enumerate(data)]


def measure(store: SessionStore, conversations: list[Conversation], modes: list[str]) -> dict[str, Any]:
    for conv in conversations:
        for did, text in conv.turns.items():
            store.put_memory(OWNER, (conv.name,), did, {"text": text})
    out: dict[str, Any] = {}
    for mode in modes:
        sums = dict.fromkeys(KS, 0.0)
        asked = 0
        started = time.perf_counter()
        for conv in conversations:
            for question, evidence, _ in conv.questions:
                hits = store.search_memories(OWNER, (conv.name,), query=question, limit=50, mode=mode).items
                keys = [h.key for h in hits]
                for k in KS:
                    sums[k] += sum(1 for e in evidence if e in keys[:k]) / len(evidence)
                asked += 1
        out[mode] = {f"R@{k}": round(100 * sums[k] / asked, 1) for k in KS}
        out[mode]["seconds"] = round(time.perf_counter() - started, 1)
        out[mode]["questions"] = asked
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--modes", default="semantic,keyword,hybrid")
    parser.add_argument("--embedder", default="e5-small")
    args = parser.parse_args()
    from store.embeddings import embedder_from_env

    embedder = embedder_from_env(args.embedder)
    store = SessionStore.memory(Settings(embedder=embedder))
    print(json.dumps(measure(store, load(args.data), args.modes.split(",")), indent=2))


if __name__ == "__main__":
    main()
