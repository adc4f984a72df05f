"""Words as search matches them, their weights, and the lexical half of a memory's vector.

Shared by every backend, so that the same text is matched and ranked the same way everywhere
(docs/decisions.md, "Hybrid retrieval: words and meaning in one vector index").

- `terms`: a text's words, normalised (NFKC, case folded), English stop words and lone letters left out,
  words of Latin letters stemmed (Snowball's English stemmer: "flights", "flight" and "flying"... become
  "flight", "fli"...), a run of a script written without spaces (Han, kana, Thai...) as its pairs of
  characters.
- `bm25`: Okapi BM25 of candidates against a query, its statistics (inverse document frequency, average
  length) taken from the candidates themselves: a search's candidates are bounded, so are its statistics,
  and nothing is kept on write.
- `document_vector` / `query_vector`: a text's words hashed into LEXICAL_DIMENSIONS signed buckets (the
  "hashing trick"), weighted as BM25 weighs a word in a document. Carried beside the dense embedding in the
  one vector a memory's item holds, they let the table's vector index (dot product) find the memories that
  hold a query's words at any size, with no write and no item beyond the memory's own."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import snowballstemmer

LEXICAL_DIMENSIONS = 1024  # buckets of the lexical half of a memory's vector (the index holds dense + these)
LEXICAL_SCHEME = f"bm25-hash1:{LEXICAL_DIMENSIONS}"  # the `lex` attribute: how the lexical half was made
K1 = 0.6  # BM25's term-frequency saturation (a word said twice counts 1.27 times once)
B = 0.2  # BM25's length normalisation (low: a longer turn is more often the one that answers)
AVERAGE_TERMS = 16  # the document length the hashed weights normalise against (a conversational turn)
DIGITS = 3  # significant digits of a hashed weight (they only choose candidates; the ranking is exact)

_WORD = re.compile(r"\w+", re.UNICODE)
STOP = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her
    here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
    now of off on once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves""".split()
)

# Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar): a run of them is no
# word of its own, so its overlapping pairs of characters are (a lone one as itself), the usual way to match
# CJK text without a dictionary: "太郎" is found in "私の名前は太郎です", "天気" is not.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0003134f]+"
)
_STEMMER = snowballstemmer.stemmer("english")


def _split(token: str) -> Iterable[str]:
    """A token as search matches it: as it is, or with each run of an unspaced script as its pairs."""
    at = 0
    for run in _UNSPACED.finditer(token):
        if run.start() > at:
            yield token[at : run.start()]
        chars = run.group(0)
        yield from (chars[i : i + 2] for i in range(max(1, len(chars) - 1)))
        at = run.end()
    if at < len(token):
        yield token[at:]


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A word of ASCII letters stemmed; any other word as it is."""
    if word.isascii() and word.isalpha() and len(word) > 2:
        stemmed: str = _STEMMER.stemWord(word)
        return stemmed
    return word


def terms(text: str) -> list[str]:
    """The words of a text that search matches, in order (repeated as often as they occur)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    for token in _WORD.finditer(normal):
        for part in _split(token.group(0)):
            word = part.strip("_")
            if not word or word in STOP or (len(word) == 1 and word.isascii() and word.isalpha()):
                continue
            out.append(_stem(word))
    return out


def _idf(documents: int, holding: int) -> float:
    return math.log(1.0 + (documents - holding + 0.5) / (holding + 0.5))


def bm25(query_terms: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """Each document's Okapi BM25 score for the query (0.0 for one holding none of its words), with the
    documents' own statistics: their number, how many hold each word, their average length."""
    wanted = set(query_terms)
    if not documents or not wanted:
        return [0.0] * len(documents)
    counts = [Counter(t for t in d if t in wanted) for d in documents]
    holding = Counter(t for c in counts for t in c)
    average = sum(len(d) for d in documents) / len(documents) or 1.0
    weights = {t: _idf(len(documents), holding[t]) for t in holding}
    out = []
    for d, c in zip(documents, counts, strict=True):
        norm = K1 * (1.0 - B + B * len(d) / average)
        out.append(sum(weights[t] * f * (K1 + 1.0) / (f + norm) for t, f in c.items()))
    return out


@lru_cache(maxsize=65536)
def _bucket(term: str, dimensions: int) -> tuple[int, float]:
    """The term's bucket and sign: from its BLAKE2b digest, the same in every process and release."""
    digest = int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "little")
    return digest % dimensions, (1.0 if (digest >> 32) & 1 else -1.0)


def _rounded(x: float) -> float:
    return float(f"{x:.{DIGITS}g}") if x else 0.0


def document_vector(words: Sequence[str], dimensions: int = LEXICAL_DIMENSIONS) -> tuple[float, ...] | None:
    """A document's words hashed into signed buckets, each word weighted by BM25's saturated, length-
    normalised term frequency (against AVERAGE_TERMS): its dot product with `query_vector` is the document's
    BM25 score without inverse document frequency, up to the rare collision of two words in a bucket. None
    when the text has no words. `dimensions` is the scheme's width, which an item's scheme names (LEXICAL_SCHEME
    now; items of the 512-bucket release say `bm25-hash1:512`, and `reembed` rewrites them)."""
    if not words:
        return None
    out = [0.0] * dimensions
    norm = K1 * (1.0 - B + B * len(words) / AVERAGE_TERMS)
    for term, f in Counter(words).items():
        at, sign = _bucket(term, dimensions)
        out[at] += sign * f * (K1 + 1.0) / (f + norm)
    return tuple(_rounded(x) for x in out)


def query_vector(words: Sequence[str], dimensions: int = LEXICAL_DIMENSIONS) -> tuple[float, ...] | None:
    """A query's distinct words, each one signed bucket of weight 1 (None when it has none)."""
    if not words:
        return None
    out = [0.0] * dimensions
    for term in set(words):
        at, sign = _bucket(term, dimensions)
        out[at] += sign
    return tuple(out)
