"""Several small messages of one write in one messages-table item (a pack), read back as the messages it holds.

A message item bills at least 1 KB to write (2 in a transaction), however small the message: an agent turn of
four 300-byte messages cost 8 WCU in message items alone. A write whose messages are small and carry no
caller-given id keeps consecutive runs of them in packs: one item, keyed at the sequence number of its LAST
message (`seq`), with `first` (its first message's) and one body holding every message's id, role, time, body
and usage. Readers never see a pack: `expand` turns it into the items its messages would have had on their
own, so every plan reads per message (list, seq ranges, search, fork copies). Keyed at its last message, a pack
is found by a Query that starts at any of its messages (`seq >= lo`); a range that ends inside one reads up to
`PACK_MAX - 1` keys past its end (`Span`). A write that changes one packed message (its usage, a compaction
mark, a pop) first `explodes` the pack into the items it stands for (plans/packed.py), which read the same.

Ids: the messages of a pack get the ids `<pack id>.<i>` (the pack's own item carries `<pack id>` in the
`by_message_id` index), so a look-up by id finds the pack by the id's stem (`find`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from store.aws import keys
from store.aws.attrs import Item, get_b, get_int, get_s, n, need_s, s
from store.aws.items import BODY, CODEC, body_value, encoded_attrs
from store.core import codec

PACK_MAX = 16  # messages in one pack: a range read past its end reads at most PACK_MAX - 1 keys more
PACK_BYTES = 8 * 1024  # the most encoded body bytes of the messages one pack holds
ENTRY_BYTES = 2 * 1024  # a message whose encoded body is larger is stored on its own
FIRST = "first"  # a pack's first sequence number (its key is its last)
PACK_MARK = "pack"  # on a draft (never stored): the pack it is to be written in
_PACKED_ID = re.compile(r"^(?P<stem>[A-Za-z0-9][A-Za-z0-9._:-]*)\.(?P<index>[0-9]{1,2})$")


def assign_ids(
    given: Sequence[str | None], sizes: Sequence[int], new_id: Callable[[], str]
) -> tuple[list[str], list[str | None]]:
    """Each message's id and the pack it goes in (None: an item of its own). Runs of messages without a given
    id whose encoded bodies are at most ENTRY_BYTES go in packs of up to PACK_MAX messages and PACK_BYTES; a
    run of one is not a pack."""
    groups: list[list[int]] = []
    run: list[int] = []
    total = 0
    for i, (mid, size) in enumerate(zip(given, sizes, strict=True)):
        fits = mid is None and size <= ENTRY_BYTES
        if run and (not fits or len(run) >= PACK_MAX or total + size > PACK_BYTES):
            groups.append(run)
            run, total = [], 0
        if fits:
            run.append(i)
            total += size
    if run:
        groups.append(run)
    ids: list[str | None] = list(given)
    packs: list[str | None] = [None] * len(given)
    for group in groups:
        if len(group) < 2:
            continue
        stem = new_id()
        for j, i in enumerate(group):
            ids[i], packs[i] = f"{stem}.{j}", stem
    return [mid if mid is not None else new_id() for mid in ids], packs


def stored_items(drafts: Sequence[Item], first_seq: int, part: str) -> list[Item]:
    """The items that store message drafts numbered from `first_seq` in partition `part`: consecutive drafts
    of one pack (inline bodies only) in one pack item, each other draft as its own item."""
    out: list[Item] = []
    i = 0
    while i < len(drafts):
        mark = drafts[i].get(PACK_MARK)
        j = i + 1
        if mark is not None and BODY in drafts[i]:
            while j < len(drafts) and drafts[j].get(PACK_MARK) == mark and BODY in drafts[j]:
                j += 1
        if j - i >= 2:
            out.append(pack_item(list(drafts[i:j]), first_seq + i, part, mark["S"] if mark else ""))
        else:
            single = {k: v for k, v in drafts[i].items() if k != PACK_MARK}
            out.append({**single, **keys.message_key(part, first_seq + i)})
        i = j
    return out


def pack_item(members: list[Item], first_seq: int, part: str, pack_id: str) -> Item:
    """One item holding message drafts `first_seq` .. `first_seq + len(members) - 1`: their entries as one JSON
    array, each draft's body spliced in as the JSON text its encoding holds (checked when it was encoded, so
    neither parsed nor checked again: the text is the one `codec.encode` of the entries would write)."""
    entries = []
    for m in members:
        entry = {"i": need_s(m, keys.MID), "r": need_s(m, "role"), "t": need_s(m, "ts")}
        fields = _compact(entry)[1:-1]
        body = get_b(m, BODY)
        text = codec.decoded_text(need_s(m, CODEC), body) if body is not None else "null"
        if text != "null":  # (a body of JSON null is no body)
            fields += ',"v":' + text
        usage = get_s(m, "usage")
        if usage:
            fields += ',"u":' + _compact(usage)
        entries.append("{" + fields + "}")
    return {
        **keys.message_key(part, first_seq + len(members) - 1),
        FIRST: n(first_seq),
        keys.MID: s(pack_id),
        **encoded_attrs(codec.encode_text("[" + ",".join(entries) + "]", "messages")),
    }


def _compact(value: Any) -> str:
    """JSON text as `codec.dumps` writes it (of the store's own strings: nothing to check)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def is_pack(item: Item | None) -> bool:
    """True for a pack item (several messages), False for one message's item or None."""
    return item is not None and FIRST in item


def span_of(item: Item) -> tuple[int, int]:
    """The first and last sequence numbers an item stores."""
    last = get_int(item, keys.SEQ) or 0
    return (get_int(item, FIRST) or last) if is_pack(item) else last, last


def expand(item: Item, lo: int = 1, hi: int | None = None) -> list[Item]:
    """The message items an item stands for, in order, of those numbered lo..hi: a message's item is itself,
    a pack gives each message's item as it would be stored on its own (bodies as plain JSON)."""
    first, last = span_of(item)
    top = last if hi is None else hi
    if not is_pack(item):
        return [item] if lo <= last <= top else []
    part = item[keys.SID]
    out: list[Item] = []
    for j, entry in enumerate(body_value(item) or []):
        seq = first + j
        if seq < lo or seq > top:
            continue
        message: Item = {keys.SID: part, keys.SEQ: n(seq), keys.MID: s(entry["i"]), "role": s(entry["r"])}
        message.update({"kind": s("message"), "ts": s(entry["t"])})
        if "v" in entry:
            message.update(encoded_attrs((codec.CODEC_JSON, json.dumps(entry["v"], separators=(",", ":")).encode())))
        if "u" in entry:
            message["usage"] = s(entry["u"])
        out.append(message)
    return out


def message_in(item: Item | None, seq: int) -> Item | None:
    """Message `seq`'s item from the item that stores it (None when it does not)."""
    if item is None:
        return None
    found = expand(item, seq, seq)
    return found[0] if found else None


def message_with_id(item: Item | None, message_id: str) -> Item | None:
    """The message with id `message_id` among those the item stores, or None."""
    if item is None:
        return None
    return next((m for m in expand(item) if m[keys.MID]["S"] == message_id), None)


def pack_stem(message_id: str) -> str | None:
    """The id of the pack a message id names as `<pack id>.<i>` (None for any other id)."""
    found = _PACKED_ID.match(message_id)
    return found.group("stem") if found else None


def reencoded(message: Item) -> Item:
    """A message's item from `expand` with its body encoded as the store encodes a message body on its own."""
    value = body_value(message)
    if value is None:
        return message
    return {**{k: v for k, v in message.items() if k not in (CODEC, BODY)}, **encoded_attrs(codec.encode(value))}
