"""How the DynamoDB backend stores small messages: several in one item (a pack, `store/aws/packs.py`), and the
pieces that read packs back as messages (tests/contract/test_packed_messages.py checks every call reads the
same as one item per message, on every backend)."""

from __future__ import annotations

from typing import Any

from store.aws import keys
from store.aws.attrs import Item, n, s
from store.aws.items import encoded_attrs
from store.aws.packs import PACK_MARK, assign_ids, expand, pack_item, pack_stem, stored_items
from store.aws.plans.partitions import Span
from store.core import codec
from store.core.paging import MAX_SEQ
from tests.conftest import Harness
from tests.contract.test_packed_messages import transcript


def spans(messages: list[Item]) -> list[tuple[int, int]]:
    """(first, last) of each message item, in order."""
    out = [(int(m.get("first", m["seq"])["N"]), int(m["seq"]["N"])) for m in messages]
    return sorted(out)


def test_runs_of_small_messages_without_ids_share_items(dyn: Harness) -> None:
    _, expected = transcript(dyn.store)
    _, messages, _ = dyn.snapshot()
    # 20 small (16 + 4); given-1; 5 tools; the large one; 3 small; given-2; 15 small
    assert spans(messages) == [(1, 16), (17, 20), (21, 21), (22, 26), (27, 27), (28, 30), (31, 31), (32, 46)]
    ids = [m["id"] for m in expected]
    assert ids[20] == "given-1" and ids[30] == "given-2"
    assert len({pack_stem(i) for i in ids[:16]}) == 1 and pack_stem(ids[26]) is None  # the large one: an id of its own
    assert [pack_stem(i) for i in ids[:16]] == [ids[0].rsplit(".", 1)[0]] * 16
    assert [i.rsplit(".", 1)[1] for i in ids[:16]] == [str(j) for j in range(16)]


def test_a_turn_is_one_transaction_of_three_items(dyn: Harness, dynamodb_client: Any) -> None:
    store = dyn.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "hello"}])
    calls: list[dict[str, Any]] = []
    client = dynamodb_client
    client.meta.events.register(
        "provide-client-params.dynamodb.TransactWriteItems", lambda params, **_: calls.append(params)
    )
    try:
        turn: list[dict[str, Any]] = [
            {"role": "user", "content": "What is the weather in Lisbon?"},
            {"role": "assistant", "content": [{"type": "tool_use", "name": "weather", "input": {"city": "Lisbon"}}]},
            {"role": "tool", "content": "sunny, 21C"},
            {"role": "assistant", "content": "It is sunny and 21C in Lisbon."},
        ]
        store.save_full(sid, turn, {"turns": 1}, keep_state=False)
    finally:
        client.meta.events.unregister("provide-client-params.dynamodb.TransactWriteItems")
    (written,) = calls
    tables = [next(iter(a.values()))["TableName"] for a in written["TransactItems"]]
    assert len(written["TransactItems"]) == 3  # the head, the state and one item for the four messages
    assert dyn.tables is not None and tables.count(dyn.tables.messages) == 1
    assert [m.content for m in store.list_messages(sid, after_seq=1).items] == [t["content"] for t in turn]


def draft(mid: str, content: str, pack: str | None) -> Item:
    item: Item = {keys.MID: s(mid), "role": s("user"), "kind": s("message"), "ts": s("2026-12-04T00:00:00.000000Z")}
    item.update(encoded_attrs(codec.encode({"content": content})))
    return item if pack is None else {**item, PACK_MARK: s(pack)}


def test_pack_groups_follow_size_count_and_ids() -> None:
    counter = iter(range(100))
    ids, packs = assign_ids([None] * 20 + ["mine", None, None], [10] * 23, lambda: f"id{next(counter)}")
    assert packs == ["id0"] * 16 + ["id1"] * 4 + [None, "id2", "id2"]  # at most PACK_MAX (16); a given id breaks a run
    assert ids[:3] == ["id0.0", "id0.1", "id0.2"] and ids[16] == "id1.0" and ids[20] == "mine" and ids[22] == "id2.1"
    fresh = iter(range(100))
    ids, packs = assign_ids([None, None, None], [10, 3000, 10], lambda: f"x{next(fresh)}")
    assert packs == [None, None, None] and len(set(ids)) == 3  # the large one breaks the run: runs of one, no pack
    stems = iter(range(100))
    _, packs = assign_ids([None] * 6, [2000] * 6, lambda: f"z{next(stems)}")
    assert packs == ["z0"] * 4 + ["z1"] * 2  # at most PACK_BYTES (8 KB) of bodies a pack


def test_stored_items_and_expand_round_trip() -> None:
    drafts = [draft("p.0", "a", "p"), draft("p.1", "b", "p"), draft("solo", "c", None), draft("q.0", "d", "q")]
    items = stored_items(drafts, 5, "part")
    assert [(i.get("first", i["seq"])["N"], i["seq"]["N"]) for i in items] == [("5", "6"), ("7", "7"), ("8", "8")]
    assert all(PACK_MARK not in i for i in items)  # a run of one ("q") is an item of its own, unmarked
    messages = [m for i in items for m in expand(i)]
    assert [(m["seq"]["N"], m[keys.MID]["S"]) for m in messages] == [
        ("5", "p.0"),
        ("6", "p.1"),
        ("7", "solo"),
        ("8", "q.0"),
    ]
    assert [codec.decode(m["c"]["S"], m["b"]["B"])["content"] for m in messages] == ["a", "b", "c", "d"]
    assert [m["seq"]["N"] for m in expand(items[0], 6, 6)] == ["6"]


def test_a_read_meeting_an_unpacking_gives_each_message_once() -> None:
    pack = pack_item([draft(f"p.{i}", str(i), "p") for i in range(4)], 1, "part", "p")
    singles = [m for m in expand(pack)][:3]  # what an unpacking put before the Query met the pack itself
    ascending = Span("part", 1, 10).reader()
    assert [m["seq"]["N"] for i in [*singles, pack] for m in ascending(i)] == ["1", "2", "3", "4"]
    descending = Span("part", 1, 10, newest_first=True).reader()
    assert [m["seq"]["N"] for i in [pack, *reversed(singles)] for m in descending(i)] == ["4", "3", "2", "1"]


def test_a_range_that_ends_inside_a_pack_reads_past_its_end_only_as_far_as_a_pack_reaches() -> None:
    span = Span("part", 3, 10, newest_first=True, limit=2)
    params = span.query(ctx_stub())
    values = params["ExpressionAttributeValues"]
    assert n(3) in values.values() and n(25) in values.values()  # 10 + PACK_MAX - 1
    assert params["Limit"] == 2 + 15 and "FilterExpression" in params
    assert "FilterExpression" not in Span("part", 3, MAX_SEQ).query(ctx_stub())


def ctx_stub() -> Any:
    class Ctx:
        messages_table = "messages"

    return Ctx()


def test_a_pack_stores_the_very_bytes_its_entries_encoded_as_one_value_would() -> None:
    """A pack splices its drafts' JSON texts rather than parsing and writing them again: the stored bytes are
    `codec.encode` of the entries, whatever the bodies hold (escapes, non-Latin text, floats, nesting, a body
    large enough to be compressed) and whatever the pack's size (compressed or not)."""
    bodies: list[Any] = [
        {"content": 'a "quoted" \\ back\nslash\t', "metadata": {"k": [1, 2.5, -0.0, 1e300, None, True]}},
        {"content": [{"text": "caf\u00e9 \u2603 \U0001f600 \u65e5\u672c"}], "name": "tool"},
        {"content": "x" * 700},  # encoded alone it is compressed
        {"content": {"nested": {"deeper": [{"a": 1}, [], {}]}}, "tool_call_id": "c1"},
    ]
    for members in (bodies[:2], bodies):
        drafts = []
        for i, body in enumerate(members):
            item: Item = {keys.MID: s(f"p.{i}"), "role": s("user"), "ts": s(f"2026-12-07T00:00:0{i}Z")}
            item.update(encoded_attrs(codec.encode(body)))
            if i == 1:
                item["usage"] = s('{"input_tokens":3}')
            drafts.append(item)
        packed = pack_item(drafts, 1, "part", "p")
        entries: list[dict[str, Any]] = [
            {"i": f"p.{i}", "r": "user", "t": f"2026-12-07T00:00:0{i}Z", "v": body} for i, body in enumerate(members)
        ]
        entries[1]["u"] = '{"input_tokens":3}'
        assert (packed["c"]["S"], packed["b"]["B"]) == codec.encode(entries, "messages")
        assert [codec.decode(m["c"]["S"], m["b"]["B"]) for m in expand(packed)] == members
