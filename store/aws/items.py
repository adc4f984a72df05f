"""Conversions between DynamoDB items and the public models (one place for every attribute name)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from store.aws import keys
from store.aws.attrs import AV, Item, b, get_b, get_int, get_n, get_s, n, need_s, s, str_map
from store.core import codec
from store.core.codec import canonical
from store.core.timeutil import from_epoch, iso, now_epoch, parse_iso
from store.models import Checkpoint, Message, MessageRecord, Session, StateSnapshot, TokenUsage

USAGE_PREFIX = "usage_"
BODY = "b"
CODEC = "c"


# ---------------------------------------------------------------- bodies


def body_value(item: Item) -> Any:
    """The JSON value stored by `encoded_attrs` (None when the item has no body)."""
    payload = get_b(item, BODY)
    return None if payload is None else codec.decode(need_s(item, CODEC), payload)


# ---------------------------------------------------------------- session heads


@dataclass(frozen=True)
class Head:
    """A session head as read, with the attributes that decide whether it is live."""

    session: Session
    deleting: bool
    ttl: int | None

    def live(self, now: datetime, owner: str | None) -> bool:
        """True when the session exists for this caller: not deleting, not expired, owned by `owner` if given."""
        if self.deleting or (self.ttl is not None and self.ttl <= now_epoch(now)):
            return False
        return owner is None or self.session.owner == owner


def head_item(session: Session, ttl: int | None) -> Item:
    """The full head item of a new session."""
    item: Item = {
        **keys.head_key(session.id),
        "id": s(session.id),
        "owner": s(session.owner),
        "created_at": s(iso(session.created_at)),
        "updated_at": s(iso(session.updated_at)),
        "last_seq": n(0),
        "state_version": n(0),
        keys.GSI1PK: s(session.owner),
        keys.GSI1SK: s(keys.owner_sort_key(iso(session.updated_at), session.id)),
        **metadata_attrs(session.metadata),
    }
    if session.title is not None:
        item["title"] = s(session.title)
    if session.model is not None:
        item["model"] = s(session.model)
    if session.retention is not None:
        item["retention"] = n(int(session.retention.total_seconds()))
    if ttl is not None:
        item[keys.TTL] = n(ttl)
    return item


def metadata_attrs(metadata: dict[str, Any]) -> Item:
    """Metadata as JSON (exact round trip) plus a map of canonical values (for filter expressions)."""
    return {
        "metadata": s(codec.dumps(metadata)),
        "metadata_index": str_map({k: canonical(v) for k, v in metadata.items()}),
    }


def head_from_item(item: Item) -> Head:
    usage = {f: v for f in TokenUsage.fields() if (v := get_n(item, USAGE_PREFIX + f)) is not None}
    retention = get_n(item, "retention")
    ttl = get_n(item, keys.TTL)
    session = Session(
        id=need_s(item, "id"),
        owner=need_s(item, "owner"),
        title=get_s(item, "title"),
        model=get_s(item, "model"),
        metadata=json.loads(get_s(item, "metadata") or "{}"),
        created_at=parse_iso(need_s(item, "created_at")),
        updated_at=parse_iso(need_s(item, "updated_at")),
        last_seq=get_int(item, "last_seq"),
        state_version=get_int(item, "state_version"),
        usage=TokenUsage.model_validate(usage),
        expires_at=from_epoch(int(ttl)) if ttl is not None else None,
        retention=timedelta(seconds=retention) if retention is not None else None,
        compaction_seq=int(cs) if (cs := get_n(item, "compaction_seq")) is not None else None,
        preview=get_s(item, "preview"),
    )
    deleting = bool(item.get("deleting", {}).get("BOOL", False))
    return Head(session=session, deleting=deleting, ttl=int(ttl) if ttl is not None else None)


# ---------------------------------------------------------------- messages


def encoded_attrs(encoded: tuple[str, bytes]) -> Item:
    """Body attributes from an already encoded (codec, payload) pair."""
    return {CODEC: s(encoded[0]), BODY: b(encoded[1])}


def message_item(
    session_id: str, seq: int, msg: Message, message_id: str, created_at: datetime, encoded: tuple[str, bytes]
) -> Item:
    """A message item; `encoded` is `codec.encode(msg.body())` (bodies of one write are encoded together)."""
    item: Item = {
        **keys.message_key(session_id, seq),
        keys.MID: s(message_id),
        "role": s(msg.role),
        "kind": s("message"),
        "ts": s(iso(created_at)),
        **encoded_attrs(encoded),
    }
    if msg.usage is not None:
        item["usage"] = usage_attr(msg.usage)
    return item


def usage_attr(usage: TokenUsage) -> AV:
    """A message's usage as stored (canonical JSON of the fields that are set)."""
    return s(canonical(usage.model_dump(exclude_none=True)))


def record_from_item(item: Item) -> MessageRecord:
    body = body_value(item) or {}
    usage = get_s(item, "usage")
    return MessageRecord.model_validate(
        {
            **body,
            "role": need_s(item, "role"),
            "id": need_s(item, keys.MID),
            "seq": get_int(item, keys.SEQ),
            "session_id": need_s(item, keys.SID),
            "created_at": parse_iso(need_s(item, "ts")),
            "kind": get_s(item, "kind") or "message",
            "usage": json.loads(usage) if usage else None,
        }
    )


# ---------------------------------------------------------------- state, checkpoints


def state_item(
    session_id: str, version: int, seq: int, encoded: tuple[str, bytes], saved_at: datetime, write_id: str
) -> Item:
    """The state item; `encoded` is `codec.encode(state)`, `write_id` identifies the call that wrote it."""
    return {
        **keys.session_key(session_id, keys.STATE),
        "version": n(version),
        "seq": n(seq),
        "saved_at": s(iso(saved_at)),
        "write_id": s(write_id),
        **encoded_attrs(encoded),
    }


def state_from_item(item: Item) -> StateSnapshot:
    saved = get_s(item, "saved_at")
    return StateSnapshot(
        version=get_int(item, "version"),
        seq=get_int(item, "seq"),
        state=body_value(item),
        saved_at=parse_iso(saved) if saved else None,
    )


def checkpoint_item(cp: Checkpoint, ttl: int, encoded: tuple[str, bytes], owner: str | None) -> Item:
    """A checkpoint item (in `owner`'s namespace); `encoded` is the codec's form of `cp.data`."""
    item: Item = {
        **keys.checkpoint_key(cp.scope, cp.key, owner),
        "scope": s(cp.scope),
        "key": s(cp.key),
        "saved_at": s(iso(cp.saved_at)),
        keys.TTL: n(ttl),
        **encoded_attrs(encoded),
    }
    if cp.seq is not None:
        item["seq"] = n(cp.seq)
    return item


def checkpoint_from_item(item: Item) -> Checkpoint:
    seq = get_n(item, "seq")
    return Checkpoint(
        scope=need_s(item, "scope"),
        key=need_s(item, "key"),
        data=body_value(item),
        saved_at=parse_iso(need_s(item, "saved_at")),
        expires_at=from_epoch(get_int(item, keys.TTL)),
        seq=int(seq) if seq is not None else None,
    )


def live_ttl(item: Item, now: datetime) -> bool:
    """True when the item has no TTL or its TTL is still in the future (expired items read as absent)."""
    ttl = get_n(item, keys.TTL)
    return ttl is None or ttl > now_epoch(now)
