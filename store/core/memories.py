"""The rules of long-term memory, shared by every backend (DESIGN.md, "Long-term memory").

An owner's memories live in namespaces (tuples of labels) under the owner. What is checked here: labels,
keys and values as a caller gives them; how a namespace and a key become one sort key that no other pair
shares (`memory_sk`), and how a namespace prefix becomes a key range; what text of a value is indexed;
keyword matching and scoring; how a distance becomes a score (higher is better); equality filters; and the
ranking and paging of one search, so that every backend returns the same hits for the same candidates."""

from __future__ import annotations

import math
import operator
import struct
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from store.core import codec, lexical
from store.core.cursor import decode, encode
from store.errors import InvalidInput, PayloadTooLarge

MAX_LABEL = 128  # characters of one namespace label
MAX_DEPTH = 8  # labels of one namespace
MAX_KEY = 512  # characters of a memory's key
MAX_QUERY = 2048  # characters of a search query
MAX_SEARCH_LIMIT = 100
MAX_TOP_K = 100  # the most neighbours one semantic search asks the index for (the page and the ones before it)
LISTED_ITEMS = 1000  # the most memories one listing (a search with no query) pages through
HYBRID_MEANING = 0.5  # what meaning weighs in a hybrid score (0 to 0.5), beside the words' BM25 (0 to 1)
HYBRID_NAMESPACE = 1.0  # what a namespace's share of a hybrid search's matches weighs (0 to 1: `namespace_prior`)
MAX_EMBED_TEXT = 8192  # characters of a value's text that are embedded
MAX_DIMENSIONS = 4096
MODES = ("auto", "semantic", "keyword", "hybrid")
NAMESPACE_END = "/"  # ends every label in a sort key (escaped inside labels)
KEY_MARK = "|"  # parts the namespace from the key in a sort key (escaped inside keys and labels)
MEMORY_PREFIX = "M#"
USER_LOW = " "  # below every user namespace's part (a label begins with a printable, non-blank character)

Namespace = tuple[str, ...]


class Embedder(Protocol):
    """What embeds text for a store: `model_id` and `dimensions` name its vectors (two embedders' vectors are
    never compared), and calling it with texts returns one vector of `dimensions` floats per text."""

    model_id: str
    dimensions: int

    def __call__(self, texts: list[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Indexed:
    """A value's embedding, and the embedder that made it (`embedder_id`: model id and dimensions). A search
    query's also carries `floor`, the least similarity its embedder relates two texts by
    (`store.embeddings.match_threshold`): a hybrid search's reference for "unrelated" (`hybrid_scores`)."""

    vector: tuple[float, ...]
    embedder_id: str
    floor: float | None = None


def floor_of(indexed: Indexed | None) -> float | None:
    """A search query's floor for a hybrid score (`Indexed.floor`; None without an embedding)."""
    return indexed.floor if indexed is not None else None


def embedder_id(embedder: Embedder) -> str:
    """The name a store records beside each vector: `model_id` and dimensions."""
    return f"{embedder.model_id}:{embedder.dimensions}"


def _printable(value: str) -> bool:
    """No control, format, surrogate, separator, private or unassigned character (so U+10FFFF never appears
    in a key, and bounds the keys of a namespace: `past_own`)."""
    return not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn") for c in value)


def namespace(value: Any, what: str = "namespace", *, allow_empty: bool = False) -> Namespace:
    """A namespace: a tuple (or list) of 1 to MAX_DEPTH labels, each a printable string of 1 to MAX_LABEL
    characters without surrounding blanks (an empty tuple only where `allow_empty`, as a search's prefix)."""
    if isinstance(value, str) or not isinstance(value, (tuple, list)):
        raise InvalidInput(f"{what} must be a tuple of strings, such as ('preferences',)")
    labels = tuple(value)
    if not labels and not allow_empty:
        raise InvalidInput(f"{what} must hold at least one label")
    if len(labels) > MAX_DEPTH:
        raise InvalidInput(f"{what} holds at most {MAX_DEPTH} labels")
    for label in labels:
        if (
            not isinstance(label, str)
            or not 1 <= len(label) <= MAX_LABEL
            or label != label.strip()
            or not _printable(label)
        ):
            raise InvalidInput(
                f"each label of {what} must be a printable string of 1 to {MAX_LABEL} characters, "
                "without surrounding blanks"
            )
    return labels


def key(value: Any) -> str:
    """A memory's key: a printable string of 1 to MAX_KEY characters."""
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_KEY or not _printable(value):
        raise InvalidInput(f"key must be a printable string of 1 to {MAX_KEY} characters")
    return value


def value(given: Any, limit: int) -> dict[str, Any]:
    """A memory's value: a JSON object (checked and normalised as the store keeps JSON) of at most `limit`
    bytes of JSON (`Settings.max_payload_bytes`; one too large for an item is kept in the bucket)."""
    if not isinstance(given, Mapping):
        raise InvalidInput("value must be a dict (a JSON object)")
    text = codec.dumps(dict(given), "value")
    if len(text.encode("utf-8")) > limit:
        raise PayloadTooLarge(f"value must be at most {limit} bytes of JSON")
    loaded: dict[str, Any] = codec.loads(text, "value")
    return loaded


def index_fields(given: Any) -> tuple[str, ...] | Literal[False] | None:
    """`index`: None (the default fields: the whole value's text), False (not searchable by meaning), or a
    list of field paths (`"text"`, `"details.summary"`)."""
    if given is None:
        return None
    if given is False:
        return False
    if isinstance(given, str) or not isinstance(given, (list, tuple)) or not given:
        raise InvalidInput("index must be None, False or a non-empty list of field names")
    fields = tuple(given)
    if len(fields) > 32 or not all(isinstance(f, str) and 1 <= len(f) <= 256 for f in fields):
        raise InvalidInput("index names at most 32 fields, each a string of 1 to 256 characters")
    return fields


def filter_spec(given: Any) -> dict[str, Any]:
    """`filter`: equality on top-level value fields ({} when None): at most 16 fields of JSON values."""
    if given is None:
        return {}
    if not isinstance(given, Mapping) or len(given) > 16 or not all(isinstance(k, str) and k for k in given):
        raise InvalidInput("filter must be a dict of at most 16 value fields and the values they must equal")
    return dict(codec.loads(codec.dumps(dict(given), "filter"), "filter"))


def mode(given: Any) -> str:
    if given not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}")
    return str(given)


def resolve_mode(given: str, query_text: str | None, indexed: Indexed | None) -> str:
    """The mode a search runs in: `auto` is hybrid when the query was embedded, else keyword; semantic and
    hybrid need the query's embedding (InvalidInput: the store that ran the search has no embedder)."""
    if given == "auto":
        return "hybrid" if indexed is not None else "keyword"
    if given in ("semantic", "hybrid") and query_text is not None and indexed is None:
        raise InvalidInput(f"{given} search needs an embedder (Settings(embedder=...))")
    return given


def reported_mode(search_mode: str, query_text: str | None) -> Literal["semantic", "keyword", "hybrid"] | None:
    """The mode a search reports it ran in (`MemoryHits.mode`): None when it had no query (a listing)."""
    if query_text is None:
        return None
    if search_mode == "semantic":
        return "semantic"
    return "hybrid" if search_mode == "hybrid" else "keyword"


def query(given: Any) -> str | None:
    if given is None:
        return None
    if not isinstance(given, str) or not given.strip() or len(given) > MAX_QUERY or not _printable(given):
        raise InvalidInput(f"query must be a non-blank printable string of at most {MAX_QUERY} characters")
    return given.strip()


def check_vector(vector: Sequence[float], dimensions: int, what: str = "the embedder") -> tuple[float, ...]:
    """A vector an embedder returned: `dimensions` finite floats, not all zero (InvalidInput otherwise), each
    rounded to the nearest 32-bit float: the precision DynamoDB's vector index holds and searches with, so
    every backend ranks the same numbers and a stored vector costs no bytes the index ignores."""
    if not isinstance(vector, Sequence) and not hasattr(vector, "__len__"):
        raise InvalidInput(f"{what} returned a vector that is not a list of numbers")
    try:
        out = tuple(_float32(float(x)) for x in vector)
    except (OverflowError, TypeError, ValueError):
        raise InvalidInput(f"{what} returned a vector with a value that is not a 32-bit float") from None
    if len(out) != dimensions:
        raise InvalidInput(f"{what} returned a vector of {len(out)} dimensions; the store's index has {dimensions}")
    if not all(math.isfinite(x) for x in out) or not any(out):
        raise InvalidInput(f"{what} returned a vector with NaN, infinite or only zero values")
    return out


def _float32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def float32_text(x: float) -> str:
    """The shortest decimal that reads back as the 32-bit float `x` (6 to 9 significant digits, against
    repr's 17 for a 64-bit one): how a vector's numbers are written."""
    if x == 0.0:  # most of a vector's words part: written as DynamoDB normalises any zero
        return "0"
    if _float32(x) != x:  # not a 32-bit float (one read back from its shortest text): no text reads back as it
        return repr(x)
    return _shortest32(x)


def _shortest32(x: float) -> str:
    """The shortest of `x`'s texts at 6 to 9 significant digits that reads back as `x`, a nonzero 32-bit float.
    Nine digits always read back, and a text that reads back at n digits does at n + 1 too, so the search
    starts at 7 (what a vector's numbers most often need): two tries for most numbers."""
    text = f"{x:.7g}"
    if _float32(float(text)) == x:
        shorter = f"{x:.6g}"
        return shorter if _float32(float(shorter)) == x else text
    text = f"{x:.8g}"
    return text if _float32(float(text)) == x else f"{x:.9g}"


# ---------------------------------------------------------------- keys


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace(NAMESPACE_END, "%2F").replace(KEY_MARK, "%7C")


def namespace_part(ns: Namespace) -> str:
    """A namespace as it begins its items' sort keys: each label escaped and ended by "/", so that a
    namespace's part begins exactly the parts of the namespaces under it."""
    return "".join(_escape(label) + NAMESPACE_END for label in ns)


def memory_sk(ns: Namespace, item_key: str) -> str:
    """The sort key of the memory `item_key` of namespace `ns`: no two (namespace, key) pairs share one."""
    return MEMORY_PREFIX + namespace_part(ns) + KEY_MARK + _escape(item_key)


def parse_sk(sk: str) -> tuple[Namespace, str]:
    """The namespace and key a sort key stands for."""
    body = sk[len(MEMORY_PREFIX) :]
    ns_part, _, key_part = body.rpartition(KEY_MARK)
    labels = ns_part.split(NAMESPACE_END)[:-1]
    return tuple(_unescape(label) for label in labels), _unescape(key_part)


def _unescape(part: str) -> str:
    return part.replace("%7C", KEY_MARK).replace("%2F", NAMESPACE_END).replace("%25", "%")


def prefix_range(prefix: Namespace) -> tuple[str, str]:
    """The namespace parts (as `namespace_part` writes them) of every namespace under `prefix`, as a
    half-open range [low, high). The empty prefix's range holds every namespace a caller can name and none of
    the store's own (`reserved`: their first label begins with a control character, below USER_LOW)."""
    if not prefix:
        return USER_LOW, "\U0010ffff"
    low = namespace_part(prefix)
    return low, low[:-1] + chr(ord(NAMESPACE_END) + 1)


def reserved(label: str) -> str:
    """A namespace label of the store's own (a session's message index): `label` behind a control character,
    which no caller's label holds (`namespace`), so a caller can neither name it nor list or search it."""
    return "\x1f" + label


def under(ns: Namespace, prefix: Namespace) -> bool:
    return ns[: len(prefix)] == prefix


# ---------------------------------------------------------------- text


def _field(value: Mapping[str, Any], path: str) -> Any:
    found: Any = value
    for part in path.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def _strings(found: Any) -> Iterable[str]:
    if isinstance(found, str):
        yield found
    elif isinstance(found, Mapping):
        for v in found.values():
            yield from _strings(v)
    elif isinstance(found, list):
        for v in found:
            yield from _strings(v)
    elif isinstance(found, (int, float)) and not isinstance(found, bool):
        yield str(found)


def indexed_text(value: Mapping[str, Any], fields: tuple[str, ...] | None) -> str:
    """The text of a value that is indexed: the strings of the named fields (every string of the value when
    None), joined, at most MAX_EMBED_TEXT characters ("" when there is none)."""
    parts = [s for f in fields for s in _strings(_field(value, f))] if fields is not None else list(_strings(value))
    return "\n".join(p for p in parts if p.strip())[:MAX_EMBED_TEXT]


def words(text: str) -> list[str]:
    """The words of a text that search matches (`lexical.terms`): normalised, stemmed, stop words left out,
    a run of Han, kana or another script written without spaces as its pairs of characters."""
    return lexical.terms(text)


def unit(vector: Sequence[float]) -> tuple[float, ...]:
    """`vector` scaled to length 1 (a dot product of two is their cosine), each number as DynamoDB holds it:
    the shortest decimal of its 32-bit float (`float32_text`), read back. The memory backend ranks these very
    numbers, so both backends compute the same dot products."""
    length = math.sqrt(sum(x * x for x in vector)) or 1.0
    scaled = (_float32(x / length) for x in vector)
    return tuple(float(_shortest32(x)) if x else 0.0 for x in scaled)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """The dot product, summed in order (as the vector index sums it)."""
    if len(a) != len(b):
        raise ValueError("vectors of different dimensions")
    return float(sum(map(operator.mul, a, b)))


@dataclass(frozen=True)
class Vectors:
    """What a memory is found by: its dense embedding scaled to length 1 (None: not embedded) and its words
    hashed (`lexical.document_vector`; None: no words). A DynamoDB item holds both in one vector: `layout`."""

    dense: tuple[float, ...] | None
    lexical: tuple[float, ...] | None

    @property
    def empty(self) -> bool:
        return self.dense is None and self.lexical is None


def vectors(text: str, indexed: Indexed | None) -> Vectors:
    """A memory's vectors, from its indexed text and its embedding."""
    return Vectors(unit(indexed.vector) if indexed is not None else None, lexical.document_vector(words(text)))


def layout(found: Vectors, dense_dimensions: int) -> tuple[float, ...]:
    """The one vector an item holds: the dense part (zeros when there is none) then the lexical part (zeros
    when there is none): `dense_dimensions + lexical.LEXICAL_DIMENSIONS` numbers."""
    dense = found.dense if found.dense is not None else (0.0,) * dense_dimensions
    words_part = found.lexical if found.lexical is not None else (0.0,) * lexical.LEXICAL_DIMENSIONS
    return dense + words_part


def dense_query(indexed: Indexed) -> tuple[float, ...]:
    """A query's embedding as the dense search compares it (length 1)."""
    return unit(indexed.vector)


def lexical_query(query_text: str) -> tuple[float, ...] | None:
    """A query's words hashed, as the lexical search compares them (None: the query has no words)."""
    return lexical.query_vector(words(query_text))


def matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """True when every filtered field of the value equals the filter's value."""
    return all(k in value and value[k] == v for k, v in wanted.items())


# ---------------------------------------------------------------- one search, ranked and paged


@dataclass(frozen=True)
class Candidate:
    """An item a search considers: where it is, its value and text, its vector's similarity to the query
    (None when it has no vector of the query's embedder), and its timestamps (for the hit)."""

    namespace: Namespace
    key: str
    value: dict[str, Any]
    text: str
    similarity: float | None
    record: Any  # the backend's item, handed back with the hit


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    score: float | None


def rank(
    candidates: Iterable[Candidate],
    *,
    search_mode: str,
    query_text: str | None,
    wanted: Mapping[str, Any],
    floor: float | None = None,
) -> list[Ranked]:
    """The candidates a search returns, best first: those the filter keeps and, per mode:

    - semantic: those with a vector of the query's embedder, by cosine similarity;
    - keyword: those holding a query word, by BM25 (`lexical.bm25`, the candidates' own statistics);
    - hybrid: every candidate (those holding a query word and the nearest by meaning), by `hybrid_scores`
      (`floor`: the query's `Indexed.floor`);
    - with no query, every candidate in key order (score None).

    Ties go to the nearer by meaning (hybrid: candidates below the floor all score 0 for meaning), then keep
    the candidates' order."""
    candidates = list(candidates)
    kept = [c for c in candidates if matches(c.value, wanted)]
    if query_text is None:
        return [Ranked(c, None) for c in kept]
    if search_mode == "semantic":
        scored = [(c.similarity, c) for c in kept if c.similarity is not None]
    else:
        scores = lexical.bm25(words(query_text), [words(c.text) for c in kept])
        if search_mode == "hybrid":
            nearest = sum(1 for c in candidates if c.similarity is not None)
            reference = Reference(floor, complete=nearest < MAX_TOP_K)
            scored = list(zip(hybrid_scores(kept, scores, reference), kept, strict=True))
        else:
            scored = [(score, c) for score, c in zip(scores, kept, strict=True) if score > 0]
    out = sorted(enumerate(scored), key=lambda t: (-t[1][0], -_nearness(t[1][1]), t[0]))
    return [Ranked(c, score) for _, (score, c) in out]


def _nearness(candidate: Candidate) -> float:
    return candidate.similarity if candidate.similarity is not None else -math.inf


@dataclass(frozen=True)
class Reference:
    """What a hybrid search measures meaning against: the embedder's `floor` (None: not known) and whether the
    search by meaning returned every memory there is (`complete`: fewer than MAX_TOP_K came back)."""

    floor: float | None
    complete: bool


def meaning_scale(learned: list[float], reference: Reference) -> tuple[float, float]:
    """The similarity a hybrid score counts as no meaning (0) and the one it counts as all (1).

    The top is the greatest similarity learned. The bottom stands for "unrelated": the embedder's floor when
    the search by meaning returned every memory there is (a few memories are no sample of what is unrelated:
    least-to-greatest would score the only memory 0 and the best of three unrelated ones 1); otherwise, or
    with no floor, the least similarity learned, the last of the MAX_TOP_K nearest (the others lie below it;
    every embedder's similarities differ in range, not in order)."""
    low = min(learned, default=0.0)
    if reference.floor is not None and reference.complete:
        low = reference.floor
    return low, max(learned, default=low)


def hybrid_scores(kept: list[Candidate], bm25: list[float], reference: Reference) -> list[float]:
    """Each candidate's hybrid score: its BM25 scaled to the best candidate's (1.0), plus HYBRID_MEANING times
    its similarity placed on `meaning_scale` (0 to 1; a candidate whose similarity the search did not learn,
    not among the nearest, counts 0), plus `namespace_prior`."""
    best = max(bm25, default=0.0) or 1.0
    low, high = meaning_scale([c.similarity for c in kept if c.similarity is not None], reference)
    spread = (high - low) if high > low else 1.0
    fused = [
        score / best + HYBRID_MEANING * max(((c.similarity if c.similarity is not None else low) - low) / spread, 0.0)
        for c, score in zip(kept, bm25, strict=True)
    ]
    return [f + p for f, p in zip(fused, namespace_prior(kept, fused), strict=True)]


def namespace_prior(kept: list[Candidate], fused: list[float]) -> list[float]:
    """What each candidate's namespace adds to its hybrid score: HYBRID_NAMESPACE times the namespace's share
    of the candidates' scores, less the largest share (so 0 in the namespace that holds most of what the
    search matched, and in a search whose candidates share one namespace; down to -HYBRID_NAMESPACE). A
    namespace groups what belongs together (a project, a conversation): where a query's matches gather is
    likely what it is about, and a memory outside it that matches as well is likelier a coincidence of words.
    Measured on LoCoMo over an owner's ten conversations (docs/decisions.md, "Search over an owner's whole
    memory")."""
    mass: dict[Namespace, float] = {}
    for c, score in zip(kept, fused, strict=True):
        mass[c.namespace] = mass.get(c.namespace, 0.0) + max(score, 0.0)
    total = sum(mass.values())
    if len(mass) < 2 or not total:
        return [0.0] * len(kept)
    leading = max(mass.values())
    return [HYBRID_NAMESPACE * (mass[c.namespace] - leading) / total for c in kept]


def search_cursor(cursor: str | None, owner: str) -> int:
    """How many hits of a search the pages before this one returned (0 without a cursor)."""
    if cursor is None:
        return 0
    state = decode(cursor, "memories", owner)
    offset = state.get("o")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 < offset < MAX_TOP_K + LISTED_ITEMS:
        raise InvalidInput("cursor is not valid for this search")
    return offset


def page(ranked: list[Ranked], offset: int, limit: int, owner: str, ceiling: int) -> tuple[list[Ranked], str | None]:
    """The page of `ranked` after `offset`, and the cursor of the next one (None when there is none, or when
    the next would go past `ceiling`, the most hits one search ranks)."""
    chunk = ranked[offset : offset + limit]
    end = offset + len(chunk)
    more = end < len(ranked) and end < ceiling
    return chunk, (encode("memories", owner, {"o": end}) if more else None)


def top_k(offset: int, limit: int, filtered: bool) -> int:
    """How many neighbours a semantic search asks the index for: the page, those before it and one more (to
    know whether a next page exists), or as many as allowed when a filter will leave some out."""
    return MAX_TOP_K if filtered else min(MAX_TOP_K, offset + limit + 1)


def walk_start(prefix: Namespace | None, cursor: str | None, owner: str) -> tuple[str, str]:
    """Where a list_namespaces walk over sort keys starts (exclusive) and ends (exclusive): from the cursor,
    or from just before the prefix's first sort key; to the end of the prefix's range."""
    low, high = prefix_range(prefix or ())
    end = MEMORY_PREFIX + high
    if cursor is None:
        # just below the prefix's first sort key: no key holds U+10FFFF, so nothing sorts between
        return (
            MEMORY_PREFIX + low[:-1] + chr(ord(NAMESPACE_END) - 1) + "\U0010ffff"
        ) if prefix else MEMORY_PREFIX + low, end
    after = decode(cursor, "namespaces", owner).get("a")
    if not isinstance(after, str) or not after.startswith(MEMORY_PREFIX):
        raise InvalidInput("cursor is not valid for this listing")
    return after, end


def walk_next(ns: Namespace, shown: Namespace | None) -> str:
    """Where the walk goes on after meeting a memory of `ns` (shown as `shown`): past the whole subtree of
    `shown` when it was cut short (every namespace under it shows as it), else past `ns`'s own memories
    (its sub-namespaces are listed in their turn)."""
    if shown is not None and len(shown) < len(ns):
        part = namespace_part(shown)
        return MEMORY_PREFIX + part[:-1] + chr(ord(NAMESPACE_END) + 1)
    return MEMORY_PREFIX + namespace_part(ns) + KEY_MARK + "\U0010ffff"


def walk_cursor(position: str, owner: str) -> str:
    return encode("namespaces", owner, {"a": position})


def listing_of(
    ns: Namespace, prefix: Namespace | None, suffix: Namespace | None, max_depth: int | None
) -> Namespace | None:
    """What list_namespaces shows of a namespace that holds memories: None when it is not under `prefix` or
    does not end with `suffix`; cut to `max_depth` labels."""
    if prefix is not None and not under(ns, prefix):
        return None
    if suffix and (len(ns) < len(suffix) or ns[len(ns) - len(suffix) :] != suffix):
        return None
    return ns[:max_depth] if max_depth is not None else ns
