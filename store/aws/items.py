"""Conversions between DynamoDB items and the public models (one place for every attribute name)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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


PART = "part"  # the messages-table partition of a session's transcript, when it is not the session id
SEED = "seed"  # a copy into that partition still going on (a long fork's, a rewind's): the session is `copying`
PIN_PREFIX = "pin:"  # `pin:<session id>`: a copy out of this session's transcript into that session, going on
PINNED = "pinned"  # the last message a copy out of the session still takes: the one check message writes make
PINREV = "pinrev"  # how many pins the head has ever taken (an unpin holds only while no pin came meanwhile)
FORKING = "forking"  # on a fork's head until it is published (or made visible as copying): the fork's token
PART_MARK = "~"  # partition ids after the first: `<session id>~<id>` (never an id: `~` is not an id character)


def pin_attr(target: str) -> str:
    """The head attribute pinning a copy into `target`."""
    return f"{PIN_PREFIX}{target}"


def item_usage(item: Item) -> TokenUsage | None:
    """A message item's usage, or None."""
    usage = get_s(item, "usage")
    return TokenUsage.model_validate(json.loads(usage)) if usage else None


def session_of_part(part: str) -> str:
    """The session whose transcript a messages-table partition holds."""
    return part.split(PART_MARK, 1)[0]


@dataclass(frozen=True)
class Seed:
    """A transcript being copied into a session (docs/decisions.md, "Fork and rewind"): messages 1..`through`
    of partition `part`, `done` of them brought in so far; `source_session` holds the copy's pin under this
    session's id with `token` (a rewind's copy out of the session's own branch has none). `objects`: its
    artifact versions still name the source's objects (copied server-side before it is done). `hidden`: the
    head is invisible until the copy is done (a short fork, published whole); `ttl` is the one it then gets.
    `lap` counts the hand-offs of the copy between invocations of the copy job."""

    token: str
    through: int
    done: int
    source_session: str
    part: str
    objects: bool = False
    lap: int = 0
    hidden: bool = False
    ttl: int | None = None

    def to_attr(self) -> AV:
        m: dict[str, AV] = {
            "t": s(self.token),
            "th": n(self.through),
            "dn": n(self.done),
            "src": s(self.source_session),
            "p": s(self.part),
            "ob": {"BOOL": self.objects},
            "lap": n(self.lap),
            "hd": {"BOOL": self.hidden},
        }
        if self.ttl is not None:
            m["ttl"] = n(self.ttl)
        return {"M": m}

    @staticmethod
    def from_attr(av: AV | None) -> Seed | None:
        if av is None or "M" not in av:
            return None
        m = av["M"]
        ttl = get_n(m, "ttl")
        return Seed(
            token=need_s(m, "t"),
            through=get_int(m, "th"),
            done=get_int(m, "dn"),
            source_session=need_s(m, "src"),
            # a seed written before one copy read one partition names its sources in `from`, nearest first
            part=get_s(m, "p") or next((need_s(x["M"], "p") for x in m.get("from", {}).get("L", [])), ""),
            objects=bool(m.get("ob", {}).get("BOOL", False)),
            lap=get_int(m, "lap"),
            hidden=bool(m.get("hd", {}).get("BOOL", False)),
            ttl=int(ttl) if ttl is not None else None,
        )


@dataclass(frozen=True)
class Pin:
    """A copy out of this session's transcript (messages 1..`through`) into the session it is pinned under,
    identified by `token` (the target's `Seed.token`). While it is pinned, a write that would change one of
    those messages (or the transcript as a whole) is refused: the copy takes them as they were."""

    token: str
    through: int

    def to_attr(self) -> AV:
        return {"M": {"t": s(self.token), "th": n(self.through)}}

    @staticmethod
    def from_attr(av: AV) -> Pin:
        m = av["M"]
        return Pin(need_s(m, "t"), get_int(m, "th"))


BRANCHES = "branches"  # on a head: how many branches the session keeps (a rewind adds one, a delete takes one)


@dataclass(frozen=True)
class Head:
    """A session head as read, with the attributes that decide whether it is live, and where its
    transcript is (`part`, a copy into it still going on: `seed`; copies out of it: `pins`)."""

    session: Session
    deleting: bool
    ttl: int | None
    part_attr: str | None = None  # the `part` attribute: None while the transcript is in the session id's own
    seed: Seed | None = None
    pins: dict[str, Pin] = field(default_factory=dict)
    pinrev: int = 0
    edits: int = 0  # writes that changed what was already in the session (`plans.base.count_edit`)
    branches: int = 0  # how many branches the session keeps (counted since sessions counted them)
    pinned: int = 0  # the last message a copy out of the session still takes (0: none)

    @property
    def part(self) -> str:
        """The messages-table partition of the session's transcript."""
        return self.part_attr or self.session.id

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
    seed = Seed.from_attr(item.get(SEED))
    if seed is not None:
        session.copying, session.copied = True, seed.done
    deleting = bool(item.get("deleting", {}).get("BOOL", False))
    pins = {name[len(PIN_PREFIX) :]: Pin.from_attr(av) for name, av in item.items() if name.startswith(PIN_PREFIX)}
    return Head(
        session=session,
        deleting=deleting,
        ttl=int(ttl) if ttl is not None else None,
        part_attr=get_s(item, PART),
        seed=seed,
        pins=pins,
        pinrev=get_int(item, PINREV),
        edits=get_int(item, "edits"),
        branches=max(0, get_int(item, BRANCHES)),
        pinned=get_int(item, PINNED),
    )


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
            "session_id": session_of_part(need_s(item, keys.SID)),
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
