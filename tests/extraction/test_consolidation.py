"""Consolidation's rules decided without a model (`store.extraction.consolidation`): what counts as the same
fact, which memories are related enough to be shown with a candidate, how an answer is checked, and how a
memory's history grows and stays bounded."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from store.extraction import ModelOutputInvalid
from store.extraction.consolidation import MAX_HISTORY, ExtractedMemory, decisions, identical, key_of, related, updated


def hit(text: str, score: float | None = None) -> SimpleNamespace:
    return SimpleNamespace(value={"text": text}, score=score)


def test_the_same_fact_however_written_has_one_key() -> None:
    assert key_of("facts", "The user flies to Lisbon.") == key_of("facts", "  the USER flies to Lisbon ")
    assert key_of("facts", "The user flies to Lisbon.") != key_of("preferences", "The user flies to Lisbon.")
    assert key_of("facts", "The user flies to Lisbon.") != key_of("facts", "The user flies to Porto.")
    assert identical(ExtractedMemory("The user is vegan."), [{"text": "the user is vegan"}, {"x": 1}])
    assert not identical(ExtractedMemory("The user is vegan."), [{"text": "The user was vegan."}])


def test_a_memory_is_related_by_a_shared_word_or_by_meaning_never_by_naming_the_user() -> None:
    candidate = ExtractedMemory("The user moved to Lisbon.")
    assert related(candidate, hit("The user lives in Lisbon."), None)  # "lisbon"
    assert not related(candidate, hit("The user drives a blue van."), None)  # only "user"
    assert related(candidate, hit("The user lives in Porto.", score=0.86), 0.8)  # no shared word: by meaning
    assert not related(candidate, hit("The user lives in Porto.", score=0.79), 0.8)
    assert not related(candidate, SimpleNamespace(value={"n": 1}, score=1.0), 0.5)


def test_an_answer_that_names_what_was_not_shown_is_invalid() -> None:
    candidates = [ExtractedMemory("The user flies on 12 May."), ExtractedMemory("The user is vegan.")]
    near = [[("k1", "The user flies on 10 May.")], [("k2", "The user is vegetarian.")]]
    ok = {
        "decisions": [
            {"candidate": 0, "action": "supersede", "target": "k1", "text": "The user flies on 12 May."},
        ]
    }
    made = decisions("facts", candidates, near, ok)
    assert [(d.action, d.key) for d in made] == [("supersede", "k1"), ("add", key_of("facts", "The user is vegan."))]
    bad_answers: list[dict[str, Any]] = [
        {"decisions": [{"candidate": 0, "action": "supersede", "target": "k2", "text": "x"}]},  # not its neighbour
        {"decisions": [{"candidate": 2, "action": "add", "target": "", "text": ""}]},
        {"decisions": [{"candidate": 0, "action": "add", "target": "", "text": ""}] * 2},
        {"decisions": [{"candidate": 0, "action": "delete", "target": "k1", "text": ""}]},
        {"decisions": [{"candidate": 0, "action": "merge", "target": "k1", "text": "  "}]},
        {"decisions": [{"candidate": True, "action": "none", "target": "", "text": ""}]},
        {"decisions": "none"},
        {},
    ]
    for answer in bad_answers:
        with pytest.raises(ModelOutputInvalid):
            decisions("facts", candidates, near, answer)


def test_history_keeps_each_earlier_text_with_its_provenance_newest_first_and_bounded() -> None:
    value = {"text": "v0", "source": {"seqs": [1]}, "history": [], "extra": "kept"}
    for i in range(1, MAX_HISTORY + 5):
        value = updated(value, f"v{i}", {"seqs": [i + 1]}, "supersede", f"t{i}")
    assert value["text"] == f"v{MAX_HISTORY + 4}" and value["extra"] == "kept"
    assert len(value["history"]) == MAX_HISTORY
    first = value["history"][0]
    assert first == {
        "text": f"v{MAX_HISTORY + 3}",
        "source": {"seqs": [MAX_HISTORY + 4]},
        "change": "supersede",
        "replaced_at": f"t{MAX_HISTORY + 4}",
    }
