"""The conftest that LangGraph's own store tests run under (tests/integrations/test_langgraph_own_store_tests.py
copies it into their scratch directory as conftest.py): it puts this store's LangGraph `MemoryStore` where
their tests build `InMemoryStore(index=..., ttl=...)`, on the backend named by AGENT_STORE_BACKEND:

- `reference`: LangGraph's own InMemoryStore, untouched (what their tests are written against);
- `memory`: `MemoryStore` over `SessionStore.memory()`;
- `dynamodb`: `MemoryStore` over DynamoDB on moto (in process, with infra/local/vectors.py), fresh tables per
  store, the memories table's vector index made for the test's embedding dimensions (UpdateTable, as a
  deployment with another model would set it).

Each store holds one owner's memories, as an agent's store does."""

from __future__ import annotations

import itertools
import os
from typing import Any

import langgraph.store.memory as langgraph_memory

BACKEND = os.environ.get("AGENT_STORE_BACKEND", "reference")
OWNER = "langgraph-tests"
_tables = itertools.count()
_aws: Any = None


def _dynamodb_store(dims: int | None) -> Any:
    global _aws
    from infra.local.aws import create_tables, local_client, per_item_transaction_backups

    if _aws is None:
        from moto import mock_aws

        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
        per_item_transaction_backups()
        _aws = mock_aws()
        _aws.start()
    client = local_client()
    tables = create_tables(client, prefix=f"lg{next(_tables)}")
    if dims is not None:
        (index,) = client.describe_table(TableName=tables.memories)["Table"]["VectorIndexes"]
        spec = {k: index[k] for k in ("IndexName", "VectorAttribute", "DistanceFunction", "Projection", "SearchSchema")}
        for update in ({"Delete": {"IndexName": spec["IndexName"]}}, {"Create": {**spec, "Dimensions": dims}}):
            client.update_table(TableName=tables.memories, VectorIndexUpdates=[update])
    return tables.store(client)


if BACKEND != "reference":
    from store import SessionStore
    from store.integrations.langgraph_store import MemoryStore

    class StoreUnderTest(MemoryStore):
        """`InMemoryStore`'s constructor over this store."""

        def __init__(self, *, index: Any = None, ttl: Any = None) -> None:
            dims = int(index["dims"]) if index else None
            store = SessionStore.memory() if BACKEND == "memory" else _dynamodb_store(dims)
            super().__init__(store, owner=OWNER, index=index, ttl=ttl)

    langgraph_memory.InMemoryStore = StoreUnderTest  # type: ignore[misc,assignment]
