"""What every benchmark stands on: tables on the local AWS (our template's, a peer's as its documentation
creates it) and a store over them whose clients come from a boto3 session of the benchmark's choosing (metered,
timed, or plain), so that each module measures its question and nothing else. Servers: infra.local.aws's
`moto_server_process`; meters: bench/meter.py; contenders: bench/peers.py."""

from __future__ import annotations

from typing import Any

from infra.local.aws import LocalTables, create_tables, local_client, local_session
from store import SessionStore


def s3_client(url: str, session: Any = None) -> Any:
    """An S3 client on the local AWS at `url` (path-style addressing), from `session` if given."""
    from store.session_store import s3_config

    if session is None:
        return local_client("s3", url, s3_config(path_style=True))
    return session.client("s3", endpoint_url=url, config=s3_config(path_style=True))


def our_tables(url: str, prefix: str, **options: Any) -> LocalTables:
    """template.yaml's tables and bucket on the local AWS at `url`, named by `prefix` (`options`: create_tables')."""
    return create_tables(local_client(endpoint_url=url), prefix=prefix, s3=s3_client(url), **options)


def store_on(url: str, tables: LocalTables, session: Any = None, **options: Any) -> SessionStore:
    """A store over `tables` whose clients are made from `session` (a boto3 session: metered, timed, or plain
    when None), as a user's store makes its own; `options` are SessionStore's."""
    session = session or local_session()
    return SessionStore(
        tables.sessions, tables.messages, bucket=tables.bucket, session=session, endpoint_url=url, **options
    )


def peer_table(url: str, name: str, *keys: str) -> str:
    """A table as a peer package documents it: string keys, the first the partition, the second (if any) the
    sort key; on demand."""
    schema = [{"AttributeName": k, "KeyType": kind} for k, kind in zip(keys, ("HASH", "RANGE"), strict=False)]
    local_client(endpoint_url=url).create_table(
        TableName=name,
        KeySchema=schema,
        AttributeDefinitions=[{"AttributeName": k, "AttributeType": "S"} for k in keys],
        BillingMode="PAY_PER_REQUEST",
    )
    return name
