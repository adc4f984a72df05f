"""The rows a vector index searches, kept beside moto's items as numpy arrays: infra/local/vectors.py's
`SearchVectors` scores a partition's vectors in one matrix product instead of a Python loop per item.

One `Rows` per index and partition (or per index for a search of the whole table) holds each item's vector as a
row of a contiguous float64 matrix, its norm, the values of the search schema's attributes (which conditions
read) and its place in key order. It is kept up to date at each search, not at each write: a row is read again
when its item is not the object it was made from (a put, a delete, a transaction rolled back: moto makes a new
`Item`) or when the item was updated in place since (moto's `update_item` changes the `Item` it holds:
`track_updates` stamps it). So every write path of moto is covered without a hook on each, and a search costs one
pass over the partition's keys in Python plus the matrix product.

What a search answers is what the scan of each item it replaced answered (tests/aws/test_vector_emulator.py
compares the two on random data): the same items, the same scores, ties in key order. The matrix product only
chooses the best rows; their scores are summed again in order, as the scan did (the product may add one row's
products in another order than another's, so its last bits differ from the scan's, and from the memory
backend's, which the store's tests compare exactly)."""

from __future__ import annotations

import itertools
import math
import operator
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

GENERATION = "_agent_store_generation"  # set on a moto Item each time update_item changes it in place
TIE_DIGITS = 12  # significant digits below which two scores are a tie (ordered by key)
_stamps = itertools.count(1)
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
MISSING = -1  # the kind code of an attribute the item lacks
OTHER = 3  # the kind code of a value no condition compares (a list, a map, a boolean...)

Clause = tuple[str, str, list[tuple[int, Any]]]  # (attribute, operator, operands as (kind, value))
Comparable = Callable[[dict[str, Any]], tuple[int, Any]]


def track_updates() -> None:
    """Stamp the item an `update_item` changed in place (idempotent), so that `Rows` reads it again."""
    import moto.dynamodb.models as models
    from moto.dynamodb.models.dynamo_type import DynamoType

    if getattr(models, "_agent_store_update_stamps", False):
        return
    models._agent_store_update_stamps = True  # type: ignore[attr-defined]
    original = models.DynamoDBBackend.update_item

    def update_item(self: Any, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, table_name, key, *args, **kwargs)
        finally:
            table = self.tables.get(table_name)
            if table is not None and table.hash_key_attr in key:
                range_attr = table.range_key_attr
                range_key = DynamoType(key[range_attr]) if range_attr and range_attr in key else None
                item = table.get_item(DynamoType(key[table.hash_key_attr]), range_key)
                if item is not None:
                    setattr(item, GENERATION, next(_stamps))

    models.DynamoDBBackend.update_item = update_item  # type: ignore[method-assign]


def _vector(value: Any, dims: int) -> list[float] | None:
    """An item's vector attribute (moto's stored value) as numbers, or None when it is not a list of `dims`
    numbers."""
    if value is None or value.type != "L" or len(value.value) != dims:
        return None
    elements = value.value
    if any(v.type != "N" for v in elements):
        return None
    return [float(v.value) for v in elements]


class Rows:
    """The rows of one vector index over one set of items (a partition, or the whole table)."""

    def __init__(self, dims: int, attribute: str, filters: Iterable[str], comparable: Comparable) -> None:
        self.dims, self.attribute, self.comparable = dims, attribute, comparable
        self.filters = tuple(dict.fromkeys(filters))
        self.size = 0  # rows in use or freed: the matrix's rows past it were never written
        self.matrix: npt.NDArray[np.float64] = np.zeros((0, dims))
        self.norms: npt.NDArray[np.float64] = np.zeros(0)
        self.usable: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self.kinds = {a: np.zeros(0, dtype=np.int8) for a in self.filters}
        self.values = {a: np.zeros(0, dtype=object) for a in self.filters}
        self.row_of: dict[Any, int] = {}
        self.items: list[Any] = []  # the moto Item each row was read from (None: a free row)
        self.stamps: list[int] = []
        self.orders: list[tuple[Any, ...]] = []
        self.free: list[int] = []
        self.lock = threading.Lock()

    def sync(self, items: Iterable[Any], order: Callable[[Any], tuple[Any, ...]]) -> None:
        """Make the rows those of `items` (moto Items): rows of items gone are freed, rows of items that are new,
        replaced or updated since are read again. Rows are found by the Item object (each row holds on to its
        Item, so no other object can take its id): hashing moto's keys took most of a search's time."""
        current = {id(item): item for item in items}
        for gone in self.row_of.keys() - current.keys():
            freed = self.row_of.pop(gone)
            self.items[freed] = None
            self.usable[freed] = False
            for kinds in self.kinds.values():
                kinds[freed] = MISSING
            self.free.append(freed)
        row_of, stamps = self.row_of, self.stamps
        for ident, item in current.items():
            row = row_of.get(ident)
            stamp = getattr(item, GENERATION, 0)
            if row is not None and stamps[row] == stamp:
                continue
            if row is None:
                row = self._new_row()
                row_of[ident] = row
            self._write(row, item, stamp, order(item))

    def _new_row(self) -> int:
        if self.free:
            return self.free.pop()
        if self.size == len(self.usable):
            self._grow(max(16, 2 * self.size))
        self.items.append(None)
        self.stamps.append(0)
        self.orders.append(())
        self.size += 1
        return self.size - 1

    def _grow(self, capacity: int) -> None:
        def grown(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
            out = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
            out[: len(array)] = array
            return out

        self.matrix, self.norms, self.usable = grown(self.matrix), grown(self.norms), grown(self.usable)
        self.kinds = {a: grown(k) for a, k in self.kinds.items()}
        self.values = {a: grown(v) for a, v in self.values.items()}

    def _write(self, row: int, item: Any, stamp: int, order: tuple[Any, ...]) -> None:
        self.items[row], self.stamps[row], self.orders[row] = item, stamp, order
        vector = _vector(item.attrs.get(self.attribute), self.dims)
        self.usable[row] = vector is not None
        if vector is not None:
            self.matrix[row] = vector
            self.norms[row] = np.sqrt(np.dot(self.matrix[row], self.matrix[row]))
        for attribute in self.filters:
            stored = item.attrs.get(attribute)
            kind, value = (MISSING, None) if stored is None else self._comparable(stored)
            self.kinds[attribute][row], self.values[attribute][row] = kind, value

    def _comparable(self, stored: Any) -> tuple[int, Any]:
        try:
            return self.comparable(stored.to_regular_json())
        except Exception:
            return OTHER, None

    def selected(self, clauses: list[Clause]) -> npt.NDArray[np.intp]:
        """The rows holding a vector of the index's dimensions whose attributes meet every clause."""
        mask = self.usable[: self.size].copy()
        for attribute, op, operands in clauses:
            kinds = self.kinds[attribute][: self.size]
            if any(kind != operands[0][0] for kind, _ in operands):
                return np.zeros(0, dtype=np.intp)
            rows = np.flatnonzero(mask & (kinds == operands[0][0]))
            values = self.values[attribute][rows]
            low = operands[0][1]
            if op == "BETWEEN":
                held = np.asarray(values >= low, dtype=bool) & np.asarray(values <= operands[1][1], dtype=bool)
            else:
                held = np.asarray(_COMPARE[op](values, low), dtype=bool)
            mask[:] = False
            mask[rows[held]] = True
        return np.flatnonzero(mask)

    def scores(self, rows: npt.NDArray[np.intp], query: npt.NDArray[np.float64], function: str) -> Any:
        """The rows' scores against `query` by the index's distance function."""
        if not len(rows):
            return np.zeros(0)
        # most of the partition: one product over it all is cheaper than copying the rows out first
        matrix = self.matrix[: self.size] if 2 * len(rows) > self.size else self.matrix[rows]
        chosen = rows if matrix.shape[0] == self.size else slice(None)
        if function == "EUCLIDEAN":
            return np.sqrt(np.square(matrix[chosen] - query).sum(axis=1))
        dots = (matrix @ query)[chosen]
        if function == "DOT_PRODUCT":
            return dots
        return cosine_distances(dots, float(np.sqrt(np.dot(query, query))), self.norms[rows])

    def best(
        self, query: npt.NDArray[np.float64], function: str, clauses: list[Clause], top_k: int
    ) -> list[tuple[float, Any]]:
        """The `top_k` best rows meeting `clauses`, best first, ties in key order: (score, moto Item). The
        matrix product chooses them (those at or better than the k-th to TIE_DIGITS, ties included); their
        scores are then summed again one product after another (`exact_scores`), as the scan of each item did,
        so that they are the very numbers the memory backend computes (a product's last bits depend on the
        order of its sums)."""
        sign = -1.0 if function == "DOT_PRODUCT" else 1.0  # the best first: the largest product, the least distance
        rows = self.selected(clauses)
        ranked = tie_rounded(self.scores(rows, query, function) * sign)
        if len(ranked) > top_k:
            kth = np.partition(ranked, top_k - 1)[top_k - 1]
            rows = rows[np.flatnonzero(ranked <= kth)]
        exact = exact_scores(function, query, self.matrix[rows]).tolist()
        scored = sorted(zip(exact, rows.tolist(), strict=True), key=lambda t: (sign * t[0], self.orders[t[1]]))
        return [(score, self.items[row]) for score, row in scored[:top_k]]


def _in_order(products: Any) -> Any:
    """Each row's sum of `products`, added one after another from the first (what Python's `sum` of them gives:
    `cumsum` accumulates in order, where `sum` and a matrix product add in blocks)."""
    return np.cumsum(products, axis=1)[:, -1] if products.shape[1] else np.zeros(products.shape[0])


def exact_scores(function: str, query: npt.NDArray[np.float64], vectors: npt.NDArray[np.float64]) -> Any:
    """The rows' scores, their products summed in order as a scan of each item sums them: COSINE's distance (1.0
    when either vector is zero), EUCLIDEAN's, DOT_PRODUCT's product."""
    if function == "EUCLIDEAN":
        return np.sqrt(_in_order(np.square(vectors - query)))
    dots = _in_order(vectors * query)
    if function == "DOT_PRODUCT":
        return dots
    query_norm = math.sqrt(float(_in_order((query * query)[None, :])[0]))
    return cosine_distances(dots, query_norm, np.sqrt(_in_order(vectors * vectors)))


def cosine_distances(dots: Any, query_norm: float, norms: Any) -> Any:
    """COSINE's distances from the dot products and the norms: 1 less the cosine, 1.0 when either vector is zero."""
    with np.errstate(divide="ignore", invalid="ignore"):
        distances = 1.0 - dots / (query_norm * norms)
    return np.where((norms == 0) | (query_norm == 0), 1.0, distances)


def tie_rounded(scores: Any) -> Any:
    """`scores` rounded to TIE_DIGITS significant digits (what orders them: closer scores are ties)."""
    scores = np.asarray(scores, dtype=np.float64)
    magnitude = np.floor(np.log10(np.abs(scores), where=scores != 0, out=np.zeros_like(scores)))
    scale = np.power(10.0, TIE_DIGITS - 1 - magnitude)
    return np.round(scores * scale) / scale


def operand(value: dict[str, Any], comparable: Comparable) -> tuple[int, Any]:
    """A condition's value as (kind, value), or OTHER when no stored value compares with it."""
    try:
        return comparable(value)
    except Exception:
        return OTHER + 1, None  # a kind no row has: the condition holds for none


def rows_of(table: Any, index: dict[str, Any], partition: Any, comparable: Comparable) -> Rows:
    """The table's `Rows` for the index over one partition (its hash key), or over the whole table (None)."""
    cache: dict[tuple[Any, ...], Rows] = table.__dict__.setdefault("_agent_store_rows", {})
    filters = tuple(e["AttributeName"] for e in index["SearchSchema"])
    attribute = index["VectorAttribute"]["AttributeName"]
    key = (index["IndexName"], attribute, index["Dimensions"], filters, partition)
    found = cache.get(key)
    if found is None:
        found = cache[key] = Rows(index["Dimensions"], attribute, filters, comparable)
    return found


def forget(table: Any, partition: Any = None, *, everything: bool = False) -> None:
    """Drop the rows kept for a partition that is gone (or all of a table's, when its indexes change)."""
    cache: dict[tuple[Any, ...], Rows] = table.__dict__.get("_agent_store_rows", {})
    for key in [k for k in cache if everything or k[-1] == partition]:
        del cache[key]
