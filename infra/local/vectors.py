"""DynamoDB's vector indexes and `SearchVectors`, for moto (which has neither), in the local stack and the tests.

Written from the DynamoDB API reference and botocore's service model (1.43.117), not from the store's needs:
tests/aws/test_vector_emulator.py checks it against what they document, on its own.

- CreateTable takes `VectorIndexes` (IndexName 3-255 of `[a-zA-Z0-9_.-]`, VectorAttribute, Dimensions 1-4096,
  DistanceFunction COSINE | EUCLIDEAN | DOT_PRODUCT, Projection ALL | KEYS_ONLY | INCLUDE, SearchSchema of
  HASH and INLINE_FILTER attributes, at most one HASH); DescribeTable shows them, each ACTIVE and not
  backfilling (the search is exact over the table, so a new index has nothing to catch up on).
- UpdateTable takes `VectorIndexUpdates`: one update per call, a `Create` (the same rules; a name the table
  already has is refused) or a `Delete` (by IndexName; one the table does not have is
  ResourceNotFoundException). Other UpdateTable parameters in the same call go on to moto.
- SearchVectors(TableName, IndexName, SearchVector, TopK, SearchConditionExpression,
  ExpressionAttributeNames/Values, ProjectionExpression, ReturnConsumedCapacity) compares the query with every
  item whose vector attribute is a list of numbers of the index's dimensions (exact nearest neighbours), and
  returns the TopK best, best first: COSINE and EUCLIDEAN the smallest scores (a cosine distance from 0, the
  same direction, to 2, the opposite one; a Euclidean distance), DOT_PRODUCT the largest. Ties go in key
  order. The comparison is one numpy product over a matrix of the partition's vectors, kept beside moto's items
  as they change (infra/local/vector_rows.py); the condition chooses the rows before it. The condition may
  name only the search schema's top-level attributes: `=` for a HASH one; `=`, `<>`, `<`, `<=`, `>`, `>=` and
  `BETWEEN ... AND ...` for an INLINE_FILTER one; clauses joined by AND.
  Items are returned as the index projects them (the table's keys always), narrowed by ProjectionExpression,
  which may name only projected attributes.
- Errors as documented: ResourceNotFoundException for a table or index that does not exist, a
  ValidationException for a vector of the wrong dimensions or with a value that is not a finite number,
  TopK out of 1-100, or a condition outside those rules."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import numpy as np

from infra.local import vector_rows

DISTANCES = ("COSINE", "EUCLIDEAN", "DOT_PRODUCT")
INDEX_NAME = re.compile(r"[a-zA-Z0-9_.-]{3,255}")
MAX_TOP_K = 100
SEARCH_HOST = r"https?://search-dynamodb\.(.+)\.amazonaws\.com"
_CLAUSE = re.compile(
    r"^\s*(?P<name>#?[A-Za-z0-9_]+)\s*(?:(?P<op><>|<=|>=|=|<|>)\s*(?P<value>:[A-Za-z0-9_]+)"
    r"|BETWEEN\s+(?P<low>:[A-Za-z0-9_]+)\s+AND\s+(?P<high>:[A-Za-z0-9_]+))\s*$",
    re.IGNORECASE,
)


def install() -> None:
    """Teach moto's DynamoDB vector indexes and SearchVectors (idempotent)."""
    import moto.dynamodb.urls as urls
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.responses import DynamoHandler

    if getattr(DynamoHandler, "_agent_store_vectors", False):
        return
    DynamoHandler._agent_store_vectors = True  # type: ignore[attr-defined]
    vector_rows.track_updates()
    import moto.backend_index as index

    # SearchVectors goes to search-dynamodb.<region>.amazonaws.com: moto's routing (in process) learns the host
    urls.url_bases.append(SEARCH_HOST)
    index.backend_url_patterns.insert(0, ("dynamodb", re.compile(SEARCH_HOST)))
    create_table = DynamoHandler.create_table
    update_table = DynamoHandler.update_table
    describe = Table.describe

    def create_with_vectors(self: Any) -> Any:
        indexes = _checked_indexes(self.body.get("VectorIndexes") or [])
        result = create_table(self)
        table = self.dynamodb_backend.get_table(self.body["TableName"])
        table.vector_indexes = indexes
        return create_table_result(self, result, table)

    def update_with_vectors(self: Any) -> Any:
        updates = self.body.get("VectorIndexUpdates")
        if updates is None:
            return update_table(self)
        table = self.dynamodb_backend.get_table(self.body["TableName"])
        table.vector_indexes = _updated_indexes(getattr(table, "vector_indexes", []), updates, table.name)
        vector_rows.forget(table, everything=True)
        if set(self.body) - {"TableName", "VectorIndexUpdates"}:
            return update_table(self)
        from moto.dynamodb.responses import DynamoResult

        return DynamoResult(table.describe())

    def describe_with_vectors(self: Any, base_key: str = "TableDescription") -> dict[str, Any]:
        out: dict[str, Any] = describe(self, base_key=base_key)
        indexes = getattr(self, "vector_indexes", None)
        if indexes:
            out[base_key]["VectorIndexes"] = [{**i, "IndexStatus": "ACTIVE", "Backfilling": False} for i in indexes]
        return out

    DynamoHandler.create_table = create_with_vectors  # type: ignore[method-assign]
    DynamoHandler.update_table = update_with_vectors  # type: ignore[method-assign]
    Table.describe = describe_with_vectors  # type: ignore[method-assign]
    DynamoHandler.search_vectors = _search_vectors  # type: ignore[attr-defined]


def create_table_result(handler: Any, result: Any, table: Any) -> Any:
    """CreateTable's answer, described again now that the table holds its vector indexes."""
    from moto.dynamodb.responses import DynamoResult

    return DynamoResult(table.describe()) if getattr(table, "vector_indexes", None) else result


def _validation(message: str) -> Exception:
    from moto.dynamodb.exceptions import MockValidationException

    return MockValidationException(message)


def _checked_indexes(given: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table's vector indexes as DynamoDB keeps them, each checked as DynamoDB checks it (names unique)."""
    names: set[str] = set()
    out = []
    for index in given:
        name = index.get("IndexName")
        if not isinstance(name, str) or not INDEX_NAME.fullmatch(name) or name in names:
            raise _validation(f"Invalid vector index name: {name!r}")
        names.add(name)
        out.append(_checked_index(name, index))
    return out


def _checked_index(name: str, index: dict[str, Any]) -> dict[str, Any]:
    """One vector index as DynamoDB keeps it; a ValidationException for what DynamoDB refuses."""
    attribute = (index.get("VectorAttribute") or {}).get("AttributeName")
    if not isinstance(attribute, str) or not attribute:
        raise _validation(f"Vector index {name}: VectorAttribute.AttributeName is required")
    dims = index.get("Dimensions")
    if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= 4096:
        raise _validation(f"Vector index {name}: Dimensions must be from 1 to 4096")
    if index.get("DistanceFunction") not in DISTANCES:
        raise _validation(f"Vector index {name}: DistanceFunction must be one of {', '.join(DISTANCES)}")
    projection = index.get("Projection") or {}
    if projection.get("ProjectionType", "ALL") not in ("ALL", "KEYS_ONLY", "INCLUDE"):
        raise _validation(f"Vector index {name}: invalid ProjectionType")
    schema = index.get("SearchSchema") or []
    kinds = [e.get("SearchSchemaElementType") for e in schema]
    if any(k not in ("HASH", "INLINE_FILTER") for k in kinds) or kinds.count("HASH") > 1:
        raise _validation(f"Vector index {name}: a search schema holds at most one HASH and INLINE_FILTERs")
    kept = {"ProjectionType": projection.get("ProjectionType", "ALL")}
    if projection.get("NonKeyAttributes"):
        kept["NonKeyAttributes"] = projection["NonKeyAttributes"]
    return {
        "IndexName": name,
        "VectorAttribute": {"AttributeName": attribute},
        "Dimensions": dims,
        "DistanceFunction": index["DistanceFunction"],
        "Projection": kept,
        "SearchSchema": schema,
    }


def _updated_indexes(indexes: list[dict[str, Any]], updates: Any, table: str) -> list[dict[str, Any]]:
    """The table's vector indexes after one UpdateTable's `VectorIndexUpdates` (one Create or one Delete)."""
    from moto.dynamodb.exceptions import ResourceNotFoundException

    if not isinstance(updates, list) or len(updates) != 1 or not isinstance(updates[0], dict):
        raise _validation("VectorIndexUpdates takes exactly one update per UpdateTable call")
    kind, spec = next(iter(updates[0].items())) if len(updates[0]) == 1 else (None, None)
    if kind == "Delete" and isinstance(spec, dict):
        name = spec.get("IndexName")
        if not any(i["IndexName"] == name for i in indexes):
            raise ResourceNotFoundException(f"Requested resource not found: Vector index {name} not found on {table}")
        return [i for i in indexes if i["IndexName"] != name]
    if kind == "Create" and isinstance(spec, dict):
        (created,) = _checked_indexes([spec])
        if any(i["IndexName"] == created["IndexName"] for i in indexes):
            raise _validation(f"Vector index {created['IndexName']} already exists on table {table}")
        return [*indexes, created]
    raise _validation("A vector index update holds exactly one of Create or Delete")


def _number(value: Any) -> float:
    try:
        number = float(Decimal(str(value)))
    except ArithmeticError:
        raise _validation("SearchVector values must be numbers") from None
    if not math.isfinite(number):
        raise _validation("SearchVector values must be finite numbers")
    return number


def comparable(av: dict[str, Any]) -> tuple[int, Any]:
    if "N" in av:
        return 0, Decimal(av["N"])
    if "S" in av:
        return 1, av["S"]
    if "B" in av:
        return 2, av["B"]
    raise _validation("search conditions compare only numbers, strings and binaries")


def _conditions(body: dict[str, Any], schema: list[dict[str, Any]]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """The condition's clauses: (attribute, operator, values), each checked against the search schema."""
    expression = body.get("SearchConditionExpression")
    if not expression:
        return []
    kinds = {e["AttributeName"]: e["SearchSchemaElementType"] for e in schema}
    return [_clause(part, expression, body, kinds) for part in _clause_texts(expression)]


def _clause_texts(expression: str) -> list[str]:
    """The expression's clauses as text: split at AND, a BETWEEN's own AND kept within its clause."""
    pending = re.split(r"\s+AND\s+", expression.strip(), flags=re.IGNORECASE)
    out: list[str] = []
    while pending:
        part = pending.pop(0)
        if re.search(r"\bBETWEEN\b", part, re.IGNORECASE) and not re.search(r"\bAND\b", part, re.IGNORECASE):
            if not pending:
                raise _validation(f"Invalid SearchConditionExpression: {expression}")
            part = f"{part} AND {pending.pop(0)}"
        out.append(part)
    return out


def _clause(
    part: str, expression: str, body: dict[str, Any], kinds: dict[str, str]
) -> tuple[str, str, list[dict[str, Any]]]:
    """One clause as (attribute, operator, values), its names and values resolved and checked as DynamoDB does."""
    names = body.get("ExpressionAttributeNames") or {}
    values = body.get("ExpressionAttributeValues") or {}
    match = _CLAUSE.match(part)
    if match is None:
        raise _validation(f"Invalid SearchConditionExpression: {expression}")
    name = match["name"]
    if name.startswith("#") and name not in names:
        raise _validation(f"An expression attribute name used in the expression is not defined: {name}")
    attribute = str(names.get(name, name)) if name.startswith("#") else name
    kind = kinds.get(attribute)
    if kind is None:
        raise _validation(f"SearchConditionExpression may only reference search schema attributes: {attribute}")
    op = (match["op"] or "BETWEEN").upper()
    if kind == "HASH" and op != "=":
        raise _validation(f"Only the equality operator is supported for HASH attribute {attribute}")
    refs = [match["value"]] if match["value"] else [match["low"], match["high"]]
    missing = [ref for ref in refs if ref not in values]
    if missing:
        raise _validation(f"An expression attribute value used in the expression is not defined: {missing[0]}")
    return attribute, op, [values[r] for r in refs]


def _projected(
    item: dict[str, Any], index: dict[str, Any], keys: list[str], wanted: list[str] | None
) -> dict[str, Any]:
    projection = index["Projection"]
    kind = projection.get("ProjectionType", "ALL")
    if kind == "ALL":
        allowed = set(item)
    elif kind == "KEYS_ONLY":
        allowed = set(keys)
    else:
        allowed = set(keys) | set(projection.get("NonKeyAttributes") or [])
    if wanted is not None:
        missing = [w for w in wanted if w not in allowed and kind != "ALL"]
        if missing:
            raise _validation(f"ProjectionExpression names attributes the index does not project: {missing}")
        allowed &= set(wanted)
    return {k: v.to_regular_json() for k, v in item.items() if k in allowed}


def _search_vectors(self: Any) -> Any:
    """SearchVectors over moto's table (see the module docstring)."""
    body = self.body
    table, index = _table_and_index(self.dynamodb_backend, body)
    top_k = body.get("TopK")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise _validation(f"TopK must be from 1 to {MAX_TOP_K}")
    query = [_number(v.get("N") if isinstance(v, dict) else v) for v in body.get("SearchVector") or []]
    if len(query) != index["Dimensions"]:
        raise _validation(
            f"The SearchVector has {len(query)} dimensions; vector index {index['IndexName']} has {index['Dimensions']}"
        )
    clauses = _conditions(body, index["SearchSchema"])
    keys = [k for k in (table.hash_key_attr, table.range_key_attr) if k]
    wanted = _wanted(body)
    partition, items = _candidates(table, clauses)
    rows = vector_rows.rows_of(table, index, partition, comparable)
    operands = [(a, op, [vector_rows.operand(v, comparable) for v in values]) for a, op, values in clauses]
    with rows.lock:
        rows.sync(items, _key_order(keys))
        best = rows.best(np.array(query, dtype=np.float64), index["DistanceFunction"], operands, top_k)
    answer: dict[str, Any] = {
        "SearchResults": [
            {"Item": _projected(found.attrs, index, keys, wanted), "Score": score} for score, found in best
        ]
    }
    if body.get("ReturnConsumedCapacity") in ("TOTAL", "INDEXES"):
        answer["ConsumedCapacity"] = {"VectorSearchRequestBytes": float(4 * len(query))}
    return json.dumps(answer)  # already DynamoDB's JSON: moto's serializer took twice the search's time on it


def _wanted(body: dict[str, Any]) -> list[str] | None:
    """The attributes the ProjectionExpression names (None: no projection asked for)."""
    if not body.get("ProjectionExpression"):
        return None
    names = body.get("ExpressionAttributeNames") or {}
    return [names.get(p.strip(), p.strip()) for p in body["ProjectionExpression"].split(",")]


def _table_and_index(backend: Any, body: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The request's table and vector index; ResourceNotFoundException for either that does not exist."""
    from moto.dynamodb.exceptions import ResourceNotFoundException

    table = backend.tables.get(body["TableName"])
    if table is None:
        raise ResourceNotFoundException(table_name=body["TableName"])
    index = next((i for i in getattr(table, "vector_indexes", []) if i["IndexName"] == body.get("IndexName")), None)
    if index is None:
        raise ResourceNotFoundException(f"Requested resource not found: Vector index {body.get('IndexName')} not found")
    return table, index


def _candidates(table: Any, clauses: list[tuple[str, str, list[dict[str, Any]]]]) -> tuple[Any, Iterable[Any]]:
    """The items a search may return and the partition they are (None: the whole table): one partition's when
    the condition names the table's partition key (what the index's HASH element is for), else the table's."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    for attribute, op, operands in clauses:
        if attribute == table.hash_key_attr and op == "=":
            hash_key = DynamoType(operands[0])
            found = table.items.get(hash_key)
            if found is None:
                vector_rows.forget(table, hash_key)
                return hash_key, ()
            return hash_key, (found.values() if table.has_range_key else (found,))
    return None, table.all_items()


def _key_order(keys: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    def order(stored: Any) -> tuple[Any, ...]:
        out = []
        for k in keys:
            value = stored.attrs.get(k)
            out.append(comparable(value.to_regular_json())[1] if value is not None else "")
        return tuple(out)

    return order
