"""Memory extraction over the HTTP API: a session's runs, and a run asked for now (inline where the API has a
model, as in the local stack; handed to the extraction function where it has not, as deployed), on the
caller's own sessions only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from functions.api import context
from infra.local.apigw import LambdaContext
from store import Settings
from tests.api.test_api import err, ok
from tests.api_client import call
from tests.conftest import Harness
from tests.extraction_support import Scripted, memories

FACT = memories("The user flies to Lisbon on 10 May.")


@pytest.fixture
def tables(dyn: Harness, dynamodb_client: Any, s3_client: Any) -> Iterator[Any]:
    assert dyn.tables is not None
    yield lambda settings: dyn.tables.store(dynamodb_client, s3_client, settings=settings)
    context.use_store(None)


def _trip() -> None:
    ok(call("POST", "/sessions", json_body={"session_id": "trip"}), 201)
    said = [{"role": "user", "content": "I fly to Lisbon on 10 May."}, {"role": "assistant", "content": "Noted."}]
    ok(call("POST", "/sessions/trip/messages", json_body={"messages": said}), 201)


def test_a_run_asked_for_runs_inline_where_the_api_has_a_model(tables: Any) -> None:
    model = Scripted({"record_facts": [FACT]})
    context.use_store(tables(Settings(extraction_model=model)))
    _trip()
    made = ok(call("POST", "/sessions/trip/memory-runs", json_body={"strategies": ["facts"]}))
    (run,) = made["items"]
    assert run["status"] == "succeeded" and run["session_id"] == "trip" and made["accepted"] is False
    assert [r["run_id"] for r in ok(call("GET", "/sessions/trip/memory-runs"))["items"]] == [run["run_id"]]
    hits = ok(call("GET", "/memories/search", query={"prefix": '["facts"]'}))["items"]
    assert [h["value"]["source"]["session_id"] for h in hits] == ["trip"]  # the id as the owner names it
    err(call("POST", "/sessions/trip/memory-runs", json_body={}, owner="bob"), 404, "not_found")
    err(call("GET", "/sessions/trip/memory-runs", owner="bob"), 404)
    err(call("POST", "/sessions/trip/memory-runs", json_body={"strategies": ["gossip"]}), 422)
    err(call("POST", "/sessions/trip/memory-runs", json_body={"model": "x"}), 422)
    assert len(model.asked) == 1


def test_without_a_model_a_run_is_handed_to_the_extraction_function_or_refused(
    tables: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import functions.api.extraction as route
    import functions.extraction.app as function
    from functions import runtime

    context.use_store(tables(Settings()))
    _trip()
    monkeypatch.delenv("EXTRACTION_FUNCTION", raising=False)
    err(call("POST", "/sessions/trip/memory-runs", json_body={}), 400, "invalid_input")
    monkeypatch.setenv("EXTRACTION_FUNCTION", "stack-extraction")
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    sent: list[dict[str, Any]] = []
    with Stubber(client) as stub:
        stub.add_response(
            "invoke",
            {"StatusCode": 202},
            {"FunctionName": "stack-extraction", "InvocationType": "Event", "Payload": stub_payload(sent)},
        )
        monkeypatch.setattr(route, "_lambda", client)
        answer = ok(call("POST", "/sessions/trip/memory-runs", json_body={"strategies": ["facts"]}), 202)
    assert answer == {"items": [], "accepted": True}
    (payload,) = sent
    assert payload == {"extract": {"owner": "alice", "session_id": "trip", "strategies": ["facts"]}}
    # the extraction function (its own store and model) runs it on the owner's view of the session
    model = Scripted({"record_facts": [FACT]})
    runtime.use_store(tables(Settings(extraction_model=model)))
    done = function.lambda_handler(payload, LambdaContext(timeout_ms=300_000))
    assert [r["status"] for r in done["runs"]] == ["succeeded"]
    (run,) = ok(call("GET", "/sessions/trip/memory-runs"))["items"]
    assert run["trigger"] == "on_demand" and run["changes"][0]["namespace"] == ["facts"]
    stranger = function.lambda_handler({"extract": {"owner": "bob", "session_id": "trip"}}, LambdaContext())
    assert stranger == {"runs": []} and len(model.asked) == 1


class stub_payload:
    """Equal to any payload, keeping what was sent."""

    def __init__(self, sent: list[dict[str, Any]]) -> None:
        self.sent = sent

    def __eq__(self, other: object) -> bool:
        self.sent.append(json.loads(other if isinstance(other, (bytes, str)) else b"{}"))
        return True

    __hash__ = None  # type: ignore[assignment]


def test_an_owner_corrects_an_extracted_memory_over_the_api(tables: Any) -> None:
    model = Scripted({"record_facts": [FACT]})
    context.use_store(tables(Settings(extraction_model=model)))
    _trip()
    ok(call("POST", "/sessions/trip/memory-runs", json_body={"strategies": ["facts"]}))
    (fact,) = ok(call("GET", "/memories/search", query={"prefix": '["facts"]'}))["items"]
    where = {"namespace": '["facts"]', "key": fact["key"]}
    fixed = ok(call("PATCH", "/memories/item", query=where, json_body={"text": "The user flies on 12 May."}))
    assert fixed["value"]["text"] == "The user flies on 12 May." and fixed["value"]["source"]["session_id"] == "trip"
    assert [(h["text"], h["change"]) for h in fixed["value"]["history"]] == [(FACT["memories"][0]["text"], "corrected")]
    err(
        call("PATCH", "/memories/item", query=where, json_body={"text": "Bob's."}, owner="bob"), 404, "memory_not_found"
    )
    for bad in ({"text": ""}, {"text": 5}, {"text": "x", "more": 1}, {}):
        err(call("PATCH", "/memories/item", query=where, json_body=bad), 422)
    err(call("PATCH", "/memories/item", query={**where, "namespace": "facts"}, json_body={"text": "y"}), 400)
    assert ok(call("GET", "/memories/item", query=where))["value"] == fixed["value"]


def test_the_mcp_extract_tool_runs_inline_where_a_model_is_configured_and_lists_the_runs(tables: Any) -> None:
    from tests.api.test_mcp import tool

    model = Scripted({"record_facts": [FACT]})
    context.use_store(tables(Settings(extraction_model=model)))
    _trip()
    made = tool("extract_memories", {"session_id": "trip", "strategies": ["facts"]}, owner="alice")["result"]
    assert not made["isError"], made
    (run,) = made["structuredContent"]["items"]
    assert (
        run["status"] == "succeeded" and run["session_id"] == "trip" and made["structuredContent"]["accepted"] is False
    )
    listed = tool("list_extraction_runs", {"session_id": "trip"}, owner="alice")["result"]["structuredContent"]
    assert [r["run_id"] for r in listed["items"]] == [run["run_id"]]
    found = tool("search_memories", {"namespace_prefix": ["facts"]}, owner="alice")["result"]["structuredContent"]
    assert [h["value"]["source"]["session_id"] for h in found["items"]] == ["trip"]
    refused = tool("extract_memories", {"session_id": "trip"}, owner="bob")["result"]
    assert refused["isError"] and "session_not_found" in refused["content"][0]["text"]
    assert len(model.asked) == 1
