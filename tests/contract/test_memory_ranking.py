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
