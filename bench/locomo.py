"""Retrieval on LoCoMo (Maharana et al., 2024: 10 long multi-session conversations, questions with annotated
evidence turns), measured from outside through the public API, as issue 47 describes it.

    python -m bench.locomo --data PATH [--modes semantic,keyword,hybrid] [--embedder e5-small|wordllama|none]
                           [--scopes namespace,owner] [--noise 100000 [--sample K] [--owner-sample K]
                           [--cache DIR]] [--record]

PATH is LoCoMo's `locomo10.json` (github.com/snap-research/locomo, data/locomo10.json), or the repository's
`data/locomo10.zip`, or a folder of its per-conversation files. The data is never copied into this repository.

Each turn is put as one memory {"text": "<speaker>: <text>"} in one namespace per conversation; each question
with evidence is asked with `search_memories(owner, namespace, query=question, limit=50, mode=...)` (scope
`namespace`) and over the owner's whole prefix, all ten conversations' turns (scope `owner`).
recall@k = the share of a question's evidence turns among the first k hits, averaged over questions.

With `--noise N` it measures search at size instead: the same, then again after N unrelated memories
(bench/noise.py) are put among the conversations' (a tenth of them in each conversation's namespace, so every
search has N/10 more memories to pass over). Every K-th question (`--sample K`) is asked in its namespace, the
issue's protocol; with `--owner-sample K` every K-th is also asked over the owner's whole prefix (all ten
conversations and all N: the other conversations are distractors too). The noise's embeddings are made in
batches first (the store then embeds each put from that cache: the same vectors, sooner), and kept in `--cache`
for the next run."""

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
SCOPES = ("namespace", "owner")
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


def measure(
    store: SessionStore, conversations: list[Conversation], modes: list[str], scopes: tuple[str, ...] = SCOPES
) -> dict[str, Any]:
    """Every question's R@k per scope and mode: asked in its conversation's namespace (`namespace`, the issue's
    protocol) and over the owner's whole prefix, all ten conversations (`owner`)."""
    for conv in conversations:
        for did, text in conv.turns.items():
            store.put_memory(OWNER, (conv.name,), did, {"text": text})
    every = [(c, q) for c in conversations for q in c.questions]
    out: dict[str, Any] = {}
    for scope in scopes:
        out[scope] = {}
        for mode in modes:
            started = time.perf_counter()
            out[scope][mode] = {**recall(store, every, mode, scoped=scope == "namespace"), "questions": len(every)}
            out[scope][mode]["seconds"] = round(time.perf_counter() - started, 1)
            print(scope, mode, json.dumps(out[scope][mode]), flush=True)
    return out


class Cached:
    """An embedder whose vectors for some texts were made beforehand, in batches (the same model, so the same
    vectors a put would make); queries go to the model."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id, self.dimensions = inner.model_id, inner.dimensions
        self.known: dict[str, list[float]] = {}

    def prefill(self, texts: list[str], batch: int = 64) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self.known]
        for at in range(0, len(todo), batch):
            chunk = todo[at : at + batch]
            self.known.update(zip(chunk, (list(v) for v in self.inner(chunk)), strict=True))

    def save(self, folder: Path, name: str) -> None:
        """Keep the vectors made so far (exactly: 64-bit floats) for a later run with the same embedder."""
        import numpy as np

        folder.mkdir(parents=True, exist_ok=True)
        texts = list(self.known)
        (folder / f"{name}.texts.json").write_text(json.dumps(texts))
        np.save(folder / f"{name}.vectors.npy", np.array([self.known[t] for t in texts], dtype=np.float64))

    def load(self, folder: Path, name: str) -> None:
        """The vectors an earlier run kept with `save`, if any."""
        import numpy as np

        if (folder / f"{name}.texts.json").exists():
            texts = json.loads((folder / f"{name}.texts.json").read_text())
            self.known.update(zip(texts, np.load(folder / f"{name}.vectors.npy").tolist(), strict=True))

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [self.known[t] if t in self.known else self.inner([t])[0] for t in texts]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        ask = getattr(self.inner, "embed_queries", self.inner)
        return [list(v) for v in ask(texts)]


def recall(
    store: SessionStore, questions: list[tuple[Conversation, tuple[str, tuple[str, ...], int]]], mode: str, scoped: bool
) -> dict[str, float]:
    """R@k of `questions`, each asked in its conversation's namespace (`scoped`) or over the owner's whole prefix,
    and the seconds a search took on average."""
    sums = dict.fromkeys(KS, 0.0)
    started = time.perf_counter()
    for conv, (question, evidence, _) in questions:
        namespace = (conv.name,) if scoped else ()
        hits = store.search_memories(OWNER, namespace, query=question, limit=50, mode=mode).items
        keys = [(h.namespace, h.key) for h in hits]
        for k in KS:
            sums[k] += sum(1 for e in evidence if ((conv.name,), e) in keys[:k]) / len(evidence)
    out = {f"R@{k}": round(100 * sums[k] / len(questions), 1) for k in KS}
    out["seconds per search"] = round((time.perf_counter() - started) / len(questions), 3)
    return out


def at_size(
    store: SessionStore,
    conversations: list[Conversation],
    modes: list[str],
    noise: list[str],
    samples: dict[str, int],
    embedder: Any,
) -> dict[str, Any]:
    """R@k before and after `noise` is put among the conversations' own memories (the i-th unrelated memory in the
    namespace of conversation i mod 10, so each namespace holds a tenth of them beside its turns). Scope
    `namespace` asks every `samples["namespace"]`-th question in its conversation's namespace (the issue's
    protocol); scope `owner` every `samples["owner"]`-th over the owner's whole prefix (all conversations' turns
    and all the noise). A scope sampled 0 is not asked."""
    for conv in conversations:
        for did, text in conv.turns.items():
            store.put_memory(OWNER, (conv.name,), did, {"text": text})
    every = [(c, q) for c in conversations for q in c.questions]
    scopes = {scope: every[::k] for scope, k in samples.items() if k > 0}

    def asked() -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for scope, questions in scopes.items():
            out[scope] = {}
            for mode in modes:
                out[scope][mode] = recall(store, questions, mode, scoped=scope == "namespace")
                print(scope, mode, json.dumps(out[scope][mode]), flush=True)
        return out

    before = asked()
    started = time.perf_counter()
    if embedder is not None:
        embedder.prefill(noise)
    for i, text in enumerate(noise):
        store.put_memory(OWNER, (conversations[i % len(conversations)].name,), f"n{i}", {"text": text})
    print(f"put {len(noise)} unrelated memories in {time.perf_counter() - started:.0f} s", flush=True)
    after = asked()
    return {
        "memories": sum(len(c.turns) for c in conversations),
        "unrelated": len(noise),
        "scopes": {
            scope: {
                "sample": samples[scope],
                "questions": len(questions),
                "before": before[scope],
                "after": after[scope],
            }
            for scope, questions in scopes.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--modes", default="semantic,keyword,hybrid")
    parser.add_argument("--embedder", default="e5-small")
    parser.add_argument("--scopes", default=",".join(SCOPES), help="without --noise: namespace, owner or both")
    parser.add_argument("--noise", type=int, default=0, help="unrelated memories put under the owner")
    parser.add_argument("--sample", type=int, default=1, help="with --noise: every K-th question in its namespace")
    parser.add_argument(
        "--owner-sample", type=int, default=0, help="with --noise: every K-th question over the owner (0: none)"
    )
    parser.add_argument("--cache", type=Path, help="keep the unrelated memories' embeddings in this folder")
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    from bench.noise import unrelated
    from store.embeddings import embedder_from_env

    model = embedder_from_env(args.embedder)
    embedder = Cached(model) if model is not None else None
    store = SessionStore.memory(Settings(embedder=embedder))
    conversations, modes = load(args.data), args.modes.split(",")
    if args.noise:
        samples, noise = {"namespace": args.sample, "owner": args.owner_sample}, unrelated(args.noise)
        if embedder is not None:
            started = time.perf_counter()
            if args.cache:
                embedder.load(args.cache, args.embedder)
            embedder.prefill(noise)
            if args.cache:
                embedder.save(args.cache, args.embedder)
            print(f"embedded {len(noise)} unrelated memories in {time.perf_counter() - started:.0f} s", flush=True)
        result = at_size(store, conversations, modes, noise, samples, embedder)
    else:
        result = measure(store, conversations, modes, tuple(args.scopes.split(",")))
    print(json.dumps({"embedder": args.embedder, **result}, indent=2))
    if args.record:
        keep(args, result)


def keep(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """Add this run to bench/results.json ("memory_locomo": a run of some modes or scopes replaces only those) and
    render bench/results.md again."""
    from datetime import UTC, datetime

    from bench.report import record

    path = Path(__file__).parent / "results.json"
    kept = json.loads(path.read_text()).get("memory_locomo") or {"embedders": {}}
    kept.update(date=datetime.now(UTC).date().isoformat(), data=DATA)
    if args.noise:
        kept["at_size"] = {**result, "embedder": args.embedder}
    else:  # the scopes and modes measured replace theirs; the others stay
        mine = kept["embedders"].setdefault(args.embedder, {})
        for scope, modes in result.items():
            mine.setdefault(scope, {}).update(modes)
    record("memory_locomo", kept)


if __name__ == "__main__":
    main()
