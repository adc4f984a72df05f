"""The stores a framework's own tests run against (tests/integrations/their_tests.py copies this module into
their scratch directory, beside the conftest that swaps this store in): `new_store(backend)` for the backend
named by AGENT_STORE_BACKEND.

- `memory`: `SessionStore.memory()`, at its defaults (no embedder: memories are searched by their words);
- `memory-wordllama`: the same with wordllama's model (what `make run` embeds with);
- `dynamodb`: DynamoDB at the library's defaults (no embedder), on moto's server in a thread of this process
  (one request at a time, as infra/local does, with the vector search of infra/local/vectors.py), fresh
  tables and bucket per store, their memories index of `dims` dimensions when given (as a deployment with
  another embedder sets it: the template's `MemoryEmbeddingDimensions`; the memory backend has no index)."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
from typing import Any

BACKEND = os.environ.get("AGENT_STORE_BACKEND", "reference")
_tables = itertools.count()
_endpoint: str | None = None


def _moto() -> str:
    """The endpoint of moto's server, started on first use and stopped when the process ends."""
    global _endpoint
    if _endpoint is None:
        from infra.local.aws import local_environment, moto_server, per_item_transaction_backups

        local_environment()
        per_item_transaction_backups()
        stack = contextlib.ExitStack()
        _endpoint = stack.enter_context(moto_server())
        atexit.register(stack.close)
    return _endpoint


def new_store(backend: str = BACKEND, *, dims: int | None = None) -> Any:
    """A new, empty store of `backend` (see the module's text)."""
    from store import SessionStore
    from store.settings import Settings

    if backend == "memory":
        return SessionStore.memory()
    if backend == "memory-wordllama":
        from store.embeddings import WordLlamaEmbedder

        return SessionStore.memory(Settings(embedder=WordLlamaEmbedder()))
    if backend != "dynamodb":
        raise ValueError(f"no store for AGENT_STORE_BACKEND={backend!r}")
    from infra.local.aws import create_tables, local_client
    from store.session_store import s3_config

    endpoint = _moto()
    client = local_client(endpoint_url=endpoint)
    s3 = local_client("s3", endpoint_url=endpoint, config=s3_config(path_style=True))
    from infra.deploy.template import load, with_embedding_dimensions
    from store.core.lexical import LEXICAL_DIMENSIONS

    overrides = {"MemoryEmbeddingDimensions": str(dims), "MemoryEmbeddingModel": "none"} if dims is not None else None
    # LangGraph's tests embed with 500 dimensions, a size the template does not list: the operator's edit
    template = with_embedding_dimensions(load(), dims, LEXICAL_DIMENSIONS) if dims is not None else None
    tables = create_tables(client, prefix=f"theirs{next(_tables)}", s3=s3, parameters=overrides, template=template)
    return tables.store(client, s3)
