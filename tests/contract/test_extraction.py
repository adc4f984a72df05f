"""Memory extraction (issue 48), the same assertions on every backend: a session's conversation distilled into
its owner's memories with provenance, consolidated with what is there (duplicates without a model, merges and
supersedes with history), idempotent per range, each failure of the model a run that writes nothing, and the
owner's boundary kept. The model is the caller's function answering from a script (tests/extraction_support.py);
real APIs' recorded answers are tests/extraction/test_model_apis.py's."""

from __future__ import annotations

import pytest

from store import InvalidInput, MemoryNotFound, SessionNotFound, SessionStore
from store.embeddings import WordLlamaEmbedder
from store.extraction import RUNS_KIND, ModelRefused, Strategy
from tests.conftest import Harness
from tests.extraction_support import Scripted, decisions, memories

pytestmark = pytest.mark.needs("put_memory", "get_memory", "search_memories", "save_records", "load_records")
WORDLLAMA = WordLlamaEmbedder()
TRIP = [
    {"role": "user", "content": "I'm flying to Lisbon on 10 May. I always want a window seat."},
    {"role": "assistant", "content": "Noted: Lisbon on 10 May, window seat."},
]


def _session(harness: Harness, owner: str = "alice", messages: list[dict[str, str]] | None = None) -> str:
    store = harness.store
    session = store.create_session(owner)
    store.append_messages(session.id, messages or TRIP)
    return session.id


def _with_a_fact(harness: Harness) -> tuple[SessionStore, str]:
    """alice's session whose facts were extracted: "The user flies to Lisbon on 10 May." (the store, the id)."""
    sid = _session(harness)
    model = Scripted({"record_facts": [memories("The user flies to Lisbon on 10 May.")]})
    harness.store.extract_memories(sid, strategies=["facts"], model=model)
    return harness.store, sid


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_conversation_becomes_facts_and_preferences_with_their_provenance(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    model = Scripted(
        {
            "record_facts": [memories("The user flies to Lisbon on 10 May.", evidence=[1, 2, 99])],
            "record_preferences": [memories("The user wants a window seat on flights.", evidence=[1])],
        }
    )
    runs = store.extract_memories(sid, model=model)
    assert [(r.strategy, r.status, r.first_seq, r.last_seq) for r in runs] == [
        ("facts", "succeeded", 1, 2),
        ("preferences", "succeeded", 1, 2),
    ]
    assert all(r.model == "scripted-model" and r.model_calls == 1 and r.trigger == "on_demand" for r in runs)
    (fact,) = store.search_memories("alice", ("facts",)).items
    assert fact.value["text"] == "The user flies to Lisbon on 10 May."
    source = fact.value["source"]
    assert source["session_id"] == sid and source["seqs"] == [1, 2] and source["strategy"] == "facts"  # 99: not shown
    assert source["model"] == "scripted-model" and source["run_id"] == runs[0].run_id and source["extracted_at"]
    (pref,) = store.search_memories("alice", ("preferences",), query="window seat").items
    assert pref.value["text"].endswith("window seat on flights.") and pref.value["history"] == []
    # the conversation reached the model as numbered turns, its instructions apart from it
    assert "[1] user: I'm flying to Lisbon" in model.asked[0].prompt and "[2] assistant:" in model.asked[0].prompt
    assert "Lisbon" not in model.asked[0].system
    assert [r.run_id for r in store.list_extraction_runs(sid)] == [r.run_id for r in runs]
    # nothing new: no run, no model call
    assert store.extract_memories(sid, model=model) == [] and len(model.asked) == 2


@pytest.mark.settings(embedder=WORDLLAMA)
def test_the_next_run_reads_only_new_messages_and_a_known_fact_is_not_written_again(harness: Harness) -> None:
    store, sid = _with_a_fact(harness)
    store.append_messages(sid, [{"role": "user", "content": "As I said, Lisbon on 10 May."}])
    again = Scripted({"record_facts": [memories("the user flies to Lisbon on 10 May")]})
    (run,) = store.extract_memories(sid, strategies=["facts"], model=again)
    assert (run.first_seq, run.last_seq, run.unchanged, run.changes) == (3, 3, 1, [])
    assert again.names() == ["record_facts"]  # the duplicate was decided without a consolidation question
    assert "[3] user:" in again.asked[0].prompt and "[1]" not in again.asked[0].prompt
    assert len(store.search_memories("alice", ("facts",)).items) == 1


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_contradiction_supersedes_the_fact_and_keeps_it_in_its_history(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    store.extract_memories(
        sid, strategies=["facts"], model=Scripted({"record_facts": [memories("The user flies to Lisbon on 10 May.")]})
    )
    (old,) = store.search_memories("alice", ("facts",)).items
    store.append_messages(sid, [{"role": "user", "content": "Change of plan: Lisbon on 12 May instead."}])
    model = Scripted(
        {
            "record_facts": [memories("The user flies to Lisbon on 12 May.", evidence=[3])],
            "consolidate_memories": [decisions((0, "supersede", old.key, "The user flies to Lisbon on 12 May."))],
        }
    )
    (run,) = store.extract_memories(sid, strategies=["facts"], model=model)
    assert [(c.key, c.action) for c in run.changes] == [(old.key, "supersede")]
    assert old.key in model.asked[1].prompt and "10 May" in model.asked[1].prompt  # shown its nearest memory
    now = store.get_memory("alice", ("facts",), old.key)
    assert now is not None and now.value["text"] == "The user flies to Lisbon on 12 May."
    assert now.value["source"]["seqs"] == [3]
    (was,) = now.value["history"]
    assert was["text"] == "The user flies to Lisbon on 10 May." and was["change"] == "supersede"
    assert was["source"]["seqs"] == [1]
    hits = store.search_memories("alice", ("facts",), query="Lisbon 10 May").items
    assert [h.value["text"] for h in hits] == ["The user flies to Lisbon on 12 May."]  # the old fact is not found


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_merge_and_an_add_in_one_run(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    store.extract_memories(
        sid,
        strategies=["preferences"],
        model=Scripted({"record_preferences": [memories("The user wants a window seat.")]}),
    )
    (seat,) = store.search_memories("alice", ("preferences",)).items
    store.append_messages(sid, [{"role": "user", "content": "Window seat, and near the front. Also, I'm vegetarian."}])
    model = Scripted(
        {
            "record_preferences": [memories("The user wants a seat near the front.", "The user is vegetarian.")],
            # asked about the seat (it shares words with the memory there); the diet is added either way
            "consolidate_memories": [decisions((0, "merge", seat.key, "The user wants a window seat near the front."))],
        }
    )
    (run,) = store.extract_memories(sid, strategies=["preferences"], model=model)
    assert sorted(c.action for c in run.changes) == ["add", "merge"]
    texts = sorted(h.value["text"] for h in store.search_memories("alice", ("preferences",)).items)
    assert texts == ["The user is vegetarian.", "The user wants a window seat near the front."]
    merged = store.get_memory("alice", ("preferences",), seat.key)
    assert merged is not None and merged.value["history"][0]["text"] == "The user wants a window seat."


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_failed_run_writes_nothing_and_its_range_is_tried_again(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    bad = {"memories": [{"text": 42, "evidence": []}]}
    model = Scripted({"record_facts": [bad, bad, bad]})
    (run,) = store.extract_memories(sid, strategies=["facts"], model=model)
    assert (run.status, run.error, run.attempts, run.model_calls, run.changes) == ("failed", "invalid_output", 3, 3, [])
    assert store.search_memories("alice", ()).items == []
    retry = Scripted({"record_facts": [memories("The user flies to Lisbon on 10 May.")]})
    (again,) = store.extract_memories(sid, strategies=["facts"], model=retry)
    assert again.status == "succeeded" and (again.first_seq, again.last_seq) == (1, 2)
    assert again.run_id == run.run_id  # the same range, the same run: its record replaced
    assert [r.status for r in store.list_extraction_runs(sid)] == ["succeeded"]


def test_a_refusal_passes_its_range_over_and_writes_nothing(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    model = Scripted({"record_facts": [ModelRefused("guardrail")]})
    (run,) = store.extract_memories(sid, strategies=["facts"], model=model)
    assert (run.status, run.error, run.attempts) == ("refused", "refused", 1)  # not asked again
    assert store.search_memories("alice", ()).items == []
    assert store.extract_memories(sid, strategies=["facts"], model=model) == []


def test_a_summary_is_rewritten_as_the_session_grows_with_its_versions_kept(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    model = Scripted(
        {
            "record_summary": [
                {"summary": "Planning a Lisbon trip on 10 May."},
                lambda r: {"summary": "Planning a Lisbon trip, now on 12 May."} if "10 May" in r.prompt else {},
            ]
        }
    )
    store.extract_memories(sid, strategies=["summary"], model=model)
    store.append_messages(sid, [{"role": "user", "content": "Make it 12 May."}])
    (run,) = store.extract_memories(sid, strategies=["summary"], model=model)
    got = store.get_memory("alice", ("sessions", sid), "summary")
    assert got is not None and got.value["text"] == "Planning a Lisbon trip, now on 12 May."
    assert got.value["history"][0]["text"] == "Planning a Lisbon trip on 10 May."
    assert (
        run.changes[0].action == "rewrite" and "<summary>\nPlanning a Lisbon trip on 10 May." in model.asked[1].prompt
    )


@pytest.mark.settings(embedder=WORDLLAMA)
def test_an_episode_and_the_lessons_drawn_from_it(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    episode = {
        "goal": "Book a flight",
        "actions": "Searched flights",
        "outcome": "Booked",
        "text": "Booked a Lisbon flight.",
    }
    model = Scripted(
        {
            "record_episode": [{"episode": episode}],
            "record_lessons": [memories("Confirm the seat before booking.", evidence=[])],
        }
    )
    (run,) = store.extract_memories(sid, strategies=["episodes"], model=model)
    assert [(c.namespace, c.action) for c in run.changes] == [(("episodes",), "episode"), (("reflections",), "add")]
    got = store.get_memory("alice", ("episodes",), "episode-1-2")
    assert got is not None and got.value["goal"] == "Book a flight" and got.value["source"]["strategy"] == "episodes"
    (lesson,) = store.search_memories("alice", ("reflections",)).items
    assert (
        lesson.value["text"] == "Confirm the seat before booking."
        and "Booked a Lisbon flight." in model.asked[1].prompt
    )


@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_custom_strategy_writes_to_its_templated_namespace_with_its_fields(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    schema = {
        "type": "object",
        "properties": {
            "memories": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "city": {"type": "string"}},
                    "required": ["text", "city"],
                },
            }
        },
        "required": ["memories"],
    }
    trips = Strategy.custom("trips", "Keep the trips the user plans.", namespace=("trips", "{session}"), schema=schema)
    model = Scripted({"record_custom": [{"memories": [{"text": "A trip to Lisbon.", "city": "Lisbon"}]}]})
    (run,) = store.extract_memories(sid, strategies=[trips], model=model)
    (trip,) = store.search_memories("alice", ("trips", sid)).items
    assert trip.value["city"] == "Lisbon" and trip.value["source"]["strategy"] == "trips" and run.status == "succeeded"
    assert "Keep the trips the user plans." in model.asked[0].system and model.asked[0].schema == schema


def test_another_owner_cannot_extract_from_a_session_and_bad_input_writes_nothing(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    model = Scripted({})
    with pytest.raises(SessionNotFound):
        store.extract_memories(sid, owner="mallory", model=model)
    with pytest.raises(SessionNotFound):
        store.extract_memories("no-such-session", model=model)
    for strategies in (["gossip"], [], ["facts", "facts"], 42):
        with pytest.raises(InvalidInput):
            store.extract_memories(sid, strategies=strategies, model=model)
    with pytest.raises(InvalidInput):
        store.extract_memories(sid, trigger="sometimes", model=model)
    with pytest.raises(InvalidInput):
        store.extract_memories(sid)  # no model given, none configured
    with pytest.raises(InvalidInput):
        Strategy.custom("bad", "x", namespace=("{user}",))
    assert model.asked == [] and store.load_records(sid, RUNS_KIND) == []
    assert store.search_memories("alice", ()).items == [] and store.search_memories("mallory", ()).items == []


def test_a_candidate_the_model_invents_a_target_for_fails_the_run(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    store.extract_memories(
        sid, strategies=["facts"], model=Scripted({"record_facts": [memories("The user flies to Lisbon.")]})
    )
    store.append_messages(sid, [{"role": "user", "content": "Lisbon is in May."}])
    wrong = decisions((0, "supersede", "someone-elses-memory", "x"))
    model = Scripted(
        {"record_facts": [memories("The user flies to Lisbon in May.")], "consolidate_memories": [wrong] * 3}
    )
    (run,) = store.extract_memories(sid, strategies=["facts"], model=model)
    assert (run.status, run.error) == ("failed", "invalid_output")
    assert [h.value["text"] for h in store.search_memories("alice", ("facts",)).items] == ["The user flies to Lisbon."]


STRANDS_BATCH = [
    {"role": "user", "content": [{"text": "I'm allergic to peanuts."}]},
    {"role": "assistant", "content": [{"text": "I'll remember that."}]},
]


@pytest.mark.needs("load_checkpoint", "save_checkpoint")
@pytest.mark.settings(embedder=WORDLLAMA)
def test_a_frameworks_batch_of_messages_is_extracted_under_its_namespace_once(harness: Harness) -> None:
    store = harness.store
    model = Scripted({"record_facts": [memories("The user is allergic to peanuts.", evidence=[7])] * 2})
    (run,) = store.extract_from_messages(
        "alice",
        STRANDS_BATCH,
        source="strands-s1",
        namespace=("strands", "agent"),
        sequence_numbers=[7, 8],
        strategies=["facts"],
        model=model,
    )
    assert (run.status, run.first_seq, run.last_seq, run.session_id) == ("succeeded", 7, 8, "strands-s1")
    (fact,) = store.search_memories("alice", ("strands", "agent")).items
    assert fact.namespace == ("strands", "agent", "facts") and fact.value["source"]["seqs"] == [7]
    assert "[7] user: I'm allergic to peanuts." in model.asked[0].prompt
    again = store.extract_from_messages(
        "alice",
        STRANDS_BATCH,
        source="strands-s1",
        namespace=("strands", "agent"),
        sequence_numbers=[7, 8],
        strategies=["facts"],
        model=model,
    )
    assert [r.run_id for r in again] == [run.run_id] and len(model.asked) == 1  # a retried batch: nothing asked
    # another owner's identical batch is its own run, in its own memories
    store.extract_from_messages("bob", STRANDS_BATCH, source="strands-s1", strategies=["facts"], model=model)
    assert len(model.asked) == 2 and len(store.search_memories("bob", ("facts",)).items) == 1
    assert len(store.search_memories("alice", ()).items) == 1
    for bad in ("not a list", [{"content": "no role"}], [42]):
        with pytest.raises(InvalidInput):
            store.extract_from_messages("alice", bad, source="s", model=model)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.extract_from_messages("alice", STRANDS_BATCH, source="s", sequence_numbers=[1], model=model)
    with pytest.raises(InvalidInput):
        store.extract_from_messages("alice", STRANDS_BATCH, source="no spaces allowed", model=model)
    assert len(model.asked) == 2


@pytest.mark.needs("set_extraction", "get_extraction")
def test_an_owner_switches_extraction_off_and_chooses_its_strategies(harness: Harness) -> None:
    store = harness.store
    sid = _session(harness)
    assert store.get_extraction("alice").enabled is True and store.get_extraction("alice").strategies is None
    off = store.set_extraction("alice", enabled=False)
    assert off.enabled is False and off.updated_at is not None
    model = Scripted({"record_facts": [memories("The user flies to Lisbon on 10 May.")]})
    with pytest.raises(InvalidInput, match="switched off"):
        store.extract_memories(sid, model=model)  # asked for: refused
    assert store.extract_memories(sid, model=model, trigger="messages") == []  # a trigger: nothing
    assert model.asked == [] and store.search_memories("alice", ()).items == []
    assert store.get_extraction("bob").enabled is True  # another owner's choice is their own
    chosen = store.set_extraction("alice", strategies=["facts"])
    assert chosen.enabled is True and chosen.strategies == ["facts"]
    assert store.get_extraction("alice").strategies == ["facts"]
    runs = store.extract_memories(sid, model=model, trigger="messages")
    assert [r.strategy for r in runs] == ["facts"]  # the owner's strategies, not facts and preferences
    store.forget_owner("alice")
    assert store.get_extraction("alice").strategies == ["facts"]  # an opt-out (or a choice) outlives a forget
    for bad in (["gossip"], [], "facts", ["facts", "facts"]):
        with pytest.raises(InvalidInput):
            store.set_extraction("alice", strategies=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.set_extraction("alice", enabled="no")  # type: ignore[arg-type]
    assert store.get_extraction("alice").strategies == ["facts"]


@pytest.mark.needs("forget_owner", "list_sessions")
def test_forget_owner_takes_the_runs_history_and_the_forgotten_messages_are_not_read_again(harness: Harness) -> None:
    """forget_owner removes the memories and what the runs recorded of them (which memories they wrote, model,
    tokens); each strategy keeps only how far it had read, so the next trigger does not make the forgotten
    memories again from the same messages, and reads new ones as before. Another owner's runs stay."""
    store = harness.store
    first, second, bobs = _session(harness), _session(harness), _session(harness, owner="bob")
    facts = ((first, "The user flies to Lisbon."), (second, "The user owns a red bicycle."), (bobs, "Bob flies."))
    for sid, fact in facts:
        model = Scripted({"record_facts": [memories(fact)]})
        (run,) = store.extract_memories(sid, strategies=["facts"], model=model)
        assert run.changes and run.model == "scripted-model"
    failed = Scripted({"record_preferences": [ModelRefused("guardrail")]})
    store.append_messages(second, [{"role": "user", "content": "I am vegetarian."}])
    store.extract_memories(second, strategies=["preferences"], model=failed)  # refused: its range passed
    assert store.forget_owner("alice") is True
    assert store.search_memories("alice", ()).items == []
    for sid, reached in ((first, {"facts": 2}), (second, {"facts": 2, "preferences": 3})):
        runs = store.list_extraction_runs(sid)
        assert {r.strategy: r.last_seq for r in runs} == reached
        assert all(r.trigger == "forget" and r.changes == [] and r.model == "" and r.input_tokens == 0 for r in runs)
    (kept,) = store.list_extraction_runs(bobs)
    assert kept.trigger == "on_demand" and kept.changes
    model = Scripted({"record_facts": [memories("The user flies to Lisbon on 10 May.")]})
    assert store.extract_memories(first, strategies=["facts"], model=model) == [] and model.asked == []
    store.append_messages(first, [{"role": "user", "content": "I moved to Porto."}])
    model = Scripted({"record_facts": [memories("The user lives in Porto.", evidence=[3])]})
    (run,) = store.extract_memories(first, strategies=["facts"], model=model)
    assert (run.first_seq, run.last_seq) == (3, 3) and "[1]" not in model.asked[0].prompt
    assert [h.value["text"] for h in store.search_memories("alice", ()).items] == ["The user lives in Porto."]


@pytest.mark.settings(embedder=WORDLLAMA)
def test_an_owner_corrects_an_extracted_memory_its_earlier_text_kept_in_its_history(harness: Harness) -> None:
    store, _ = _with_a_fact(harness)
    (fact,) = store.search_memories("alice", ("facts",)).items
    corrected = store.correct_memory("alice", ("facts",), fact.key, "  The user flies to Lisbon on 12 May. ")
    assert corrected.value["text"] == "The user flies to Lisbon on 12 May."
    assert corrected.value["source"] == fact.value["source"]  # where it came from stays
    (was,) = corrected.value["history"]
    assert (was["text"], was["change"], was["source"]) == (fact.value["text"], "corrected", fact.value["source"])
    (found,) = store.search_memories("alice", ("facts",), query="12 May", mode="keyword").items
    assert found.key == fact.key and found.value["text"].endswith("12 May.")
    again = store.correct_memory("alice", ("facts",), fact.key, "The user flies to Lisbon on 12 May.")
    assert again.value["history"] == corrected.value["history"]  # the same text: nothing written
    with pytest.raises(MemoryNotFound):
        store.correct_memory("bob", ("facts",), fact.key, "Bob's version.")  # another owner's: not there
    with pytest.raises(MemoryNotFound):
        store.correct_memory("alice", ("facts",), "no-such-key", "anything")
    for bad in ("", "   ", 42, None, "x" * 2001):
        with pytest.raises(InvalidInput):
            store.correct_memory("alice", ("facts",), fact.key, bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.correct_memory("alice", (), fact.key, "no namespace")
    kept = store.get_memory("alice", ("facts",), fact.key)
    assert kept is not None and kept.value == corrected.value
    store.put_memory("alice", ("notes",), "plain", {"text": "by hand", "tag": "x"})
    plain = store.correct_memory("alice", ("notes",), "plain", "by hand, corrected")
    assert plain.value == {
        "text": "by hand, corrected",
        "tag": "x",
        "history": [
            {
                "text": "by hand",
                "source": None,
                "change": "corrected",
                "replaced_at": plain.value["history"][0]["replaced_at"],
            }
        ],
    }
