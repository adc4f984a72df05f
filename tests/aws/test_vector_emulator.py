"""infra/local/vectors.py against what the DynamoDB API reference and botocore's model document for vector
indexes and SearchVectors, on its own (no store): so that the store's tests do not test a mirror of
themselves. Hand-computed scores on small vectors."""

from __future__ import annotations

import math
from typing import Any

import pytest
from botocore.exceptions import ClientError

from infra.local import vectors

KEYS = {
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"},
    ],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "BillingMode": "PAY_PER_REQUEST",
}
SCHEMA = [
    {"AttributeName": "pk", "SearchSchemaElementType": "HASH"},
    {"AttributeName": "tag", "SearchSchemaElementType": "INLINE_FILTER"},
    {"AttributeName": "rank", "SearchSchemaElementType": "INLINE_FILTER"},
]
POINTS = {"a": (1.0, 0.0), "b": (0.0, 1.0), "c": (1.0, 1.0), "d": (-1.0, 0.0), "e": (2.0, 0.0)}


def vector_table(
    client: Any, name: str, distance: str, projection: dict[str, Any] | None = None, dims: int = 2, schema: Any = None
) -> None:
    """A table keyed pk/sk with one vector index `vec` on attribute `v`."""
    vectors.install()
    client.create_table(
        TableName=name,
        **KEYS,
        VectorIndexes=[
            {
                "IndexName": "vec",
                "VectorAttribute": {"AttributeName": "v"},
                "Dimensions": dims,
                "DistanceFunction": distance,
                "Projection": projection or {"ProjectionType": "ALL"},
                "SearchSchema": schema or SCHEMA,
            }
        ],
    )


def make(client: Any, name: str, distance: str, projection: dict[str, Any] | None = None) -> None:
    vector_table(client, name, distance, projection)
    for rank, (sk, (x, y)) in enumerate(POINTS.items()):
        client.put_item(
            TableName=name,
            Item={
                "pk": {"S": "p"},
                "sk": {"S": sk},
                "tag": {"S": "even" if rank % 2 == 0 else "odd"},
                "rank": {"N": str(rank)},
                "note": {"S": f"point {sk}"},
                "v": {"L": [{"N": str(x)}, {"N": str(y)}]},
            },
        )
    client.put_item(TableName=name, Item={"pk": {"S": "p"}, "sk": {"S": "novec"}})
    client.put_item(
        TableName=name, Item={"pk": {"S": "p"}, "sk": {"S": "wrongdims"}, "v": {"L": [{"N": "1"}]}}
    )  # not a vector of the index's dimensions: not in the index
    client.put_item(TableName=name, Item={"pk": {"S": "q"}, "sk": {"S": "a"}, "v": {"L": [{"N": "1"}, {"N": "0"}]}})


def search(client: Any, name: str, query: tuple[float, float], k: int = 10, **more: Any) -> list[tuple[str, float]]:
    answer = client.search_vectors(
        TableName=name, IndexName="vec", SearchVector=[{"N": str(x)} for x in query], TopK=k, **more
    )
    return [(r["Item"]["sk"]["S"], r["Score"]) for r in answer["SearchResults"]]


def test_describe_table_shows_the_vector_index_active(dynamodb_client: Any) -> None:
    make(dynamodb_client, "vx-describe", "COSINE")
    (index,) = dynamodb_client.describe_table(TableName="vx-describe")["Table"]["VectorIndexes"]
    assert index["IndexName"] == "vec" and index["Dimensions"] == 2 and index["IndexStatus"] == "ACTIVE"
    assert index["DistanceFunction"] == "COSINE" and index["SearchSchema"] == SCHEMA


IN_P: dict[str, Any] = {"SearchConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}}}


def test_cosine_returns_the_smallest_distances_first(dynamodb_client: Any) -> None:
    make(dynamodb_client, "vx-cos", "COSINE")
    found = search(dynamodb_client, "vx-cos", (1.0, 0.0), **IN_P)
    # a and e point the same way (0), c at 45 degrees (1 - cos 45), b at 90 (1), d opposite (2); ties: key order
    assert [k for k, _ in found] == ["a", "e", "c", "b", "d"]
    assert [round(s, 6) for _, s in found] == [0.0, 0.0, round(1 - math.sqrt(0.5), 6), 1.0, 2.0]


def test_euclidean_and_dot_product_order_as_documented(dynamodb_client: Any) -> None:
    make(dynamodb_client, "vx-euc", "EUCLIDEAN")
    make(dynamodb_client, "vx-dot", "DOT_PRODUCT")
    euclid = search(dynamodb_client, "vx-euc", (1.0, 0.0), **IN_P)
    assert [k for k, _ in euclid][:2] == ["a", "c"] and euclid[0][1] == 0.0 and euclid[-1] == ("d", 2.0)
    dot = search(dynamodb_client, "vx-dot", (1.0, 0.0), **IN_P)
    assert [k for k, _ in dot] == ["e", "a", "c", "b", "d"] and dot[0][1] == 2.0  # the largest first


def test_top_k_the_hash_partition_and_inline_filters(dynamodb_client: Any) -> None:
    make(dynamodb_client, "vx-filter", "COSINE")
    values = {":p": {"S": "p"}, ":t": {"S": "even"}, ":lo": {"N": "1"}, ":hi": {"N": "3"}}
    assert len(search(dynamodb_client, "vx-filter", (1.0, 0.0), k=2)) == 2
    everywhere = {k for k, _ in search(dynamodb_client, "vx-filter", (1.0, 0.0))}
    assert "novec" not in everywhere and "wrongdims" not in everywhere  # only vectors of the index's dimensions
    only_q = search(
        dynamodb_client,
        "vx-filter",
        (1.0, 0.0),
        SearchConditionExpression="pk = :q",
        ExpressionAttributeValues={":q": {"S": "q"}},
    )
    assert [k for k, _ in only_q] == ["a"]
    even = search(
        dynamodb_client,
        "vx-filter",
        (1.0, 0.0),
        SearchConditionExpression="pk = :p AND #t = :t",
        ExpressionAttributeNames={"#t": "tag"},
        ExpressionAttributeValues={":p": values[":p"], ":t": values[":t"]},
    )
    assert sorted(k for k, _ in even) == ["a", "c", "e"]
    ranged = search(
        dynamodb_client,
        "vx-filter",
        (1.0, 0.0),
        SearchConditionExpression="pk = :p AND #r BETWEEN :lo AND :hi",
        ExpressionAttributeNames={"#r": "rank"},
        ExpressionAttributeValues={k: values[k] for k in (":p", ":lo", ":hi")},
    )
    assert sorted(k for k, _ in ranged) == ["b", "c", "d"]


def test_projection_keys_only_and_projection_expression(dynamodb_client: Any) -> None:
    make(dynamodb_client, "vx-proj", "COSINE", {"ProjectionType": "KEYS_ONLY"})
    answer = dynamodb_client.search_vectors(
        TableName="vx-proj", IndexName="vec", SearchVector=[{"N": "1"}, {"N": "0"}], TopK=1
    )
    assert set(answer["SearchResults"][0]["Item"]) == {"pk", "sk"}
    with pytest.raises(ClientError, match="ValidationException"):
        dynamodb_client.search_vectors(
            TableName="vx-proj",
            IndexName="vec",
            SearchVector=[{"N": "1"}, {"N": "0"}],
            TopK=1,
            ProjectionExpression="note",
        )


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"TableName": "nope"}, "ResourceNotFoundException"),
        ({"IndexName": "nope"}, "ResourceNotFoundException"),
        ({"SearchVector": [{"N": "1"}]}, "ValidationException"),
        ({"SearchVector": [{"N": "NaN"}, {"N": "0"}]}, "ValidationException"),
        ({"TopK": 101}, "ValidationException"),
        (
            {"SearchConditionExpression": "note = :n", "ExpressionAttributeValues": {":n": {"S": "x"}}},
            "ValidationException",
        ),
        (
            {"SearchConditionExpression": "pk > :n", "ExpressionAttributeValues": {":n": {"S": "x"}}},
            "ValidationException",
        ),
        ({"SearchConditionExpression": "pk = :missing"}, "ValidationException"),
    ],
)
def test_documented_errors(dynamodb_client: Any, change: dict[str, Any], code: str, request: Any) -> None:
    name = f"vx-err-{request.node.callspec.id}"
    make(dynamodb_client, name, "COSINE")
    params: dict[str, Any] = {
        "TableName": name,
        "IndexName": "vec",
        "SearchVector": [{"N": "1"}, {"N": "0"}],
        "TopK": 3,
        **change,
    }
    with pytest.raises(ClientError) as caught:
        dynamodb_client.search_vectors(**params)
    assert caught.value.response["Error"]["Code"] == code


def index_spec(name: str, dims: int, projection: str, **more: Any) -> dict[str, Any]:
    """A cosine vector index on attribute `v`."""
    return {
        "IndexName": name,
        "VectorAttribute": {"AttributeName": "v"},
        "Dimensions": dims,
        "DistanceFunction": "COSINE",
        "Projection": {"ProjectionType": projection},
        **more,
    }


def test_create_table_refuses_a_malformed_vector_index(dynamodb_client: Any) -> None:
    vectors.install()
    good = index_spec("vec", 8, "ALL")
    changes: list[dict[str, Any]] = [
        {"IndexName": "bad name!"},
        {"Dimensions": 5000},
        {"DistanceFunction": "MANHATTAN"},
    ]
    for i, change in enumerate(changes):
        with pytest.raises(ClientError, match="ValidationException"):
            dynamodb_client.create_table(TableName=f"vx-bad-{i}", **KEYS, VectorIndexes=[{**good, **change}])


def test_update_table_creates_and_deletes_a_vector_index(dynamodb_client: Any) -> None:
    """UpdateTable's VectorIndexUpdates: one Create or one Delete a call; a created index searches the items the
    table already holds (ACTIVE, not backfilling); a deleted one is gone from DescribeTable and SearchVectors."""
    vectors.install()
    dynamodb_client.create_table(TableName="vx-update", **KEYS)
    dynamodb_client.put_item(
        TableName="vx-update", Item={"pk": {"S": "p"}, "sk": {"S": "a"}, "v": {"L": [{"N": "1"}, {"N": "0"}]}}
    )
    index = index_spec(
        "later", 2, "KEYS_ONLY", SearchSchema=[{"AttributeName": "pk", "SearchSchemaElementType": "HASH"}]
    )
    assert "VectorIndexes" not in dynamodb_client.describe_table(TableName="vx-update")["Table"]
    answer = dynamodb_client.update_table(TableName="vx-update", VectorIndexUpdates=[{"Create": index}])
    (described,) = answer["TableDescription"]["VectorIndexes"]
    assert described["IndexName"] == "later" and described["IndexStatus"] == "ACTIVE"
    assert described["Backfilling"] is False
    found = dynamodb_client.search_vectors(
        TableName="vx-update", IndexName="later", SearchVector=[{"N": "1"}, {"N": "0"}], TopK=1
    )["SearchResults"]
    assert found == [{"Item": {"pk": {"S": "p"}, "sk": {"S": "a"}}, "Score": 0.0}]
    with pytest.raises(ClientError, match="ValidationException"):  # the name is taken
        dynamodb_client.update_table(TableName="vx-update", VectorIndexUpdates=[{"Create": index}])
    with pytest.raises(ClientError, match="ValidationException"):  # one update a call
        dynamodb_client.update_table(
            TableName="vx-update",
            VectorIndexUpdates=[{"Create": {**index, "IndexName": "other"}}, {"Delete": {"IndexName": "later"}}],
        )
    with pytest.raises(ClientError, match="ValidationException"):  # malformed as in CreateTable
        dynamodb_client.update_table(
            TableName="vx-update", VectorIndexUpdates=[{"Create": {**index, "DistanceFunction": "MANHATTAN"}}]
        )
    with pytest.raises(ClientError) as caught:
        dynamodb_client.update_table(TableName="vx-update", VectorIndexUpdates=[{"Delete": {"IndexName": "nope"}}])
    assert caught.value.response["Error"]["Code"] == "ResourceNotFoundException"
    dynamodb_client.update_table(TableName="vx-update", VectorIndexUpdates=[{"Delete": {"IndexName": "later"}}])
    assert "VectorIndexes" not in dynamodb_client.describe_table(TableName="vx-update")["Table"]
    with pytest.raises(ClientError) as caught:
        dynamodb_client.search_vectors(
            TableName="vx-update", IndexName="later", SearchVector=[{"N": "1"}, {"N": "0"}], TopK=1
        )
    assert caught.value.response["Error"]["Code"] == "ResourceNotFoundException"


# ------------------------------------------------ the vectorised search against a scan of every item, in Python

DIMS = 12


def _scan_score(function: str, query: list[float], vector: list[float]) -> float:
    """What the emulator answered before it kept a matrix: each item's score, summed in Python."""
    if function == "DOT_PRODUCT":
        return sum(a * b for a, b in zip(query, vector, strict=True))
    if function == "EUCLIDEAN":
        return math.sqrt(sum((a - b) ** 2 for a, b in zip(query, vector, strict=True)))
    qn, vn = math.sqrt(sum(a * a for a in query)), math.sqrt(sum(b * b for b in vector))
    return 1.0 if not qn or not vn else 1.0 - sum(a * b for a, b in zip(query, vector, strict=True)) / (qn * vn)


def _scan(
    items: dict[tuple[str, str], dict[str, Any]],
    function: str,
    query: list[float],
    k: int,
) -> list[tuple[str, str, float]]:
    scored = [
        (_scan_score(function, query, item["vec"]), key) for key, item in items.items() if item["vec"] is not None
    ]
    scored.sort(key=lambda t: (-t[0] if function == "DOT_PRODUCT" else t[0], t[1]))
    return [(pk, sk, score) for score, (pk, sk) in scored[:k]]


def _put(client: Any, table: str, items: dict[tuple[str, str], dict[str, Any]], pk: str, sk: str, **item: Any) -> None:
    items[(pk, sk)] = item
    stored: dict[str, Any] = {"pk": {"S": pk}, "sk": {"S": sk}, "tag": {"S": item["tag"]}, "n": {"N": str(item["n"])}}
    if item["vec"] is not None:
        stored["v"] = {"L": [{"N": repr(x)} for x in item["vec"]]}
    client.put_item(TableName=table, Item=stored)


def _searched(client: Any, table: str, query: list[float], k: int, **more: Any) -> list[tuple[str, str, float]]:
    answer = client.search_vectors(
        TableName=table, IndexName="vec", SearchVector=[{"N": repr(x)} for x in query], TopK=k, **more
    )
    return [(r["Item"]["pk"]["S"], r["Item"]["sk"]["S"], r["Score"]) for r in answer["SearchResults"]]


def _same(found: list[tuple[str, str, float]], expected: list[tuple[str, str, float]]) -> None:
    """The same items in the same order with the very same scores (the memory backend's are compared with
    DynamoDB's exactly: tests/aws/test_memories_on_aws.py)."""
    assert found == expected


@pytest.mark.parametrize("function", ["DOT_PRODUCT", "COSINE", "EUCLIDEAN"])
def test_the_matrix_search_answers_as_a_scan_of_every_item(dynamodb_client: Any, function: str) -> None:
    """Random vectors (some repeated, so that scores tie), a partition, inline filters, the whole table; then
    again after puts over items, in-place updates of a vector and of a filtered attribute, deletes, and a
    transaction that fails and is rolled back: the same items, order and scores as a scan of every item."""
    import random

    rng = random.Random(f"vectors-{function}")
    table = f"vx-scan-{function.lower()}"
    schema = [{"AttributeName": a, "SearchSchemaElementType": "INLINE_FILTER"} for a in ("tag", "n")]
    vector_table(dynamodb_client, table, function, dims=DIMS, schema=[SCHEMA[0], *schema])
    items: dict[tuple[str, str], dict[str, Any]] = {}
    repeated = [round(rng.uniform(-1, 1), 3) for _ in range(DIMS)]

    def vector() -> list[float] | None:
        draw = rng.random()
        if draw < 0.1:
            return list(repeated)  # ties, at keys all over the partition
        if draw < 0.13:
            return None
        if draw < 0.15:
            return [0.0] * DIMS
        return [round(rng.uniform(-1, 1), 3) for _ in range(DIMS)]

    for i in range(240):
        pk = "p" if i % 4 else "q"
        _put(
            dynamodb_client,
            table,
            items,
            pk,
            f"{rng.randrange(10**6):06d}-{i}",
            vec=vector(),
            tag=rng.choice("xyz"),
            n=i % 17,
        )

    def check() -> None:
        for query in ([round(rng.uniform(-1, 1), 3) for _ in range(DIMS)], list(repeated)):
            in_p = {"SearchConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}}}
            in_partition = {k: v for k, v in items.items() if k[0] == "p"}
            _same(_searched(dynamodb_client, table, query, 25, **in_p), _scan(in_partition, function, query, 25))
            _same(_searched(dynamodb_client, table, query, 100), _scan(items, function, query, 100))
            filtered = _searched(
                dynamodb_client,
                table,
                query,
                30,
                SearchConditionExpression="pk = :p AND tag = :t AND n BETWEEN :lo AND :hi",
                ExpressionAttributeValues={":p": {"S": "p"}, ":t": {"S": "y"}, ":lo": {"N": "3"}, ":hi": {"N": "11"}},
            )
            in_range = {k: v for k, v in items.items() if k[0] == "p" and v["tag"] == "y" and 3 <= v["n"] <= 11}
            _same(filtered, _scan(in_range, function, query, 30))
            assert filtered, "the filter keeps some items"

    check()
    keys = sorted(items)
    for pk, sk in rng.sample(keys, 30):  # puts over items: new Item objects
        _put(dynamodb_client, table, items, pk, sk, vec=vector(), tag=rng.choice("xyz"), n=rng.randrange(17))
    for pk, sk in rng.sample(keys, 20):  # updated in place: a vector, then a filtered attribute
        new = [round(rng.uniform(-1, 1), 3) for _ in range(DIMS)]
        items[(pk, sk)] = {**items[(pk, sk)], "vec": new, "tag": "y", "n": 5}
        dynamodb_client.update_item(
            TableName=table,
            Key={"pk": {"S": pk}, "sk": {"S": sk}},
            UpdateExpression="SET v = :v, tag = :t",
            ExpressionAttributeValues={":v": {"L": [{"N": repr(x)} for x in new]}, ":t": {"S": "y"}},
        )
        dynamodb_client.update_item(
            TableName=table,
            Key={"pk": {"S": pk}, "sk": {"S": sk}},
            UpdateExpression="SET n = :n",
            ExpressionAttributeValues={":n": {"N": "5"}},
        )
    for pk, sk in rng.sample(sorted(items), 25):
        del items[(pk, sk)]
        dynamodb_client.delete_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}})
    (pk, sk) = sorted(items)[0]
    with pytest.raises(ClientError, match="TransactionCanceled"):  # changes an item, then fails: rolled back
        dynamodb_client.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": table,
                        "Key": {"pk": {"S": pk}, "sk": {"S": sk}},
                        "UpdateExpression": "SET v = :v",
                        "ExpressionAttributeValues": {":v": {"L": [{"N": "9"}] * DIMS}},
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": table,
                        "Key": {"pk": {"S": "nobody"}, "sk": {"S": "none"}},
                        "ConditionExpression": "attribute_exists(pk)",
                    }
                },
            ]
        )
    check()
