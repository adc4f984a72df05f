"""Extraction's models on recorded answers in the real APIs' shapes: Bedrock's Converse through botocore's
Stubber (the service model validates every request and answer), and an OpenAI-compatible endpoint as a local
server on 127.0.0.1 replaying chat completions as those servers send them. Each failure the issue names has its
outcome: throttling and timeouts retried with backoff, a malformed or cut answer asked again, a refusal ends the
run, a rejected request is not retried; in every failed run nothing is written."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from store import SessionStore, Settings
from store.embeddings import WordLlamaEmbedder
from store.extraction import (
    BedrockConverseModel,
    ModelOutputInvalid,
    ModelRefused,
    ModelRejected,
    ModelRequest,
    ModelThrottled,
    ModelTimeout,
    ModelUnavailable,
    OpenAICompatibleModel,
)
from tests.extraction_support import Replay, completion

FACT = {"memories": [{"text": "The user flies to Lisbon on 10 May.", "evidence": [1]}]}
REQUEST = ModelRequest(
    "Keep facts.", "<conversation>\n[1] user: hi\n</conversation>", {"type": "object"}, "record_facts"
)


def _store() -> tuple[SessionStore, str]:
    store = SessionStore.memory(Settings(embedder=WordLlamaEmbedder()))
    session = store.create_session("alice")
    store.append_messages(session.id, [{"role": "user", "content": "I fly to Lisbon on 10 May."}])
    return store, session.id


# --- Bedrock Converse -------------------------------------------------------------------------------------


def _converse(content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": 412, "outputTokens": 58, "totalTokens": 470},
        "metrics": {"latencyMs": 812},
    }


def _tool(data: dict[str, Any], name: str = "record_facts") -> list[dict[str, Any]]:
    return [{"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": name, "input": data}}]


@pytest.fixture
def bedrock() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


MODEL_ID = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_converse_is_asked_for_the_schema_as_a_forced_tool_and_its_input_is_the_answer(bedrock: Any) -> None:
    client, stub = bedrock
    expected = {
        "modelId": MODEL_ID,
        "system": [{"text": "Keep facts."}],
        "messages": [{"role": "user", "content": [{"text": REQUEST.prompt}]}],
        "inferenceConfig": {"maxTokens": 2000, "temperature": 0},
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "record_facts", "description": ANY, "inputSchema": {"json": {"type": "object"}}}}
            ],
            "toolChoice": {"tool": {"name": "record_facts"}},
        },
    }
    stub.add_response("converse", _converse(_tool(FACT)), expected)
    reply = BedrockConverseModel(MODEL_ID, client)(REQUEST)
    assert reply.data == FACT and (reply.input_tokens, reply.output_tokens, reply.model_id) == (412, 58, MODEL_ID)


@pytest.mark.parametrize(
    ("code", "status", "error"),
    [
        ("ThrottlingException", 429, ModelThrottled),
        ("ModelTimeoutException", 408, ModelTimeout),
        ("ServiceUnavailableException", 503, ModelUnavailable),
        ("InternalServerException", 500, ModelUnavailable),
        ("ModelNotReadyException", 429, ModelUnavailable),
        ("ValidationException", 400, ModelRejected),
        ("AccessDeniedException", 403, ModelRejected),
        ("ResourceNotFoundException", 404, ModelRejected),
    ],
)
def test_each_converse_error_is_a_typed_model_error(bedrock: Any, code: str, status: int, error: type) -> None:
    client, stub = bedrock
    stub.add_client_error("converse", service_error_code=code, service_message="m", http_status_code=status)
    with pytest.raises(error) as raised:
        BedrockConverseModel(MODEL_ID, client)(REQUEST)
    assert code in str(raised.value) and raised.value.__cause__ is None  # botocore's error does not travel


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (_converse([{"text": "Sorry, I can't help with that."}], "guardrail_intervened"), ModelRefused),
        (_converse([{"text": "The response was filtered."}], "content_filtered"), ModelRefused),
        (_converse([{"text": '{"memories": [{"te'}], "max_tokens"), ModelOutputInvalid),
        (_converse([{"text": "Here are the facts: none."}], "end_turn"), ModelOutputInvalid),
        (_converse(_tool(FACT, name="something_else")), ModelOutputInvalid),
    ],
)
def test_a_refused_cut_or_toolless_converse_answer_is_named(bedrock: Any, answer: dict[str, Any], error: type) -> None:
    client, stub = bedrock
    stub.add_response("converse", answer)
    with pytest.raises(error):
        BedrockConverseModel(MODEL_ID, client)(REQUEST)


def test_a_throttled_run_backs_off_and_succeeds_within_its_budget(bedrock: Any) -> None:
    client, stub = bedrock
    store, sid = _store()
    stub.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    stub.add_response("converse", _converse(_tool(FACT)))
    started = time.perf_counter()
    (run,) = store.extract_memories(sid, strategies=["facts"], model=BedrockConverseModel(MODEL_ID, client))
    assert (run.status, run.attempts, run.model_calls, run.input_tokens) == ("succeeded", 2, 1, 412)
    assert time.perf_counter() - started >= 0.5  # it backed off (0.5 to 1 s) before asking again
    assert [h.value["source"]["model"] for h in store.search_memories("alice", ("facts",)).items] == [MODEL_ID]


def test_a_model_that_keeps_timing_out_fails_the_run_with_nothing_written(bedrock: Any) -> None:
    client, stub = bedrock
    store, sid = _store()
    for _ in range(3):
        stub.add_client_error("converse", service_error_code="ModelTimeoutException", http_status_code=408)
    (run,) = store.extract_memories(sid, strategies=["facts"], model=BedrockConverseModel(MODEL_ID, client))
    assert (run.status, run.error, run.attempts, run.model_calls) == ("failed", "timeout", 3, 0)
    assert store.search_memories("alice", ()).items == []


def test_a_rejected_request_is_not_retried_and_a_cut_answer_is_asked_again(bedrock: Any) -> None:
    client, stub = bedrock
    store, sid = _store()
    stub.add_client_error("converse", service_error_code="AccessDeniedException", http_status_code=403)
    (run,) = store.extract_memories(sid, strategies=["facts"], model=BedrockConverseModel(MODEL_ID, client))
    assert (run.status, run.error, run.attempts) == ("failed", "rejected", 1)
    stub.add_response("converse", _converse([{"text": '{"memories": [{"te'}], "max_tokens"))
    stub.add_response("converse", _converse(_tool(FACT)))
    (run,) = store.extract_memories(sid, strategies=["facts"], model=BedrockConverseModel(MODEL_ID, client))
    assert (run.status, run.attempts, run.model_calls, run.input_tokens) == ("succeeded", 2, 2, 824)  # both cost


# --- OpenAI-compatible endpoints --------------------------------------------------------------------------


@pytest.fixture
def endpoint() -> Iterator[Replay]:
    replay = Replay()
    try:
        yield replay
    finally:
        replay.close()


def test_the_endpoint_is_asked_for_strict_json_of_the_schema_and_its_content_is_the_answer(endpoint: Replay) -> None:
    endpoint.answers.append((200, completion(json.dumps(FACT)), 0))
    model = OpenAICompatibleModel(endpoint.url, "qwen2.5:7b-instruct", api_key="sk-local")
    reply = model(REQUEST)
    assert reply.data == FACT and (reply.input_tokens, reply.output_tokens) == (300, 40)
    sent = endpoint.requests[0]
    assert sent["model"] == "qwen2.5:7b-instruct" and sent["temperature"] == 0 and sent["max_tokens"] == 2000
    assert sent["messages"] == [
        {"role": "system", "content": "Keep facts."},
        {"role": "user", "content": REQUEST.prompt},
    ]
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "record_facts", "schema": {"type": "object"}, "strict": True},
    }
    assert endpoint.headers[0]["Authorization"] == "Bearer sk-local"


def test_a_json_object_endpoint_gets_the_schema_in_its_instructions(endpoint: Replay) -> None:
    endpoint.answers.append((200, completion("```json\n" + json.dumps(FACT) + "\n```"), 0))
    model = OpenAICompatibleModel(endpoint.url, "llama3.1", response_format="json_object")
    assert model(REQUEST).data == FACT  # a fenced answer, as small local models give it
    sent = endpoint.requests[0]
    assert sent["response_format"] == {"type": "json_object"} and '{"type": "object"}' in sent["messages"][0]["content"]
    assert "Authorization" not in endpoint.headers[0]


RATE_LIMITED = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (429, RATE_LIMITED, ModelThrottled),
        (500, {"error": {"message": "model crashed", "type": "server_error"}}, ModelUnavailable),
        (503, "<html>Bad gateway</html>", ModelUnavailable),
        (504, "", ModelTimeout),
        (400, {"error": {"message": "context length exceeded", "type": "invalid_request_error"}}, ModelRejected),
        (401, {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}, ModelRejected),
        (200, "not json", ModelUnavailable),
        (200, completion(None, refusal="I'm sorry, I can't help with that."), ModelRefused),
        (200, completion("", finish="content_filter"), ModelRefused),
        (200, completion('{"memories": [{"text": "The user fl', finish="length"), ModelOutputInvalid),
        (200, completion("Sure! The user flies to Lisbon."), ModelOutputInvalid),
        (200, completion("[1, 2]"), ModelOutputInvalid),
    ],
)
def test_each_endpoint_failure_is_a_typed_model_error(endpoint: Replay, status: int, body: Any, error: type) -> None:
    endpoint.answers.append((status, body, 0))
    with pytest.raises(error):
        OpenAICompatibleModel(endpoint.url, "m")(REQUEST)


def test_an_endpoint_that_does_not_answer_in_time_is_a_timeout_and_one_that_is_down_is_unavailable(
    endpoint: Replay,
) -> None:
    endpoint.answers.append((200, completion(json.dumps(FACT)), 1.5))
    with pytest.raises(ModelTimeout):
        OpenAICompatibleModel(endpoint.url, "m", timeout=0.3)(REQUEST)
    down = endpoint.url
    endpoint.close()
    with pytest.raises(ModelUnavailable):
        OpenAICompatibleModel(down, "m")(REQUEST)


def test_a_run_on_a_local_endpoint_retries_a_bad_answer_and_writes_the_facts(endpoint: Replay) -> None:
    store, sid = _store()
    endpoint.answers += [(200, completion("Sure! Here you go"), 0), (200, completion(json.dumps(FACT)), 0)]
    (run,) = store.extract_memories(sid, strategies=["facts"], model=OpenAICompatibleModel(endpoint.url, "qwen"))
    assert (run.status, run.attempts, run.model_calls, run.input_tokens, run.output_tokens) == (
        "succeeded",
        2,
        2,
        600,
        80,
    )
    (fact,) = store.search_memories("alice", ("facts",)).items
    assert (
        fact.value["source"]["model"] == "qwen"
        and "[1] user: I fly to Lisbon" in endpoint.requests[0]["messages"][1]["content"]
    )


def test_a_refusing_endpoint_ends_the_run_at_once_with_nothing_written(endpoint: Replay) -> None:
    store, sid = _store()
    endpoint.answers.append((200, completion(None, refusal="I can't help with that."), 0))
    (run,) = store.extract_memories(sid, strategies=["facts"], model=OpenAICompatibleModel(endpoint.url, "m"))
    assert (run.status, run.error, run.attempts) == ("refused", "refused", 1)
    assert store.search_memories("alice", ()).items == [] and endpoint.answers == []


def test_bad_model_configuration_is_refused_at_once() -> None:
    from store import InvalidInput

    with pytest.raises(InvalidInput):
        OpenAICompatibleModel("file:///etc/passwd", "m")
    with pytest.raises(InvalidInput):
        OpenAICompatibleModel("http://x", "")
    with pytest.raises(InvalidInput):
        OpenAICompatibleModel("http://x", "m", timeout=0)
    with pytest.raises(InvalidInput):
        BedrockConverseModel("")
