"""The backfill after a stack's memory embedder or its dimensions change (docs/operations.md, "Changing the memory
embedder"): every memory embedded by another embedder than the one now configured is embedded again, from the
text it was indexed with, into the new index.

An operator's one-off over the whole memories table (a paged Scan: no request path ever scans), safe to run while
agents write and to run again: each memory is updated only if it is still as it was read (its update time and
embedder), so a memory put meanwhile (already embedded by the new embedder) is left alone, and a memory already
re-embedded is skipped. Memories with no vector (put with `index=False`, or by a store without an embedder)
stay without one.

    python -m infra.cli reembed            # MEMORIES_TABLE and MEMORY_EMBEDDER from the environment
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from store.aws.plans.memories import vector_numbers
from store.core import memories as m
from store.embeddings import embed, embedder_from_env

PAGE = 100  # items one Scan page holds, and one batch of texts embedded


@dataclass
class Reembedded:
    """What a backfill did: memories embedded again, already the embedder's, changed meanwhile, not embedded."""

    embedded: int = 0
    current: int = 0
    changed: int = 0
    unembedded: int = 0


def reembed(client: Any, table: str, embedder: Any, *, say: Callable[[str], None] = print) -> Reembedded:
    """Embed again every memory of `table` whose vector another embedder made (see the module's text)."""
    wanted = m.embedder_id(embedder)
    done = Reembedded()
    start: dict[str, Any] | None = None
    while True:
        page = client.scan(
            TableName=table,
            Limit=PAGE,
            ProjectionExpression="pk, sk, txt, emb, ua",
            ConsistentRead=True,
            **({"ExclusiveStartKey": start} if start else {}),
        )
        items = [i for i in page.get("Items", []) if i["sk"]["S"].startswith(m.MEMORY_PREFIX)]
        stale = [i for i in items if "emb" in i and i["emb"]["S"] != wanted and i.get("txt", {}).get("S")]
        done.current += sum(1 for i in items if i.get("emb", {}).get("S") == wanted)
        done.unembedded += sum(1 for i in items if "emb" not in i)
        vectors = embed(embedder, [i["txt"]["S"] for i in stale]) if stale else []
        for item, vector in zip(stale, vectors, strict=True):
            try:
                client.update_item(
                    TableName=table,
                    Key={"pk": item["pk"], "sk": item["sk"]},
                    UpdateExpression="SET vec = :vec, emb = :emb",
                    ConditionExpression="ua = :ua AND emb = :old",
                    ExpressionAttributeValues={
                        ":vec": {"L": vector_numbers(vector)},
                        ":emb": {"S": wanted},
                        ":ua": item["ua"],
                        ":old": item["emb"],
                    },
                )
                done.embedded += 1
            except client.exceptions.ConditionalCheckFailedException:
                done.changed += 1  # put or deleted meanwhile: what is there now is the writer's
        start = page.get("LastEvaluatedKey")
        if start is None:
            say(
                f"re-embedded {done.embedded} memories with {wanted} ({done.current} were already, "
                f"{done.changed} changed meanwhile, {done.unembedded} have no vector)"
            )
            return done


def main() -> int:
    """The backfill on the table and embedder the environment names (MEMORIES_TABLE, MEMORY_EMBEDDER)."""
    import boto3

    table, named = os.environ.get("MEMORIES_TABLE"), os.environ.get("MEMORY_EMBEDDER")
    embedder = embedder_from_env(named)
    if not table or embedder is None:
        print(
            "reembed: set MEMORIES_TABLE and MEMORY_EMBEDDER (the stack's, as its outputs name them)", file=sys.stderr
        )
        return 2
    reembed(boto3.client("dynamodb"), table, embedder)
    return 0
