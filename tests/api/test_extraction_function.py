"""The extraction function on the sessions table's real stream records (moto's), as Lambda hands them: a
session is extracted when its last_seq crosses a multiple of EXTRACTION_EVERY, once for a batch however many of
its records it holds; a model's failure is a run's record, not a batch failure; with no model it does nothing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from functions import runtime
from infra.local.apigw import LambdaContext
from infra.local.stack import lambda_stream_record
from store import SessionStore
from store.extraction import ModelThrottled
from store.extraction.triggers import due, every_from_env, head_moves, model_from_env, strategies_from_env
from tests.conftest import Harness
from tests.extraction_support import Scripted, memories
from tests.streams import stream_records


@pytest.fixture
def function(dyn: Harness, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:

    runtime.use_store(dyn.store)
    monkeypatch.setenv("EXTRACTION_EVERY", "4")
    yield dyn
    runtime.use_store(None)


def _records(dyn: Harness, inspector: Any) -> list[dict[str, Any]]:
    assert dyn.tables is not None
    return [lambda_stream_record(r) for r in stream_records(inspector, dyn.tables.sessions)]


def _with_model(model: Any) -> None:
    """The function's store, as the one installed, with `model` as its extraction model (None: off)."""
    installed = runtime.installed_store()
    assert installed is not None
    runtime.use_store(
        SessionStore(backend=installed.backend, settings=replace(installed.settings, extraction_model=model))
    )


def _handle(records: list[dict[str, Any]], model: Any) -> dict[str, Any]:
    import functions.extraction.app as app

    _with_model(model)
    result: dict[str, Any] = app.lambda_handler({"Records": records}, LambdaContext(timeout_ms=300_000))
    return result


@pytest.mark.settings(extraction_strategies=("facts",))  # the deployment's (from_env reads EXTRACTION_STRATEGIES)
def test_a_session_is_extracted_once_it_has_grown_by_every_messages(function: Harness, inspector_client: Any) -> None:
    store = function.store
    sid = store.create_session("alice").id
    for text in ("I live in Porto.", "ok", "I moved to Lisbon last week."):
        store.append_messages(sid, [{"role": "user", "content": text}])
    model = Scripted({"record_facts": [memories("The user lives in Lisbon.", evidence=[3, 4])]})
    assert _handle(_records(function, inspector_client), model) == {"batchItemFailures": []}
    assert model.asked == []  # 3 messages: not yet due
    store.append_messages(sid, [{"role": "assistant", "content": "Noted: Lisbon."}])
    assert _handle(_records(function, inspector_client), model) == {"batchItemFailures": []}
    (run,) = store.list_extraction_runs(sid)
    assert (run.trigger, run.strategy, run.first_seq, run.last_seq, run.status) == (
        "messages",
        "facts",
        1,
        4,
        "succeeded",
    )
    assert [h.value["text"] for h in store.search_memories("alice", ("facts",)).items] == ["The user lives in Lisbon."]
    # the same records handed again (a retried batch): the range is done, nothing asked, nothing written
    assert _handle(_records(function, inspector_client), model) == {"batchItemFailures": []}
    assert len(model.asked) == 1 and len(store.list_extraction_runs(sid)) == 1


@pytest.mark.settings(extraction_strategies=("facts",))
def test_a_failing_model_is_a_failed_run_and_no_model_is_no_extraction(
    function: Harness, inspector_client: Any
) -> None:
    store = function.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": f"fact {i}"} for i in range(4)])
    records = _records(function, inspector_client)
    assert _handle(records, None) == {"batchItemFailures": []} and store.list_extraction_runs(sid) == []
    failing = Scripted({"record_facts": [ModelThrottled("429")] * 3})
    assert _handle(records, failing) == {"batchItemFailures": []}
    (run,) = store.list_extraction_runs(sid)
    assert (run.status, run.error, run.attempts) == ("failed", "throttled", 3)
    assert store.search_memories("alice", ()).items == []


def test_a_session_left_for_want_of_time_is_handed_back_to_the_stream(function: Harness, inspector_client: Any) -> None:
    import functions.extraction.app as app

    store = function.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": f"fact {i}"} for i in range(4)])
    records = _records(function, inspector_client)
    _with_model(Scripted({}))
    answer = app.lambda_handler({"Records": records}, LambdaContext(timeout_ms=30_000))
    mine = [
        r["dynamodb"]["SequenceNumber"] for r in records if r["dynamodb"].get("NewImage", {}).get("id") == {"S": sid}
    ]
    assert answer == {"batchItemFailures": [{"itemIdentifier": s} for s in mine]} and mine
    assert store.list_extraction_runs(sid) == []


def test_due_reads_only_head_changes_that_cross_a_multiple() -> None:
    def head(old: int, new: int, **extra: Any) -> dict[str, Any]:
        image = {"id": {"S": "s1"}, "owner": {"S": "alice"}, "last_seq": {"N": str(new)}, **extra}
        return {
            "eventName": "MODIFY",
            "dynamodb": {"Keys": {"sk": {"S": "HEAD"}}, "NewImage": image, "OldImage": {"last_seq": {"N": str(old)}}},
        }

    assert due(head_moves([head(9, 10)]), 10) == {"s1": "alice"} and due(head_moves([head(8, 9)]), 10) == {}
    assert due(head_moves([head(7, 12)]), 10) == {"s1": "alice"}  # a write of several messages that crosses it
    assert due(head_moves([head(9, 10, deleting={"BOOL": True})]), 10) == {}
    state = head(9, 10)
    state["dynamodb"]["Keys"]["sk"] = {"S": "STATE"}
    assert due(head_moves([state, {"eventName": "INSERT"}, {}]), 10) == {}


def test_the_environment_names_the_model_strategies_and_cadence(monkeypatch: pytest.MonkeyPatch) -> None:
    from store import InvalidInput
    from store.extraction import BedrockConverseModel, OpenAICompatibleModel

    assert model_from_env("") is None and model_from_env("none") is None
    bedrock = model_from_env("bedrock:amazon.nova-lite-v1:0")
    assert isinstance(bedrock, BedrockConverseModel) and bedrock.model_id == "amazon.nova-lite-v1:0"
    monkeypatch.setenv("EXTRACTION_API_KEY", "sk-local")
    local = model_from_env("openai:http://127.0.0.1:11434/v1#qwen2.5:7b")
    assert isinstance(local, OpenAICompatibleModel) and local.model_id == "qwen2.5:7b" and local.api_key == "sk-local"
    assert local.url == "http://127.0.0.1:11434/v1/chat/completions"
    for bad in ("gpt-4o", "openai:http://x", "bedrock:"):
        with pytest.raises(InvalidInput):
            model_from_env(bad)
    assert [s.name for s in strategies_from_env("")] == ["facts", "preferences"]
    assert [s.name for s in strategies_from_env("summary, episodes")] == ["summary", "episodes"]
    assert every_from_env("") == 10 and every_from_env("3") == 3
    for bad in ("0", "x", "5000"):
        with pytest.raises(InvalidInput):
            every_from_env(bad)


@pytest.mark.settings(extraction_strategies=("facts",))
def test_a_session_left_idle_has_what_is_left_extracted(
    function: Harness, inspector_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every session that moved gets its idle timer (re)started; when DynamoDB's TTL removes the timer (moto never
    does: the removal is synthesized from the item as it was), what the count trigger left is extracted."""
    from store.extraction.triggers import IDLE_PK, idle, idle_key
    from tests.api.test_cascade import ttl_removal

    monkeypatch.setenv("EXTRACTION_IDLE_MINUTES", "30")
    store = function.store
    sid = store.create_session("alice").id
    store.append_messages(sid, [{"role": "user", "content": "I moved to Lisbon."}])  # 1 message: not due (4)
    model = Scripted({"record_facts": [memories("The user moved to Lisbon.")]})
    assert _handle(_records(function, inspector_client), model) == {"batchItemFailures": []}
    assert model.asked == [] and store.list_extraction_runs(sid) == []
    key = idle_key(sid)
    assert key is not None
    timer = store.load_checkpoint("workflow", key)
    assert timer is not None and timer.data == {"seq": 1} and timer.expires_at is not None
    item = inspector_client.get_item(
        TableName=function.tables.sessions, Key={"pk": {"S": IDLE_PK + sid}, "sk": {"S": "CP"}}
    )["Item"]
    removal = ttl_removal(item, 1)
    assert idle([removal]) == [sid] and idle([{**removal, "userIdentity": {}}]) == []  # only TTL's removal
    assert _handle([removal], model) == {"batchItemFailures": []}
    (run,) = store.list_extraction_runs(sid)
    assert (run.trigger, run.first_seq, run.last_seq, run.status) == ("idle", 1, 1, "succeeded")
    monkeypatch.setenv("EXTRACTION_IDLE_MINUTES", "0")  # off: no timer is started
    store.delete_checkpoint("workflow", key)
    store.append_messages(sid, [{"role": "user", "content": "ok"}])
    _handle(_records(function, inspector_client), model)
    assert store.load_checkpoint("workflow", key) is None
