"""infra/local/aws.py's quicker moto: the item operations' answers written as their JSON directly are the very
answers moto's own serializer writes, on every kind of attribute value (binary ones included)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.responses import DynamoHandler

from infra.local import aws

ITEM: dict[str, Any] = {
    "pk": {"S": "a"},
    "sk": {"B": b"\x00\x01\xff"},
    "bs": {"BS": [b"x", b"\x00"]},
    "n": {"N": "1.5"},
    "big": {"N": "123456789012345678901234567890"},
    "ns": {"NS": ["1", "-2.25"]},
    "ss": {"SS": ["p", "q"]},
    "l": {"L": [{"S": "x"}, {"N": "2"}, {"BOOL": True}, {"NULL": True}, {"M": {"b": {"B": b"zz"}}}]},
    "text": {"S": 'caf\u00e9 \u2603 "quoted" \\ \n'},
}
KEY = {"pk": ITEM["pk"], "sk": ITEM["sk"]}


@pytest.fixture
def answers() -> Iterator[list[tuple[str, Any, Any]]]:
    """Each answer moto's serializer wrote in the block (action, its result, the body it wrote)."""
    seen: list[tuple[str, Any, Any]] = []
    original = DynamoHandler.serialized

    def spy(self: Any, action_result: Any) -> Any:
        status, headers, body = original(self, action_result)
        seen.append((self._get_action(), action_result, body))
        return status, headers, body

    with pytest.MonkeyPatch.context() as patch, mock_aws():
        patch.setattr(DynamoHandler, "serialized", spy)
        yield seen


def test_item_answers_written_directly_are_moto_serializers_answers(answers: list[tuple[str, Any, Any]]) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    client.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "B"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName="t", Item=ITEM, ReturnConsumedCapacity="TOTAL")
    client.put_item(TableName="t", Item=ITEM, ReturnValues="ALL_OLD")
    client.get_item(TableName="t", Key=KEY, ReturnConsumedCapacity="TOTAL")
    client.query(
        TableName="t",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "a"}},
        ReturnConsumedCapacity="INDEXES",
        Limit=1,
    )
    client.scan(TableName="t")
    client.update_item(
        TableName="t",
        Key=KEY,
        UpdateExpression="SET n = :v",
        ExpressionAttributeValues={":v": {"N": "3"}},
        ReturnValues="ALL_NEW",
    )
    client.transact_get_items(TransactItems=[{"Get": {"TableName": "t", "Key": KEY}}])
    client.batch_get_item(RequestItems={"t": {"Keys": [KEY]}})
    client.transact_write_items(TransactItems=[{"Put": {"TableName": "t", "Item": {**ITEM, "pk": {"S": "b"}}}}])
    client.batch_write_item(RequestItems={"t": [{"DeleteRequest": {"Key": KEY}}]})
    client.delete_item(TableName="t", Key={"pk": {"S": "b"}, "sk": ITEM["sk"]}, ReturnValues="ALL_OLD")
    compared = set()
    for action, result, body in answers:
        direct = aws._direct_answer(action, result)
        if action in aws.DIRECT_ACTIONS:
            assert direct is not None and json.loads(direct) == json.loads(body), action
            compared.add(action)
        else:
            assert direct is None, action  # the other operations keep moto's serializer
    assert compared == aws.DIRECT_ACTIONS


def test_an_error_keeps_moto_serializer() -> None:
    class Failed:
        result = ValueError("no")

    assert aws._direct_answer("GetItem", Failed()) is None
