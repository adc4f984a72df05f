"""What long-term memory asks of DynamoDB, beyond the contract: a listing reads its page and one more, searches
and listings read eventually consistently (a get strongly), vectors are written at 32-bit precision."""

from __future__ import annotations

import itertools
import random
import struct
from typing import Any

import pytest

from infra.local.aws import create_tables
from store import SessionStore, Settings
from store.aws.plans.memories import vector_numbers
from store.core.lexical import LEXICAL_DIMENSIONS, LEXICAL_SCHEME, document_vector
from store.core.memories import check_vector, float32_text, memory_sk, unit, words
from store.embeddings import FunctionEmbedder
from store.errors import InvalidInput

_tables = itertools.count()


def _float32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def _embed(texts: list[str]) -> list[list[float]]:
    # 64-bit values with 17 significant digits, as models' float64 output is
    return [[(len(t) % 7 + 1) / 3.0, 0.1234567890123, -2.0 / 3.0, 1e-3 / 7.0] * 64 for t in texts]  # the table's 256


class Calls:
    """The parameters of every DynamoDB request a client makes, and how many items each Query returned."""

    def __init__(self, client: Any) -> None:
        self.made: list[tuple[str, dict[str, Any]]] = []
        self.returned: list[int] = []
        client.meta.events.register("provide-client-params.dynamodb.*", self._params)
        client.meta.events.register("after-call.dynamodb.Query", self._answer)
        self.client = client

    def _params(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.made.append((model.name, dict(params)))

    def _answer(self, parsed: dict[str, Any], **_: Any) -> None:
        self.returned.append(len(parsed.get("Items", [])))

    def detach(self) -> None:
        self.client.meta.events.unregister("provide-client-params.dynamodb.*", self._params)
        self.client.meta.events.unregister("after-call.dynamodb.Query", self._answer)

    def clear(self) -> None:
        self.made.clear()
        self.returned.clear()


@pytest.fixture
def recorded(dynamodb_client: Any) -> Any:
    tables = create_tables(dynamodb_client, prefix=f"memaws{next(_tables)}")
    store: SessionStore = tables.store(
        dynamodb_client, settings=Settings(embedder=FunctionEmbedder(_embed, 256, "test-model"))
    )
    calls = Calls(dynamodb_client)
    yield store, calls, tables
    calls.detach()


def test_a_listing_reads_its_page_and_one_more(recorded: Any) -> None:
    store, calls, _ = recorded
    for i in range(30):
        store.put_memory("alice", ("notes",), f"n{i:02d}", {"text": f"note {i}"})
    calls.clear()
    first = store.search_memories("alice", ("notes",), limit=5)
    assert [h.key for h in first.items] == [f"n{i:02d}" for i in range(5)] and first.next_cursor
    assert [name for name, _ in calls.made] == ["Query"] and calls.returned == [6]
    assert calls.made[0][1]["Limit"] == 6 and not calls.made[0][1].get("ConsistentRead")
    calls.clear()
    second = store.search_memories("alice", ("notes",), limit=5, cursor=first.next_cursor)
    assert [h.key for h in second.items] == [f"n{i:02d}" for i in range(5, 10)]
    assert calls.returned == [11]  # a cursor is an offset: the pages before it, this one, one more
    calls.clear()
    filtered = store.search_memories("alice", ("notes",), filter={"text": "note 29"}, limit=5)
    assert [h.key for h in filtered.items] == ["n29"] and filtered.next_cursor is None
    assert sum(calls.returned) == 30  # a filter reads on until the page is full or the prefix ends


def test_a_search_by_words_is_one_vector_search_at_any_size(recorded: Any) -> None:
    """Words are found through the vector index's lexical half: one SearchVectors of at most 100 candidates,
    whatever the prefix holds (no Query of the prefix), a hybrid search two (meaning and words)."""
    store, calls, _ = recorded
    for i in range(12):
        store.put_memory("alice", ("notes",), f"n{i:02d}", {"text": f"note {i}"}, index=False)
    calls.clear()
    found = store.search_memories("alice", ("notes",), query="11", mode="keyword", limit=1)
    assert [h.key for h in found.items] == ["n11"]
    ((name, params),) = calls.made
    assert name == "SearchVectors" and params["TopK"] == 100 and "Items" not in params
    assert len(params["SearchVector"]) == 256 + LEXICAL_DIMENSIONS
    assert all(v["N"] == "0" for v in params["SearchVector"][:256])  # the words' half only
    assert params["ExpressionAttributeValues"][":v1"] == {"S": LEXICAL_SCHEME}
    calls.clear()
    store.search_memories("alice", ("notes",), query="note 11", mode="hybrid")
    assert [name for name, _ in calls.made] == ["SearchVectors", "SearchVectors"]


def test_a_get_reads_strongly_searches_and_listings_eventually(recorded: Any) -> None:
    store, calls, _ = recorded
    store.put_memory("alice", ("notes",), "n", {"text": "hello"})
    calls.clear()
    store.get_memory("alice", ("notes",), "n")
    store.search_memories("alice", ("notes",))
    store.list_namespaces("alice")
    consistent = {name: bool(params.get("ConsistentRead")) for name, params in calls.made}
    assert consistent == {"GetItem": True, "Query": False}


def test_vectors_are_written_and_searched_at_32_bit_precision(recorded: Any) -> None:
    store, calls, tables = recorded
    store.put_memory("alice", ("notes",), "n", {"text": "hello"})
    stored = calls.client.get_item(TableName=tables.memories, Key=_stored_key(calls, tables))["Item"]
    numbers = [v["N"] for v in stored["vec"]["L"]]
    expected = [_float32(x) for x in unit(check_vector(_embed(["hello"])[0], 256))]  # length 1, 32-bit
    assert [_float32(float(x)) for x in numbers[:256]] == expected  # read as 32-bit floats: the nearest ones
    assert [float(x) for x in numbers[:256]] == list(unit(check_vector(_embed(["hello"])[0], 256)))
    assert [float(x) for x in numbers[256:]] == list(document_vector(["hello"]) or ())  # the words' half
    assert all(len(x.replace("-", "").replace(".", "").lstrip("0")) <= 9 for x in numbers)
    calls.clear()
    store.search_memories("alice", ("notes",), query="hello", mode="semantic")
    ((_, params),) = [c for c in calls.made if c[0] == "SearchVectors"]
    assert [_float32(float(v["N"])) for v in params["SearchVector"]][:256] == expected


def _stored_key(calls: Calls, tables: Any) -> dict[str, Any]:
    items = calls.client.scan(TableName=tables.memories)["Items"]
    (item,) = [i for i in items if i["sk"]["S"].startswith("M#")]
    return {"pk": item["pk"], "sk": item["sk"]}


def test_check_vector_rounds_to_32_bit_floats_and_refuses_what_does_not_fit() -> None:
    assert check_vector([0.1, 1 / 3], 2) == (_float32(0.1), _float32(1 / 3))
    assert float32_text(_float32(0.1)) == "0.1" and float32_text(_float32(1 / 3)) == "0.33333334"
    with pytest.raises(InvalidInput):
        check_vector([1e39, 1.0], 2)  # beyond a 32-bit float's range
    with pytest.raises(InvalidInput):
        check_vector([1e-50, 0.0], 2)  # zero once rounded


def test_a_32_bit_float_is_written_as_its_shortest_text_that_reads_back() -> None:
    rnd = random.Random(5)
    values = [_float32(rnd.gauss(0, 0.05)) for _ in range(3000)] + [_float32(rnd.uniform(-1, 1)) for _ in range(3000)]
    values += [_float32(2.0**-k) for k in range(1, 60)] + [_float32(1e-30), _float32(3.4e38), -_float32(1e-7)]
    for x in values:
        text = float32_text(x)
        digits = len(text.split("e")[0].replace("-", "").replace(".", "").lstrip("0"))
        assert _float32(float(text)) == x and digits <= 9, (x, text)
        assert digits <= 6 or _float32(float(f"{x:.{digits - 1}g}")) != x, (x, text)  # none shorter reads back
    assert float32_text(0.1) == repr(0.1)  # not a 32-bit float: its own repr


def test_the_langgraph_store_asks_for_no_more_than_its_page(recorded: Any) -> None:
    from store.integrations.langgraph_store import MemoryStore

    store, calls, _ = recorded
    for i in range(30):
        store.put_memory("alice", ("notes",), f"n{i:02d}", {"text": f"note {i}"})
    graph_store = MemoryStore(store, owner="alice")
    calls.clear()
    assert len(graph_store.search(("notes",), query="note", limit=2)) == 2
    ((name, params),) = calls.made
    assert name == "SearchVectors" and params["TopK"] == 3  # the page and one more
    calls.clear()
    assert [i.key for i in graph_store.search(("notes",), limit=2, offset=1)] == ["n01", "n02"]
    assert calls.returned == [4]  # a listing: the offset, the page, one more


def test_forgetting_more_than_a_call_deletes_is_finished_by_the_cascade(dyn: Any) -> None:
    """forget_owner deletes one batch (1,000) and hands the rest to the stream's cascade (the forget marker on
    the memories table's stream); the cascade, short of time, deletes a round and hands on again, until none
    is left and the marker is gone. Another owner's memories stay."""
    from store import deadline
    from store.aws.plans.base import BATCH_WRITE_MAX, PARALLEL_REQUESTS
    from store.aws.plans.forget import FORGET_BATCH

    store = dyn.store
    _remember_many(dyn, "alice", FORGET_BATCH + 2 * PARALLEL_REQUESTS * BATCH_WRITE_MAX + 1)  # a call, two rounds
    store.put_memory("bob", ("notes",), "kept", {"text": "bob's"})
    assert store.forget_owner("alice") is False  # more than one call's batch
    assert store.search_memories("alice", limit=100).items  # the rest, until the cascade has it
    rounds = 0
    while store.search_memories("alice", limit=1).items or _marker(dyn, "alice"):
        with deadline(0.5):  # less than the hand-on reserve: each invocation does one round, then hands on
            dyn.cascade()
        rounds += 1
        assert rounds < 20
    assert rounds >= 3  # handed on twice: a round an invocation
    assert store.list_namespaces("alice").items == []
    assert [h.key for h in store.search_memories("bob").items] == ["kept"]
    assert store.forget_owner("alice") is True  # nothing left: no marker written


def test_forgetting_the_runs_of_more_sessions_than_a_page_is_finished_by_the_cascade(dyn: Any) -> None:
    """An owner's sessions' extraction runs are reduced a page of sessions at a time: forget_owner does the first
    page and hands the rest on in the marker (where the owner index is up to), the cascade carries it on a page
    a round when short of time, until every session keeps only how far each strategy read. A second forget
    rewrites nothing."""
    from store import deadline
    from store.aws.plans.forget_records import FORGET_SESSIONS
    from store.extraction.run_records import RUNS_KIND
    from tests.extraction_support import Scripted, memories

    store = dyn.store
    sessions = [store.create_session("alice").id for _ in range(2 * FORGET_SESSIONS + 1)]
    store.append_messages(sessions[0], [{"role": "user", "content": "I always want a window seat."}])
    model = Scripted({"record_preferences": [memories("The user wants a window seat.")]})
    (run,) = store.extract_memories(sessions[0], strategies=["preferences"], model=model)
    made = run.model_dump(mode="json")
    for sid in sessions[1:]:
        store.save_records(sid, RUNS_KIND, [{**made, "session_id": sid, "run_id": sid[:20]}])
    bobs = store.create_session("bob").id
    store.save_records(bobs, RUNS_KIND, [{**made, "session_id": bobs}])
    assert store.forget_owner("alice") is False  # more sessions than a page
    assert _marker(dyn, "alice")
    rounds = 0
    while _marker(dyn, "alice"):
        with deadline(0.5):  # less than the hand-on reserve: a page a round
            dyn.cascade()
        rounds += 1
        assert rounds < 10
    assert rounds == 2  # the two pages after the call's
    for sid in sessions:
        (left,) = store.list_extraction_runs(sid)
        assert (left.trigger, left.strategy, left.last_seq) == ("forget", "preferences", 1)
        assert left.changes == [] and left.model == ""
    assert store.list_extraction_runs(bobs)[0].changes == run.changes  # another owner's runs stay
    dyn.requests.clear()
    assert store.forget_owner("alice") is False  # a page again, handed on
    assert dyn.requests.count("PutItem") == 1  # the marker's: the page's records were already forgotten
    assert dyn.requests.count("BatchGetItem") == 1 and dyn.requests.count("Query") == 2  # memories, sessions


def _remember_many(dyn: Any, owner: str, count: int) -> None:
    """`count` memories of `owner`: one put through the store, the rest copies of its item under other keys
    (BatchWriteItem: the test is about forgetting them)."""
    from infra.local.aws import local_client
    from store.core.memories import memory_sk, namespace_part

    dyn.store.put_memory(owner, ("notes",), "k0", {"text": "note 0"}, index=False)
    client = local_client()
    (stored,) = client.query(
        TableName=dyn.tables.memories,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": "O#" + owner}},
    )["Items"]
    places = [(("notes", f"n{i % 3}"), f"k{i}") for i in range(1, count)]
    copies = [{**stored, "sk": {"S": memory_sk(ns, key)}, "ns": {"S": namespace_part(ns)}} for ns, key in places]
    for start in range(0, len(copies), 25):
        requests = [{"PutRequest": {"Item": item}} for item in copies[start : start + 25]]
        client.batch_write_item(RequestItems={dyn.tables.memories: requests})


def _marker(dyn: Any, owner: str) -> bool:
    from infra.local.aws import local_client
    from store.aws.plans.forget import FORGET_MARK

    key = {"pk": {"S": "O#" + owner}, "sk": {"S": FORGET_MARK}}
    return "Item" in local_client().get_item(TableName=dyn.tables.memories, Key=key)


def test_a_value_too_large_for_an_item_is_one_object_in_the_bucket_until_released(dyn: Any) -> None:
    """Past what an item holds, a memory's value is one object under the owner's memories prefix, named by
    its item; replaced by a small value, the object is released by the cascade."""
    big = {"text": "the quarterly report", "body": "figures " * 60_000}  # ~480 KB of JSON
    dyn.store.put_memory("alice", ("reports",), "q3", big, index=["text"])
    (kept,) = dyn.objects("memories/")
    (item,) = [i for i in dyn.memories() if i["sk"]["S"].startswith("M#")]
    assert item["ref"]["S"] == kept and "v" not in item
    dyn.store.put_memory("alice", ("reports",), "q3", {"text": "short now"})
    dyn.cascade()
    assert dyn.objects("memories/") == []


def test_a_value_too_large_for_an_item_needs_a_bucket(dynamodb_client: Any) -> None:
    """Without a bucket, a value past what an item holds is PayloadTooLarge, and nothing is written."""
    from store import PayloadTooLarge

    tables = create_tables(dynamodb_client, prefix=f"memaws{next(_tables)}")
    store = SessionStore(tables.sessions, tables.messages, memories_table=tables.memories, client=dynamodb_client)
    with pytest.raises(PayloadTooLarge):
        store.put_memory("alice", ("reports",), "big", {"body": "x" * 400_000})
    assert dynamodb_client.scan(TableName=tables.memories)["Items"] == []
    assert dynamodb_client.scan(TableName=tables.sessions)["Items"] == []  # no upload intent either


def test_a_value_past_the_payload_cap_is_refused_before_anything() -> None:
    from store import PayloadTooLarge
    from store.core import memories as m

    assert m.value({"x": "y" * 100}, 200) == {"x": "y" * 100}
    with pytest.raises(PayloadTooLarge):
        m.value({"x": "y" * 300}, 200)


def test_a_released_memory_value_is_deleted_only_under_its_owners_prefix(dyn: Any) -> None:
    """The cascade deletes the object a removed memory names only when it is under that owner's memories
    prefix: a record naming anything else (another owner's, a session's) releases nothing."""
    from store.aws.object_keys import memory_prefix

    bucket = dyn.tables.bucket
    own, other = memory_prefix("alice") + "payloads/w/h", memory_prefix("bob") + "payloads/w/h"
    for key in (own, other, "sessions/x/s1/payloads/w/h"):
        dyn.s3.put_object(Bucket=bucket, Key=key, Body=b"{}")

    def removed(ref: str) -> dict[str, Any]:
        old = {"pk": {"S": "O#alice"}, "sk": {"S": "M#notes/|k"}, "ref": {"S": ref}}
        return {"eventName": "REMOVE", "dynamodb": {"Keys": {"pk": old["pk"], "sk": old["sk"]}, "OldImage": old}}

    released = dyn.operator().reclaim([removed(own), removed(other), removed("sessions/x/s1/payloads/w/h")])
    assert released == 1
    assert dyn.objects("memories/") == [other] and dyn.objects("sessions/") == ["sessions/x/s1/payloads/w/h"]


def test_a_stack_deployed_for_another_embedder_takes_its_vectors(dynamodb_client: Any) -> None:
    """A LangGraph user whose model embeds with 1,024 dimensions deploys with MemoryEmbeddingDimensions=1024 (and
    MemoryEmbeddingModel=none: the agent embeds): its memories are put and found by meaning; a store whose
    embedder makes other dimensions is refused by every put, and its health check names the mismatch."""
    from store import StoreUnavailable

    def embed(texts: list[str]) -> list[list[float]]:
        return [[1.0 + (len(t) % 5) if i == len(t) % 1024 else 0.01 for i in range(1024)] for t in texts]

    overrides = {"MemoryEmbeddingDimensions": "1024", "MemoryEmbeddingModel": "none"}
    tables = create_tables(dynamodb_client, prefix=f"memaws{next(_tables)}", parameters=overrides)
    store: SessionStore = tables.store(dynamodb_client, settings=Settings(embedder=FunctionEmbedder(embed, 1024, "m")))
    store.health_check()
    store.put_memory("alice", ("facts",), "seat", {"text": "a window seat"})
    assert [h.key for h in store.search_memories("alice", query="a window seat", mode="semantic").items] == ["seat"]
    wrong: SessionStore = tables.store(dynamodb_client, settings=Settings(embedder=FunctionEmbedder(_embed, 256, "x")))
    mismatch = f"index has {1024 + LEXICAL_DIMENSIONS} dimensions, the embedder 'x' makes 256 and words"
    with pytest.raises(StoreUnavailable, match=mismatch):
        wrong.health_check()
    with pytest.raises(InvalidInput, match="256 dimensions; the table's index holds 1024"):
        wrong.put_memory("alice", ("facts",), "other", {"text": "an aisle seat"})
    assert wrong.get_memory("alice", ("facts",), "other") is None


def test_a_new_embedder_finds_every_memory_once_the_backfill_ran(dynamodb_client: Any) -> None:
    """Changing the embedder on a live stack (docs/operations.md): a new index of the new dimensions, then
    `python -m infra.cli reembed` embeds again what the old embedder embedded; a second run changes nothing, a
    memory put meanwhile keeps its own vector, and a memory put with index=False stays unembedded."""
    from infra.deploy.reembed import reembed

    def old(texts: list[str]) -> list[list[float]]:
        return [[1.0 + len(t) % 3, 1.0, 0.5, 0.25] * 16 for t in texts]

    def new(texts: list[str]) -> list[list[float]]:
        return [[1.0 if i == len(t) % 8 else 0.01 for i in range(128)] for t in texts]

    tables = create_tables(
        dynamodb_client, prefix=f"memaws{next(_tables)}", parameters={"MemoryEmbeddingDimensions": "64"}
    )
    before = tables.store(dynamodb_client, settings=Settings(embedder=FunctionEmbedder(old, 64, "old")))
    texts = {"a": "a window seat", "b": "vegetarian food", "c": "the Lisbon trip"}
    for key, text in texts.items():
        before.put_memory("alice", ("facts",), key, {"text": text})
    before.put_memory("bob", ("facts",), "hidden", {"text": "not by meaning"}, index=False)
    (index,) = dynamodb_client.describe_table(TableName=tables.memories)["Table"]["VectorIndexes"]
    spec = {k: index[k] for k in ("IndexName", "VectorAttribute", "DistanceFunction", "Projection", "SearchSchema")}
    for update in (
        {"Delete": {"IndexName": spec["IndexName"]}},
        {"Create": {**spec, "Dimensions": 128 + LEXICAL_DIMENSIONS}},
    ):
        dynamodb_client.update_table(TableName=tables.memories, VectorIndexUpdates=[update])  # the stack update
    after = tables.store(dynamodb_client, settings=Settings(embedder=FunctionEmbedder(new, 128, "new")))
    assert after.search_memories("alice", query="a window seat", mode="semantic").items == []
    after.put_memory("alice", ("facts",), "d", {"text": "an aisle seat"})  # put meanwhile: the new embedder's
    said: list[str] = []
    assert tables.memories is not None
    done = reembed(dynamodb_client, tables.memories, FunctionEmbedder(new, 128, "new"), say=said.append)
    assert (done.embedded, done.current, done.changed, done.unembedded, done.words) == (3, 1, 0, 1, 1)
    assert "re-embedded 3" in said[0]
    found = after.search_memories("alice", query="a window seat", mode="semantic", limit=10).items
    assert {h.key for h in found} == {"a", "b", "c", "d"} and found[0].key == "a"
    again = reembed(dynamodb_client, tables.memories, FunctionEmbedder(new, 128, "new"), say=said.append)
    assert (again.embedded, again.current) == (0, 4)
    assert after.search_memories("bob", query="not by meaning", mode="semantic").items == []
    assert [h.key for h in after.search_memories("bob", query="meaning", mode="keyword").items] == ["hidden"]


def test_vectors_of_the_512_bucket_scheme_are_found_by_words_once_the_backfill_ran(dynamodb_client: Any) -> None:
    """A memory written when the words took 512 buckets (its `lex` `bm25-hash1:512`, its vector 512 numbers
    shorter) is not what a search by words of this release reads (it would compare other buckets); in a table
    whose index has the template's size, `reembed` rewrites it, and then it is found, by words and hybrid."""
    from infra.deploy.reembed import reembed

    tables = create_tables(
        dynamodb_client, prefix=f"memaws{next(_tables)}", parameters={"MemoryEmbeddingDimensions": "256"}
    )
    assert tables.memories is not None
    store = tables.store(dynamodb_client, settings=Settings(embedder=FunctionEmbedder(_embed, 256, "e")))
    store.put_memory("alice", ("facts",), "seat", {"text": "Alice prefers a window seat on long flights"})
    key = {"pk": {"S": "O#alice"}, "sk": {"S": memory_sk(("facts",), "seat")}}
    stored = dynamodb_client.get_item(TableName=tables.memories, Key=key)["Item"]
    old_words = document_vector(words("Alice prefers a window seat on long flights"), 512) or ()
    old = {"L": stored["vec"]["L"][:256] + vector_numbers(old_words)}
    dynamodb_client.update_item(
        TableName=tables.memories,
        Key=key,
        UpdateExpression="SET vec = :v, lex = :l",
        ExpressionAttributeValues={":v": old, ":l": {"S": "bm25-hash1:512"}},
    )  # as the 512-bucket release wrote it (its index had 256 + 512 dimensions; this one's, 256 + 1,024)
    assert store.search_memories("alice", query="window seat", mode="keyword").items == []
    done = reembed(dynamodb_client, tables.memories, FunctionEmbedder(_embed, 256, "e"), say=lambda _: None)
    assert (done.embedded, done.current) == (1, 0)
    after = dynamodb_client.get_item(TableName=tables.memories, Key=key)["Item"]
    assert len(after["vec"]["L"]) == 256 + LEXICAL_DIMENSIONS and after["lex"]["S"] == LEXICAL_SCHEME
    assert [h.key for h in store.search_memories("alice", query="window seat", mode="keyword").items] == ["seat"]
    assert [h.key for h in store.search_memories("alice", query="window seat", mode="hybrid").items] == ["seat"]


def test_memory_and_dynamodb_give_the_same_hits_in_every_mode(dynamodb_client: Any) -> None:
    """The same memories, the same questions: the memory backend and DynamoDB (its vector index) return the
    same hits in the same order with the same scores, by words, by meaning and both."""
    from bench.memory_set import memories, questions
    from store.embeddings import WordLlamaEmbedder

    settings = Settings(embedder=WordLlamaEmbedder())
    tables = create_tables(dynamodb_client, prefix=f"memaws{next(_tables)}")
    stores = [SessionStore.memory(settings), tables.store(dynamodb_client, settings=settings)]
    for store in stores:
        for memory in memories()[:60]:
            store.put_memory("alice", ("people", memory.key[:1]), memory.key, {"text": memory.text})
    for question in questions()[:12]:
        for mode in ("keyword", "semantic", "hybrid"):
            found = [
                [
                    (h.namespace, h.key, h.score)
                    for h in s.search_memories("alice", query=question.text, mode=mode).items
                ]
                for s in stores
            ]
            assert found[0] == found[1], (mode, question.text)
            assert mode == "keyword" or found[0], mode  # meaning always finds neighbours
