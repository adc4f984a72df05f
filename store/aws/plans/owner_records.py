"""Owner records: what a layer above the store keeps for an owner rather than for a session (a feature's
on/off choice, say), by kind, one item each in the owner's partition of the memories table (sort key `X#kind`:
outside the memories' `M#`, so `forget_owner` leaves them). A kind's records are small settings: one item,
never spilled to S3 (at most `OWNER_RECORDS_BYTES` stored)."""

from __future__ import annotations

from typing import Any

from store.aws.attrs import Item, s
from store.aws.calls import Call, Plan
from store.aws.items import body_value, encoded_attrs
from store.aws.plans.base import Context, get_item
from store.aws.plans.memories import memories_table, owner_pk
from store.core import codec
from store.core.rules import OWNER_RECORDS_BYTES
from store.core.timeutil import iso
from store.requests import LoadOwnerRecords, SaveOwnerRecords

OWNER_RECORDS_SK = "X#"  # and the kind


def _key(owner: str, kind: str) -> Item:
    return {"pk": s(owner_pk(owner)), "sk": s(OWNER_RECORDS_SK + kind)}


def save_owner_records(ctx: Context, request: SaveOwnerRecords) -> Plan[None]:
    """One PutItem replacing the owner's records of the kind (PayloadTooLarge, and nothing written, above
    OWNER_RECORDS_BYTES)."""
    encoded = codec.encode(request.records, f"{request.kind} records", OWNER_RECORDS_BYTES)
    item: Item = {**_key(request.owner, request.kind), "ua": s(iso(ctx.now())), **encoded_attrs(encoded)}
    yield Call("put_item", {"TableName": memories_table(ctx), "Item": item})


def load_owner_records(ctx: Context, request: LoadOwnerRecords) -> Plan[list[Any]]:
    """One GetItem (strongly consistent): the owner's records of the kind, or an empty list."""
    found = yield from get_item(memories_table(ctx), _key(request.owner, request.kind))
    value = None if found is None else body_value(found)
    return value if isinstance(value, list) else []
