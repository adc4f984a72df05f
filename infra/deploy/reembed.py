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
from store.core.lexical import LEXICAL_DIMENSIONS, LEXICAL_SCHEME
from store.embeddings import embed, embedder_from_env

PAGE = 100  # items one Scan page holds, and one batch of texts embedded


@dataclass
class Reembedded:
    """What a backfill did: memories embedded again, already the embedder's, changed meanwhile, not embedded."""

    embedded: int = 0
    current: int = 0
    changed: int = 0
    unembedded: int = 0
    words: int = 0  # of the unembedded, those whose words' vector was written again (the index's new size)


def _stale(item: dict[str, Any], wanted: str, dimensions: int) -> bool:
    """Whether the item's vector is not what a put makes now: another embedder's, one of other dimensions
    than the index's, or one made before words were part of the vector (no `lex` of the current scheme)."""
    if not item.get("txt", {}).get("S"):
        return False
    embedded = "emb" in item and item["emb"]["S"] != wanted
    sized = len(item.get("vec", {}).get("L", [])) == dimensions + LEXICAL_DIMENSIONS
    return bool(embedded or not sized or item.get("lex", {}).get("S") != LEXICAL_SCHEME)


def reembed(client: Any, table: str, embedder: Any, *, say: Callable[[str], None] = print) -> Reembedded:
    """Embed again every memory of `table` whose vector another embedder made, or whose vector holds no words
    yet (see the module's text)."""
    wanted = m.embedder_id(embedder)
    done = Reembedded()
    start: dict[str, Any] | None = None
    while True:
        page = client.scan(
            TableName=table,
            Limit=PAGE,
            ProjectionExpression="pk, sk, txt, emb, lex, vec, ua",
            ConsistentRead=True,
            **({"ExclusiveStartKey": start} if start else {}),
        )
        stale = _stale_of(page.get("Items", []), wanted, embedder.dimensions, done)
        meant = [i for i in stale if "emb" in i]
        dense = dict(zip((id(i) for i in meant), embed(embedder, [i["txt"]["S"] for i in meant]), strict=True))
        for item in stale:
            _update(client, table, item, dense.get(id(item)), embedder, done)
        start = page.get("LastEvaluatedKey")
        if start is None:
            say(
                f"re-embedded {done.embedded} memories with {wanted} and their words ({done.current} were already, "
                f"{done.changed} changed meanwhile, {done.unembedded} have no embedding, {done.words} of them "
                "given their words again)"
            )
            return done


def _stale_of(page: list[dict[str, Any]], wanted: str, dimensions: int, done: Reembedded) -> list[dict[str, Any]]:
    """The page's memories to write again (`_stale`), the others counted in `done` (current, or unembedded)."""
    items = [i for i in page if i["sk"]["S"].startswith(m.MEMORY_PREFIX)]
    stale = [i for i in items if _stale(i, wanted, dimensions)]
    done.current += sum(1 for i in items if not _stale(i, wanted, dimensions) and "emb" in i)
    done.unembedded += sum(1 for i in items if "emb" not in i)
    return stale


def _update(client: Any, table: str, item: dict[str, Any], vector: Any, embedder: Any, done: Reembedded) -> None:
    """Write a stale memory's vectors again: its words, and its embedding (`vector`) when it had one, on
    condition that the memory is as read (counted in `done`: embedded, given its words, or changed meanwhile)."""
    wanted = m.embedder_id(embedder)
    indexed = m.Indexed(tuple(vector), wanted) if vector is not None else None
    found = m.vectors(item["txt"]["S"], indexed)
    values = {
        ":vec": {"L": vector_numbers(m.layout(found, embedder.dimensions))},
        ":lex": {"S": LEXICAL_SCHEME},
        ":ua": item["ua"],
    }
    update, condition = "SET vec = :vec, lex = :lex", "ua = :ua AND attribute_not_exists(emb)"
    if indexed is not None:
        update += ", emb = :emb"
        condition = "ua = :ua AND emb = :old"
        values.update({":emb": {"S": wanted}, ":old": item["emb"]})
    try:
        client.update_item(
            TableName=table,
            Key={"pk": item["pk"], "sk": item["sk"]},
            UpdateExpression=update,
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
        )
    except client.exceptions.ConditionalCheckFailedException:
        done.changed += 1  # put or deleted meanwhile: what is there now is the writer's
        return
    if indexed is not None:
        done.embedded += 1
    else:
        done.words += 1


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
