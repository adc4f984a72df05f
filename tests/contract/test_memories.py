"""Long-term memory (DESIGN.md, "Long-term memory"), the same assertions on every backend that offers it:
an owner's memories in namespaces, put/get/delete, search by meaning (wordllama's real model), by keyword
and both, filters, pages, namespaces listed by prefix, suffix and depth, expiry, isolation between owners,
forgetting an owner, and bad input refused with nothing written."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest

from store import InvalidInput, SessionStore
from store.embeddings import FunctionEmbedder, WordLlamaEmbedder
from tests.conftest import Harness

MEMORY_OPS = ("put_memory", "get_memory", "delete_memory", "search_memories", "list_namespaces", "forget_owner")
pytestmark = pytest.mark.needs(*MEMORY_OPS)
WORDLLAMA = WordLlamaEmbedder()

FACTS = [
    (("preferences",), "seat", {"text": "I prefer a window seat on long flights", "kind": "travel"}),
    (("preferences",), "food", {"text": "Vegetarian; no mushrooms, please", "kind": "food"}),
    (("preferences", "work"), "hours", {"text": "Meetings only in the morning, never after 4pm", "kind": "work"}),
    (("projects", "lisbon-trip"), "dates", {"text": "The Lisbon trip runs from 10 to 17 May", "kind": "travel"}),
    (("projects", "lisbon-trip"), "hotel", {"text": "Booked a hotel in Alfama near the castle", "kind": "travel"}),
    (("projectsX",), "decoy", {"text": "A window seat decoy under a sibling prefix", "kind": "travel"}),
]


def remember(store: SessionStore, owner: str = "alice") -> None:
    for ns, key, value in FACTS:
        store.put_memory(owner, ns, key, value)


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_memory_round_trips_and_a_put_replaces_it(harness: Harness) -> None:
    store = harness.store
    made = store.put_memory("alice", ("preferences",), "seat", {"text": "window", "n": 1})
    assert made.namespace == ("preferences",) and made.key == "seat" and made.value == {"text": "window", "n": 1}
    assert made.expires_at is None and made.created_at == made.updated_at
    harness.clock.advance(seconds=5)
    again = store.put_memory("alice", ["preferences"], "seat", {"text": "aisle"})
    assert (
        again.value == {"text": "aisle"} and again.created_at == made.created_at and again.updated_at > made.updated_at
    )
    got = store.get_memory("alice", ("preferences",), "seat")
    assert got == again
    store.delete_memory("alice", ("preferences",), "seat")
    store.delete_memory("alice", ("preferences",), "seat")  # idempotent
    assert store.get_memory("alice", ("preferences",), "seat") is None


def test_labels_that_look_alike_are_different_namespaces(harness: Harness) -> None:
    store = harness.store
    tricky = [("a:b",), ("a", "b"), ("a/b",), ("a|b",), ("a%2Fb",), ("a", "b|"), ("ä", "b")]
    for i, ns in enumerate(tricky):
        store.put_memory("alice", ns, "k|/%", {"i": i})
    found = [store.get_memory("alice", ns, "k|/%") for ns in tricky]
    assert [m.value if m else None for m in found] == [{"i": i} for i in range(len(tricky))]
    assert sorted(store.list_namespaces("alice").items) == sorted(tricky)
    under_a = store.search_memories("alice", ("a",), limit=100).items
    assert sorted(h.namespace for h in under_a) == [("a", "b"), ("a", "b|")]


@pytest.mark.settings(embedder=WORDLLAMA)
def test_search_by_meaning_ranks_the_closest_first_under_a_prefix(harness: Harness) -> None:
    store = harness.store
    remember(store)
    hits = store.search_memories("alice", ("preferences",), query="where do I like to sit on a plane?").items
    assert hits[0].key == "seat"
    assert {h.namespace[0] for h in hits} == {"preferences"}  # the prefix's namespaces only, nested ones too
    assert ("preferences", "work") in {h.namespace for h in hits}
    assert all(h.score is not None and -1 <= h.score <= 1 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)  # type: ignore[type-var]
    trip = store.search_memories("alice", ("projects",), query="when do we travel to Portugal").items
    assert trip[0].key == "dates" and "decoy" not in {h.key for h in trip}


@pytest.mark.settings(embedder=WORDLLAMA)
def test_keyword_search_returns_only_memories_holding_the_words(harness: Harness) -> None:
    store = harness.store
    remember(store)
    hits = store.search_memories("alice", query="window seat", mode="keyword", limit=10).items
    assert {h.key for h in hits} == {"seat", "decoy"}
    assert all(h.score is not None and h.score > 0 for h in hits)  # BM25: higher is better
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)  # type: ignore[type-var]
    assert store.search_memories("alice", query="submarine", mode="keyword").items == []
    # words are matched stemmed and case-folded: "Flight" finds "flights", "WINDOWS" finds "window"
    assert [h.key for h in store.search_memories("alice", query="Flight", mode="keyword").items] == ["seat"]
    assert {h.key for h in store.search_memories("alice", query="WINDOWS", mode="keyword").items} == {"seat", "decoy"}
    hybrid = store.search_memories("alice", query="flights window", mode="hybrid").items
    assert hybrid[0].key == "seat" and {h.key for h in hybrid[:2]} == {"seat", "decoy"}


@pytest.mark.settings(embedder=WORDLLAMA)
def test_hybrid_finds_what_either_mode_alone_finds(harness: Harness) -> None:
    """Hybrid fuses both rankings over both modes' candidates: a rare literal that only words find, and a
    paraphrase that shares no word with its memory, which only meaning finds, both come first."""
    store = harness.store
    remember(store)
    store.put_memory("alice", ("preferences",), "code", {"text": "The door code of the Alfama flat is QX4471"})
    assert store.search_memories("alice", query="qx4471", mode="keyword").items[0].key == "code"
    assert store.search_memories("alice", query="qx4471", mode="hybrid").items[0].key == "code"
    paraphrase = "which dishes suit a vegan"
    assert store.search_memories("alice", query=paraphrase, mode="keyword").items == []
    assert store.search_memories("alice", query=paraphrase, mode="semantic").items[0].key == "food"
    assert store.search_memories("alice", query=paraphrase, mode="hybrid").items[0].key == "food"
    assert store.search_memories("alice", query=paraphrase).mode == "hybrid"  # auto, with an embedder


def test_words_find_a_memory_behind_more_than_a_thousand_others(harness: Harness) -> None:
    """Search by words has no window: the one memory that holds the words is found first behind 1,200 that
    sort before it and hold none of them (a search used to read only the first 1,000 under its prefix)."""
    store = harness.store
    for i in range(1200):
        store.put_memory("alice", ("log",), f"a{i:04d}", {"text": f"routine entry {i} about the weather"})
    store.put_memory("alice", ("log",), "z-target", {"text": "The spare key is under the blue flowerpot"})
    hits = store.search_memories("alice", ("log",), query="where is the spare key?", mode="keyword").items
    assert [h.key for h in hits] == ["z-target"]


def test_without_an_embedder_search_is_by_keyword_and_meaning_is_refused(harness: Harness) -> None:
    store = harness.store
    remember(store)
    assert {h.key for h in store.search_memories("alice", query="mushrooms").items} == {"food"}
    with pytest.raises(InvalidInput, match="needs an embedder"):
        store.search_memories("alice", query="food", mode="semantic")


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_filter_keeps_equal_fields_and_pages_follow_the_cursor(harness: Harness) -> None:
    store = harness.store
    remember(store)
    travel = store.search_memories("alice", query="a trip", filter={"kind": "travel"}, limit=10).items
    assert {h.key for h in travel} == {"seat", "dates", "hotel", "decoy"}
    seen: list[str] = []
    page = store.search_memories("alice", limit=2)
    while True:
        assert all(h.score is None for h in page.items)  # no query: every memory, in namespace and key order
        seen += [h.key for h in page.items]
        if page.next_cursor is None:
            break
        page = store.search_memories("alice", limit=2, cursor=page.next_cursor)
    assert sorted(seen) == sorted(k for _, k, _ in FACTS) and len(seen) == len(set(seen))
    ranked = store.search_memories("alice", query="travel plans", limit=3)
    rest = store.search_memories("alice", query="travel plans", limit=3, cursor=ranked.next_cursor)
    assert not {h.key for h in ranked.items} & {h.key for h in rest.items}


def test_namespaces_are_listed_by_prefix_suffix_and_depth(harness: Harness) -> None:
    store = harness.store
    remember(store)
    store.put_memory("alice", ("projects", "rome", "work"), "k", {"text": "x"})
    everything = store.list_namespaces("alice").items
    assert sorted(everything) == sorted({ns for ns, _, _ in FACTS} | {("projects", "rome", "work")})
    assert store.list_namespaces("alice", prefix=("projects",)).items == [
        ("projects", "lisbon-trip"),
        ("projects", "rome", "work"),
    ]
    assert sorted(store.list_namespaces("alice", suffix=("work",)).items) == [
        ("preferences", "work"),
        ("projects", "rome", "work"),
    ]
    assert sorted(store.list_namespaces("alice", max_depth=1).items) == [
        ("preferences",),
        ("projects",),
        ("projectsX",),
    ]
    listed: list[tuple[str, ...]] = []
    page = store.list_namespaces("alice", limit=2)
    while True:
        assert len(page.items) <= 2
        listed += page.items
        if page.next_cursor is None:
            break
        page = store.list_namespaces("alice", limit=2, cursor=page.next_cursor)
    assert listed == everything


def test_an_expired_memory_is_absent_and_a_read_may_renew_it(harness: Harness) -> None:
    store = harness.store
    made = store.put_memory("alice", ("session",), "scratch", {"text": "short lived"}, ttl=60)
    assert made.expires_at == made.updated_at + timedelta(seconds=60)
    harness.clock.advance(seconds=50)
    renewed = store.get_memory("alice", ("session",), "scratch", refresh_ttl=True)
    assert renewed is not None and renewed.expires_at is not None
    assert abs(renewed.expires_at - (made.updated_at + timedelta(seconds=110))) < timedelta(seconds=1)
    harness.clock.advance(seconds=50)
    assert store.get_memory("alice", ("session",), "scratch") is not None  # renewed: 10 s left
    harness.clock.advance(seconds=11)
    assert store.get_memory("alice", ("session",), "scratch") is None
    assert store.search_memories("alice", query="short lived", mode="keyword").items == []
    assert store.list_namespaces("alice").items == []
    again = store.put_memory("alice", ("session",), "scratch", {"text": "new"})
    assert again.created_at == again.updated_at  # a new memory, not the expired one continued


@pytest.mark.settings(embedder=WORDLLAMA)
def test_owners_never_see_or_rank_against_each_other(harness: Harness) -> None:
    store = harness.store
    remember(store, "alice")
    store.put_memory("mallory", ("preferences",), "bait", {"text": "window seat"})
    assert store.get_memory("mallory", ("preferences",), "seat") is None
    for mode in ("semantic", "keyword", "hybrid"):
        hits = store.search_memories("mallory", query="window seat on long flights", mode=mode, limit=100).items
        assert [h.key for h in hits] == ["bait"]
    assert store.list_namespaces("mallory").items == [("preferences",)]
    assert store.search_memories("mallory", limit=100).items[0].key == "bait"
    alice_page = store.search_memories("alice", limit=1)
    with pytest.raises(InvalidInput):
        store.search_memories("mallory", cursor=alice_page.next_cursor)  # a cursor is its owner's
    assert store.forget_owner("mallory") is True
    assert len(store.search_memories("alice", limit=100).items) == len(FACTS)


BAD_NAMESPACES: list[Any] = [(), ("",), (" padded",), ("a\x00b",), "preferences", ("x",) * 9, ("a" * 129,), (1,)]


@pytest.mark.parametrize("namespace", BAD_NAMESPACES, ids=repr)
def test_a_hostile_namespace_is_refused_and_writes_nothing(harness: Harness, namespace: Any) -> None:
    store = harness.store
    with pytest.raises(InvalidInput):
        store.put_memory("alice", namespace, "k", {"text": "x"})
    assert store.list_namespaces("alice").items == []


def test_bad_keys_values_and_arguments_are_refused(harness: Harness) -> None:
    store = harness.store
    for bad in ("", "k" * 513, "a\nb", 7):
        with pytest.raises(InvalidInput):
            store.put_memory("alice", ("ns",), bad, {"text": "x"})  # type: ignore[arg-type]
    for value in ([1, 2], "text", {"x": math.nan}):
        with pytest.raises(InvalidInput):
            store.put_memory("alice", ("ns",), "k", value)  # type: ignore[arg-type]
    for call in (
        lambda: store.search_memories("alice", mode="fuzzy"),
        lambda: store.search_memories("alice", limit=0),
        lambda: store.search_memories("alice", query=" "),
        lambda: store.search_memories("alice", filter=["kind"]),  # type: ignore[arg-type]
        lambda: store.search_memories("alice", cursor="not-a-cursor"),
        lambda: store.list_namespaces("alice", max_depth=0),
        lambda: store.put_memory("alice", ("ns",), "k", {"text": "x"}, ttl=-1),
        lambda: store.put_memory("alice", ("ns",), "k", {"text": "x"}, index="text"),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidInput):
            call()
    assert store.list_namespaces("alice").items == []


@pytest.mark.settings(embedder=FunctionEmbedder(lambda texts: [[math.nan] * 4 for _ in texts], 4, "broken"))
def test_an_embedder_returning_nan_is_refused_and_writes_nothing(harness: Harness) -> None:
    with pytest.raises(InvalidInput, match="NaN"):
        harness.store.put_memory("alice", ("ns",), "k", {"text": "x"})
    assert harness.store.get_memory("alice", ("ns",), "k") is None


@pytest.mark.settings(embedder=FunctionEmbedder(lambda texts: [[1.0, 0.0, 0.0] for _ in texts], 3, "short"))
def test_an_embedder_of_the_wrong_dimensions_is_refused(harness: Harness) -> None:
    store = harness.store
    if harness.kind in ("dynamodb", "async", "http"):  # the table's index has 256 dimensions: refused
        with pytest.raises(InvalidInput):
            store.put_memory("alice", ("ns",), "k", {"text": "x"})
        assert store.get_memory("alice", ("ns",), "k") is None
    else:  # the memory backend has no index of its own: the embedder's dimensions are the index's
        store.put_memory("alice", ("ns",), "k", {"text": "x"})
        assert store.search_memories("alice", query="x", mode="semantic").items[0].key == "k"


@pytest.mark.settings(embedder=WORDLLAMA)
def test_memories_not_indexed_are_found_by_keyword_only(harness: Harness) -> None:
    store = harness.store
    store.put_memory("alice", ("notes",), "secret-plan", {"text": "window seat"}, index=False)
    store.put_memory("alice", ("notes",), "seat", {"text": "window seat", "other": "ignored"}, index=["text"])
    assert [h.key for h in store.search_memories("alice", query="window seat", mode="semantic").items] == ["seat"]
    assert {h.key for h in store.search_memories("alice", query="window seat", mode="keyword").items} == {
        "secret-plan",
        "seat",
    }
    assert store.search_memories("alice", query="ignored", mode="keyword").items == []  # only `text` is indexed


def test_forget_owner_removes_every_memory_of_the_owner_only(harness: Harness) -> None:
    store = harness.store
    remember(store, "alice")
    remember(store, "bob")
    assert store.forget_owner("alice") is True
    assert store.list_namespaces("alice").items == [] and store.search_memories("alice").items == []
    assert len(store.search_memories("bob", limit=100).items) == len(FACTS)


def test_a_value_too_large_for_an_item_round_trips_and_its_object_goes_with_it(harness: Harness) -> None:
    """A value past what an item holds round-trips: put, get, searched, listed and filtered as any other;
    replaced by a small one or deleted, nothing of it is left (on DynamoDB it is kept in the bucket, and its
    object is released by the cascade: tests/aws/test_memories_on_aws.py)."""
    store = harness.store
    big = {"text": "the quarterly report", "body": "figures " * 60_000}  # ~480 KB of JSON
    made = store.put_memory("alice", ("reports",), "q3", big, index=["text"])
    assert made.value == big and made.created_at == made.updated_at
    assert store.get_memory("alice", ("reports",), "q3").value == big
    for found in (
        store.search_memories("alice", ("reports",), query="quarterly report", mode="keyword"),
        store.search_memories("alice", ("reports",)),
        store.search_memories("alice", ("reports",), filter={"text": "the quarterly report"}),
    ):
        assert [(h.key, h.value) for h in found.items] == [("q3", big)]
    assert store.search_memories("alice", ("reports",), filter={"body": "other"}).items == []
    harness.clock.advance(seconds=5)
    again = store.put_memory("alice", ("reports",), "q3", {"text": "short now"})
    assert again.created_at == made.created_at  # the same memory, put again
    harness.cascade()
    assert store.get_memory("alice", ("reports",), "q3").value == {"text": "short now"}
    assert harness.objects("memories/") == []
    store.put_memory("alice", ("reports",), "q4", big, index=False)
    store.delete_memory("alice", ("reports",), "q4")
    harness.cascade()
    assert harness.objects("memories/") == [] and store.get_memory("alice", ("reports",), "q4") is None


def test_a_search_says_which_mode_it_ran_in_without_an_embedder(harness: Harness) -> None:
    """`auto` on a store with no embedder searches by words, and says so: a caller can tell."""
    remember(harness.store)
    found = harness.store.search_memories("alice", query="window seat")
    assert found.mode == "keyword" and found.items
    assert harness.store.search_memories("alice", query="window seat", mode="keyword").mode == "keyword"
    assert harness.store.search_memories("alice").mode is None  # no query: a listing
    with pytest.raises(InvalidInput):
        harness.store.search_memories("alice", query="window seat", mode="semantic")


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_search_says_which_mode_it_ran_in_with_an_embedder(harness: Harness) -> None:
    remember(harness.store)
    for asked, ran in (("auto", "hybrid"), ("semantic", "semantic"), ("keyword", "keyword"), ("hybrid", "hybrid")):
        found = harness.store.search_memories("alice", query="window seat", mode=asked)
        assert found.mode == ran and found.items, asked


def _toward_query(similarity: float) -> list[float]:
    """A unit vector of 256 numbers at cosine `similarity` from the query's (the first axis)."""
    return [similarity, math.sqrt(1 - similarity * similarity)] + [0.0] * 254


GATHERED = {  # text -> its similarity to the query, by construction
    "The Lisbon hotel is Casa do Mar": 0.61,
    "We stay five nights in Lisbon": 0.58,
    "Our Lisbon stay starts on the 10th": 0.57,
    "Book a hotel near the Berlin hotel fair": 0.62,
    "Slides for the Berlin talk": 0.10,
}
GATHERING_QUERY = "which hotel do I stay at?"
GATHERING = FunctionEmbedder(
    lambda texts: [[1.0] + [0.0] * 255 if t == GATHERING_QUERY else _toward_query(GATHERED[t]) for t in texts],
    256,
    "gathering",
)


@pytest.mark.settings(embedder=GATHERING)
def test_hybrid_search_over_namespaces_prefers_where_the_matches_gather(harness: Harness) -> None:
    """By words and by meaning alone the Berlin hotel comes first (two "hotel"s, the nearest vector); the
    Lisbon trip's namespace holds most of what the query matches, so hybrid search over the owner puts its hotel
    first; within one namespace hybrid ranks as before (no namespace to weigh)."""
    store = harness.store
    for (ns, key), text in zip(
        [
            (("trips", "lisbon"), "hotel"),
            (("trips", "lisbon"), "nights"),
            (("trips", "lisbon"), "dates"),
            (("work", "berlin"), "hotel"),
            (("work", "berlin"), "slides"),
        ],
        GATHERED,
        strict=True,
    ):
        store.put_memory("alice", ns, key, {"text": text})
    first = {
        mode: store.search_memories("alice", query=GATHERING_QUERY, mode=mode).items[0]
        for mode in ("keyword", "semantic", "hybrid")
    }
    assert (first["keyword"].namespace, first["semantic"].namespace) == (("work", "berlin"), ("work", "berlin"))
    assert (first["hybrid"].namespace, first["hybrid"].key) == (("trips", "lisbon"), "hotel")
    alone = store.search_memories("alice", ("work",), query=GATHERING_QUERY, mode="hybrid").items
    assert [h.key for h in alone][:1] == ["hotel"] and alone[0].score == pytest.approx(1.5)
