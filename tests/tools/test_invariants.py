"""The invariant checker (infra/reliability/invariants.py): a pointer to a missing object is a problem for a
live session, and not for one being deleted (its delete removes the objects first, then the items: a writer
killed in between leaves exactly that, and the next delete or the cascade finishes it)."""

from __future__ import annotations

from infra.local.aws import create_tables, local_client
from infra.reliability.invariants import check
from store import SessionStore
from store.session_store import s3_config


def test_a_missing_object_is_a_problem_unless_its_session_is_being_deleted(moto_endpoint: str) -> None:
    dynamodb = local_client(endpoint_url=moto_endpoint)
    s3 = local_client("s3", endpoint_url=moto_endpoint, config=s3_config(path_style=True))
    tables = create_tables(dynamodb, prefix="invariants", s3=s3)
    store = SessionStore(tables.sessions, tables.messages, bucket=tables.bucket, client=dynamodb, s3_client=s3)
    store.create_session("o", session_id="s1")
    store.put_artifact("s1", "a.bin", b"x" * 10)
    assert check(dynamodb, s3, tables.sessions, tables.messages, tables.bucket).problems == []
    (key,) = [o["Key"] for o in s3.list_objects_v2(Bucket=tables.bucket)["Contents"]]
    s3.delete_object(Bucket=tables.bucket, Key=key)  # the object gone, the artifact's item still naming it
    assert check(dynamodb, s3, tables.sessions, tables.messages, tables.bucket).problems == [
        f"pointer to a missing object: {key}"
    ]
    dynamodb.update_item(
        TableName=tables.sessions,
        Key={"pk": {"S": "S#s1"}, "sk": {"S": "HEAD"}},
        UpdateExpression="SET deleting = :t",
        ExpressionAttributeValues={":t": {"BOOL": True}},
    )
    assert check(dynamodb, s3, tables.sessions, tables.messages, tables.bucket).problems == []
