"""The context for a model's next turn (`SessionStore.context`), the same assertions on every backend that
offers the message index: never over the budget (the estimate of its rendering is its `used_tokens`), the
newest message always there, the recent window in order, an old message that matters to the question recalled
from far back, the running summary and the owner's memories with their provenance, a memory extracted from a
message already shown left out, and bad input refused with nothing written."""

from __future__ import annotations

import uuid

import pytest

from store import InvalidInput, SessionNotFound
from store.embeddings import WordLlamaEmbedder
from store.models import MessageHit
from store.recall.context import MIN_SCORE, in_conversation
from store.recall.tokens import count_tokens
from tests.conftest import Harness
from tests.contract.test_message_index import index
from tests.extraction_support import Scripted

pytestmark = pytest.mark.needs("search_messages", "put_memory")
WORDLLAMA = WordLlamaEmbedder()


def long_session(harness: Harness, owner: str = "alice", sid: str = "trip", turns: int = 50) -> None:
    store = harness.store
    store.create_session(owner, session_id=sid)
    messages = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"Question {i}: what is the weather like on day {i}?"})
        messages.append({"role": "assistant", "content": f"Day {i} looks sunny with a light breeze."})
    messages[10] = {"role": "user", "content": "My daughter Mia is allergic to peanuts, keep that in mind."}
    for start in range(0, len(messages), 90):
        store.append_messages(sid, messages[start : start + 90], owner=owner)
    store.append_messages(
        sid, [{"role": "user", "content": "Which restaurants suit Mia's peanut allergy?"}], owner=owner
    )
    index(harness, owner, sid)


def test_the_context_recalls_an_old_message_under_the_budget(harness: Harness) -> None:
    long_session(harness)
    context = harness.store.context("trip", budget_tokens=400, owner="alice")
    assert context.used_tokens <= 400 and context.used_tokens == count_tokens(context.as_text())
    assert context.query == "Which restaurants suit Mia's peanut allergy?"
    assert context.recent[-1].seqs == [101] and context.recent[-1].role == "user"
    assert [p.seqs[0] for p in context.recent] == sorted(p.seqs[0] for p in context.recent)
    assert 11 in [p.seqs[0] for p in context.recalled]  # far outside the recent window
    assert all(p.session_id == "trip" and p.tokens > 0 for p in context.recent + context.recalled)
    assert len(context.recent) < 101 and sum(p.tokens for p in context.recent) <= 400
    messages = context.as_messages()
    assert messages[0]["role"] == "system" and "allergic to peanuts" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "Which restaurants suit Mia's peanut allergy?"}


def test_the_summary_and_memories_come_with_their_provenance_each_once(harness: Harness) -> None:
    store = harness.store
    long_session(harness)
    store.put_memory(
        "alice",
        ("sessions", "trip"),
        "summary",
        {
            "text": "Alice plans a trip; her daughter Mia has a peanut allergy.",
            "source": {"session_id": "trip", "seqs": [1, 80]},
        },
    )
    store.put_memory(
        "alice",
        ("facts",),
        "mia",
        {"text": "Mia is allergic to peanuts", "source": {"session_id": "trip", "seqs": [11]}},
    )
    store.put_memory(
        "alice",
        ("facts",),
        "diet",
        {"text": "Alice avoids peanut sauces too", "source": {"session_id": "old", "seqs": [3]}},
    )
    context = store.context("trip", budget_tokens=600, owner="alice")
    assert context.summary is not None and context.summary.seqs == [1, 80]
    assert context.summary.namespace == ("sessions", "trip") and context.summary.key == "summary"
    keys = [p.key for p in context.memories]
    assert "diet" in keys and "mia" not in keys  # its source message, seq 11, is shown already
    assert [p.namespace for p in context.memories if p.key == "diet"] == [("facts",)]
    assert context.used_tokens == count_tokens(context.as_text()) <= 600
    assert "\n- Alice avoids peanut sauces too" in context.as_text()
    assert ("sessions", "trip") not in [p.namespace for p in context.memories]  # the summary, once
    alone = store.context("trip", "peanut", budget_tokens=600, owner="alice", memories=False)
    assert alone.query == "peanut" and alone.memories == []


@pytest.mark.needs("search_messages", "put_memory", "get_memory", "search_memories", "save_records", "load_records")
def test_the_summary_strategy_keeps_the_running_summary_the_context_shows(harness: Harness) -> None:
    """Kept by the summary strategy range by range (each run folds its range into the summary so far), the
    summary covers the session from its first range to its last: shown with that range while the recent
    window holds the last range only, absent before any run."""
    store = harness.store
    store.create_session("alice", session_id="plans")
    said = [f"Step {i}: we compared the hotels near the old harbour for the trip in May." for i in range(36)]
    store.append_messages("plans", [{"role": "user", "content": t} for t in said], owner="alice")
    index(harness, "alice", "plans")
    assert store.context("plans", owner="alice").summary is None  # no model has kept one
    model = Scripted(
        {"record_summary": [{"summary": "Comparing harbour hotels for May."}, {"summary": "Booked the harbour hotel."}]}
    )
    store.extract_memories("plans", strategies=["summary"], model=model, owner="alice")
    later = [{"role": "user", "content": f"Booking {i}: the harbour hotel, two nights."} for i in range(4)]
    store.append_messages("plans", later, owner="alice")
    (run,) = store.extract_memories("plans", strategies=["summary"], model=model, owner="alice")
    assert (run.first_seq, run.last_seq) == (37, 40)  # the second range: the messages since the first
    index(harness, "alice", "plans")
    context = store.context("plans", budget_tokens=1000, owner="alice")
    assert min(p.seqs[0] for p in context.recent) <= 37  # the window holds the whole second range
    assert context.summary is not None and context.summary.text == "Booked the harbour hotel."
    assert context.summary.seqs == [1, 40] and context.summary.key == "summary"
    assert "Booked the harbour hotel." in context.as_text()
    assert context.used_tokens == count_tokens(context.as_text()) <= 1000


def test_a_small_budget_keeps_the_newest_message_cut_to_fit(harness: Harness) -> None:
    store = harness.store
    store.create_session("alice", session_id="long")
    store.append_messages("long", [{"role": "user", "content": "word " * 400}], owner="alice")
    index(harness, "alice", "long")
    context = store.context("long", budget_tokens=64, owner="alice")
    assert context.used_tokens <= 64 and context.recent[0].text.endswith("…")
    empty = store.context("long", budget_tokens=64, owner="alice")
    assert empty.budget_tokens == 64


def test_bad_context_calls_are_refused_and_write_nothing(harness: Harness) -> None:
    store = harness.store
    long_session(harness, turns=6)
    store.create_session("bob", session_id="bobs")
    before = harness.leftovers()
    for budget in (0, 63, 200_001, "2000", True, 1.5):
        with pytest.raises(InvalidInput):
            store.context("trip", budget_tokens=budget, owner="alice")  # type: ignore[arg-type]
    for query in ("x" * 50_000, "", "line\x00break", 7):
        with pytest.raises(InvalidInput):
            store.context("trip", query, owner="alice")  # type: ignore[arg-type]
    with pytest.raises(SessionNotFound):
        store.context("bobs", owner="alice")
    with pytest.raises(SessionNotFound):
        store.context("nobody-has-this", owner="alice")
    assert harness.leftovers() == before


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_few_memories_are_recalled_by_meaning_and_the_unrelated_left_out(harness: Harness) -> None:
    """An owner with one memory, related to the question by meaning alone (no word shared), finds it and sees
    it in the context; beside two unrelated memories the same: they score 0 and are not shown."""
    store = harness.store
    store.create_session("alice", session_id="diet")
    store.append_messages("diet", [{"role": "user", "content": "what food allergy do I have"}], owner="alice")
    index(harness, "alice", "diet")
    store.put_memory("alice", ("facts",), "allergy", {"text": "Allergic to peanuts"})
    alone = store.search_memories("alice", ("facts",), query="what food allergy do I have", mode="hybrid")
    assert [h.key for h in alone.items] == ["allergy"]
    assert alone.items[0].score is not None and alone.items[0].score >= MIN_SCORE
    assert [p.key for p in store.context("diet", owner="alice").memories] == ["allergy"]
    store.put_memory("alice", ("facts",), "cello", {"text": "Plays the cello in an amateur orchestra"})
    store.put_memory("alice", ("facts",), "tesla", {"text": "Drives a red Tesla"})
    among = store.search_memories("alice", ("facts",), query="what food allergy do I have", mode="hybrid")
    assert {h.key: h.score for h in among.items} == {"allergy": alone.items[0].score, "cello": 0.0, "tesla": 0.0}
    assert [p.key for p in store.context("diet", owner="alice").memories] == ["allergy"]


class Counting:
    """wordllama's embeddings, counting the texts it is asked to embed."""

    model_id = WORDLLAMA.model_id
    dimensions = WORDLLAMA.dimensions
    match_threshold = 0.12

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return WORDLLAMA(texts)


COUNTING = Counting()


@pytest.mark.settings(embedder=COUNTING)
def test_a_context_embeds_its_question_once(harness: Harness) -> None:
    """The message index's search and the memories' search share the question's embedding: one model call
    for the question, on every backend; asked again, none (a question of its own each run: the embedder keeps
    its queries for the process)."""
    store = harness.store
    question = f"Which gate does the Porto train leave from, trip {uuid.uuid4().hex[:8]}?"
    store.create_session("alice", session_id="q")
    store.append_messages("q", [{"role": "user", "content": question}], owner="alice")
    index(harness, "alice", "q")
    store.put_memory("alice", ("facts",), "train", {"text": "Takes the train to Porto on Fridays"})
    COUNTING.texts.clear()
    context = store.context("q", owner="alice")
    assert [p.key for p in context.memories] == ["train"]
    assert COUNTING.texts == [question]
    store.context("q", owner="alice", query=question)
    assert COUNTING.texts == [question]


@pytest.mark.settings(embedder=COUNTING)
def test_a_question_kept_for_one_owner_is_embedded_again_for_another(harness: Harness) -> None:
    """What one owner asked is kept for them only: another owner's same question is embedded for them (no
    search of theirs is faster for what someone else asked)."""
    store = harness.store
    question = f"Where did I park the car, level {uuid.uuid4().hex[:8]}?"
    store.put_memory("alice", ("facts",), "car", {"text": "Parked the car on level 3"})
    store.put_memory("bob", ("facts",), "car", {"text": "Parked the car on level 5"})
    COUNTING.texts.clear()
    store.search_memories("alice", ("facts",), query=question)
    store.search_memories("alice", ("facts",), query=question)
    assert COUNTING.texts == [question]
    store.search_memories("bob", ("facts",), query=question)
    assert COUNTING.texts == [question, question]


@pytest.mark.settings(embedder=WORDLLAMA)
def test_the_answer_beside_a_matching_question_is_recalled_with_it(harness: Harness) -> None:
    """A message that shares nothing with the question (scored 0 by the search) is recalled when it sits beside
    one that matches (an answer after the question it answers), ahead of messages that match a word alone; the
    question, shown as the newest message, pulls in nothing of its own."""
    store = harness.store
    store.create_session("alice", session_id="dinner")
    said: list[dict[str, str]] = []
    for i in range(40):
        said.append({"role": "user", "content": f"On day {i} we cooked dinner at home and watched a film."})
        said.append({"role": "assistant", "content": f"Sounds like a calm evening, day {i}."})
    said[20] = {"role": "user", "content": "Mia asked me which restaurant to book for her birthday dinner."}
    said[21] = {"role": "assistant", "content": "She settled on Tasca do Chico in Alfama, at eight."}
    question = "Which restaurant is booked for Mia's birthday dinner?"
    store.append_messages("dinner", [*said, {"role": "user", "content": question}], owner="alice")
    index(harness, "alice", "dinner")
    (answer,) = [
        h for h in store.search_messages("alice", question, session_id="dinner", limit=100).items if h.seq == 22
    ]
    assert answer.score is not None and answer.score < MIN_SCORE  # alone, it would be left out
    context = store.context("dinner", budget_tokens=200, owner="alice")
    recalled = {p.seqs[0]: p for p in context.recalled}
    assert 21 in recalled and 22 in recalled  # the question that matched, and its answer
    assert (recalled[22].score or 0.0) >= MIN_SCORE
    assert "Tasca do Chico" in context.as_text()
    assert not {79, 80} & set(recalled)  # the newest message's own neighbours are not pulled in by it
    assert context.used_tokens == count_tokens(context.as_text()) <= 200


def test_a_recalled_message_gains_half_the_best_score_within_two_of_it_not_shown() -> None:
    def hit(seq: int, score: float | None) -> MessageHit:
        return MessageHit(session_id="s", seq=seq, role="user", text=f"m{seq}", score=score)

    hits = [hit(10, 1.0), hit(12, 0.0), hit(13, 0.2), hit(30, None), hit(40, 0.4), hit(41, 0.0)]
    scored = {h.seq: h.score for h in in_conversation(hits, shown={40})}
    assert scored == {10: 1.0, 12: 0.5, 13: 0.2, 30: None, 40: 0.4, 41: 0.0}  # 13 is three from 10; 40 is shown
    assert {h.seq: h.score for h in in_conversation(hits, shown=set())}[41] == 0.2
