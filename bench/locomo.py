"""Retrieval on LoCoMo (Maharana et al., 2024: 10 long multi-session conversations, questions with annotated
evidence turns), measured from outside through the public API, as issue 47 describes it.

    python -m bench.locomo --data PATH [--modes semantic,keyword,hybrid] [--embedder wordllama|none]
                           [--noise 100000] [--backend memory|dynamodb]

PATH is LoCoMo's `locomo10.json` (github.com/snap-research/locomo, data/locomo10.json), or the repository's
`data/locomo10.zip`, or a folder of its per-conversation files. The data is never copied into this repository.

Each turn is put as one memory {"text": "<speaker>: <text>"} in one namespace per conversation; each question
with evidence is asked with `search_memories(owner, namespace, query=question, limit=50, mode=...)`.
recall@k = the share of a question's evidence turns among the first k hits, averaged over questions.

With `--noise N` it measures search at size instead: every K-th question (`--sample K`) is asked over the
owner's whole prefix (all ten conversations, 5,882 memories: the other conversations are distractors too),
then N unrelated memories (bench/noise.py) are put under the owner and the same questions are asked again.
The noise's embeddings are made in batches first (the store then embeds each put from that cache: the same
vectors, sooner)."""

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
DATA = "github.com/snap-research/locomo, data/locomo10.zip (its per-conversation files), not committed here"
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


class Cached:
    """An embedder whose vectors for some texts were made beforehand, in batches (the same model, so the same
    vectors a put would make); queries go to the model."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id, self.dimensions = inner.model_id, inner.dimensions
        self.known: dict[str, list[float]] = {}

    def prefill(self, texts: list[str], batch: int = 64) -> None:
        for at in range(0, len(texts), batch):
            chunk = texts[at : at + batch]
            self.known.update(zip(chunk, self.inner(chunk), strict=True))

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [self.known[t] if t in self.known else self.inner([t])[0] for t in texts]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        ask = getattr(self.inner, "embed_queries", self.inner)
        return [list(v) for v in ask(texts)]


def at_size(
    store: SessionStore,
    conversations: list[Conversation],
    modes: list[str],
    noise: list[str],
    sample: int,
    embedder: Any,
) -> dict[str, Any]:
    """R@k over the owner's whole prefix on every `sample`-th question, before and after `noise` is put."""
    questions = [(c, q) for c in conversations for q in c.questions][::sample]
    for conv in conversations:
        for did, text in conv.turns.items():
            store.put_memory(OWNER, (conv.name,), did, {"text": text})

    def asked() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for mode in modes:
            sums = dict.fromkeys(KS, 0.0)
            started = time.perf_counter()
            for conv, (question, evidence, _) in questions:
                hits = store.search_memories(OWNER, (), query=question, limit=50, mode=mode).items
                keys = [(h.namespace, h.key) for h in hits]
                for k in KS:
                    sums[k] += sum(1 for e in evidence if ((conv.name,), e) in keys[:k]) / len(evidence)
            out[mode] = {f"R@{k}": round(100 * sums[k] / len(questions), 1) for k in KS}
            out[mode]["seconds per search"] = round((time.perf_counter() - started) / len(questions), 3)
            print(mode, json.dumps(out[mode]), flush=True)
        return out

    before = asked()
    started = time.perf_counter()
    if embedder is not None:
        embedder.prefill(noise)
    for i, text in enumerate(noise):
        store.put_memory(OWNER, ("noise", str(i % 10)), f"n{i}", {"text": text})
    print(f"put {len(noise)} unrelated memories in {time.perf_counter() - started:.0f} s", flush=True)
    return {
        "questions": len(questions),
        "memories": sum(len(c.turns) for c in conversations),
        "before": before,
        "after": asked(),
        "unrelated": len(noise),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--modes", default="semantic,keyword,hybrid")
    parser.add_argument("--embedder", default="e5-small")
    parser.add_argument("--noise", type=int, default=0, help="unrelated memories put under the owner")
    parser.add_argument("--sample", type=int, default=5, help="with --noise: every K-th question")
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    from bench.noise import unrelated
    from store.embeddings import embedder_from_env

    model = embedder_from_env(args.embedder)
    embedder = Cached(model) if model is not None else None
    store = SessionStore.memory(Settings(embedder=embedder))
    conversations, modes = load(args.data), args.modes.split(",")
    if args.noise:
        result = at_size(store, conversations, modes, unrelated(args.noise), args.sample, embedder)
    else:
        result = measure(store, conversations, modes)
    print(json.dumps({"embedder": args.embedder, **result}, indent=2))
    if args.record:
        keep(args, result)


def keep(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Add this run to bench/results.json ("memory_locomo") and render bench/results.md again."""
    from datetime import UTC, datetime

    from bench.report import record

    path = Path(__file__).parent / "results.json"
    kept = json.loads(path.read_text()).get("memory_locomo") or {"embedders": {}}
    kept.update(date=datetime.now(UTC).date().isoformat(), data=DATA)
    if args.noise:
        kept["at_size"] = {**result, "embedder": args.embedder, "sample": args.sample}
    else:
        kept["embedders"][args.embedder] = result
    record("memory_locomo", kept)


if __name__ == "__main__":
    main()
