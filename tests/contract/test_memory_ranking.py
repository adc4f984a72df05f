"""The ranking every backend shares (store/core/memories.py `rank`), on candidates given by hand: what a hybrid
search adds for the namespace where its matches gather, and what it leaves alone."""

from __future__ import annotations

import pytest

from store.core import memories as m


def candidate(namespace: tuple[str, ...], key: str, text: str, similarity: float | None) -> m.Candidate:
    return m.Candidate(namespace, key, {"text": text}, text, similarity, key)


LISBON = ("trips", "lisbon")
BERLIN = ("work", "berlin")
CANDIDATES = [
    candidate(LISBON, "hotel", "The Lisbon hotel is Casa do Mar", 0.61),
    candidate(LISBON, "nights", "We stay five nights in Lisbon", 0.58),
    candidate(LISBON, "dates", "Our Lisbon stay starts on the 10th", 0.57),
    candidate(BERLIN, "hotel", "Book a hotel near the Berlin hotel fair", 0.62),
    candidate(BERLIN, "slides", "Slides for the Berlin talk", None),
]
QUERY = "which hotel do I stay at?"


def scores(found: list[m.Ranked]) -> dict[tuple[tuple[str, ...], str], float | None]:
    return {(r.candidate.namespace, r.candidate.key): r.score for r in found}


def test_a_hybrid_search_prefers_the_namespace_where_its_matches_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    with_prior = m.rank(CANDIDATES, search_mode="hybrid", query_text=QUERY, wanted={})
    monkeypatch.setattr(m, "HYBRID_NAMESPACE", 0.0)
    fused = scores(m.rank(CANDIDATES, search_mode="hybrid", query_text=QUERY, wanted={}))
    assert max(fused, key=lambda k: fused[k] or 0.0) == (BERLIN, "hotel")  # alone, the words and meaning say Berlin
    assert (with_prior[0].candidate.namespace, with_prior[0].candidate.key) == (LISBON, "hotel")
    prior = scores(with_prior)
    for key, score in prior.items():
        before = fused[key]
        assert score is not None and before is not None
        if key[0] == LISBON:  # the leading namespace: its scores as they were
            assert score == pytest.approx(before)
        else:  # lowered by the difference of the namespaces' shares, at most HYBRID_NAMESPACE
            assert before - 1.0 <= score < before


def test_one_namespace_or_another_mode_is_ranked_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates of one namespace get nothing added; keyword and semantic searches never do."""
    alone = [c for c in CANDIDATES if c.namespace == LISBON]
    ranked = {mode: scores(m.rank(CANDIDATES, search_mode=mode, query_text=QUERY, wanted={})) for mode in m.MODES}
    single = scores(m.rank(alone, search_mode="hybrid", query_text=QUERY, wanted={}))
    monkeypatch.setattr(m, "HYBRID_NAMESPACE", 0.0)
    assert single == scores(m.rank(alone, search_mode="hybrid", query_text=QUERY, wanted={}))
    for mode in ("keyword", "semantic"):
        assert ranked[mode] == scores(m.rank(CANDIDATES, search_mode=mode, query_text=QUERY, wanted={}))


FEW = [
    candidate(("facts",), "allergy", "Allergic to peanuts", 0.57),
    candidate(("facts",), "cello", "Plays the cello in an amateur orchestra", 0.03),
    candidate(("facts",), "tesla", "Drives a red Tesla", -0.06),
]
ALLERGY = "what food allergy do I have"  # no word of it in any candidate: meaning alone relates them


def test_a_search_that_saw_every_memory_measures_meaning_from_the_embedders_floor() -> None:
    """A few memories are no sample of "unrelated": the embedder's floor is the reference, so the only memory
    related by meaning scores as a match, alone or beside unrelated ones, and those below the floor score 0."""
    alone = m.rank(FEW[:1], search_mode="hybrid", query_text=ALLERGY, wanted={}, floor=0.12)
    assert [(r.candidate.key, r.score) for r in alone] == [("allergy", m.HYBRID_MEANING)]
    among = scores(m.rank(FEW, search_mode="hybrid", query_text=ALLERGY, wanted={}, floor=0.12))
    assert among == {(("facts",), "allergy"): m.HYBRID_MEANING, (("facts",), "cello"): 0.0, (("facts",), "tesla"): 0.0}
    unrelated = m.rank(FEW[1:], search_mode="hybrid", query_text=ALLERGY, wanted={}, floor=0.12)
    assert [(r.candidate.key, r.score) for r in unrelated] == [("cello", 0.0), ("tesla", 0.0)]  # nearer first


def test_a_search_cut_at_the_nearest_hundred_measures_from_the_last_of_them() -> None:
    """When the search by meaning stopped at MAX_TOP_K, the last neighbour stands for "unrelated", above or
    below the floor (a conversation's ranking as it was); without a floor, least to greatest as before."""
    learned = [0.9 - i * 0.001 for i in range(m.MAX_TOP_K)]
    assert m.meaning_scale(learned, m.Reference(0.5, complete=False)) == (min(learned), 0.9)
    assert m.meaning_scale(learned, m.Reference(0.85, complete=False)) == (min(learned), 0.9)
    assert m.meaning_scale(learned[:3], m.Reference(0.5, complete=True)) == (0.5, 0.9)
    assert m.meaning_scale(learned[:3], m.Reference(None, complete=True)) == (min(learned[:3]), 0.9)
    many = [candidate(("n",), f"k{i:03}", f"text {i}", s) for i, s in enumerate(learned)]
    ranked = m.rank(many, search_mode="hybrid", query_text="unrelated words", wanted={}, floor=0.5)
    assert ranked[0].score == m.HYBRID_MEANING and ranked[-1].score == 0.0
    assert [r.candidate.key for r in ranked] == [c.key for c in many]
