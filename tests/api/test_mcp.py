"""The MCP endpoint (functions/mcp): its handler as API Gateway invokes it (who a request is, scopes, hostile
JSON-RPC, another owner's things), and the local stack's `/mcp` and `agent-store mcp` used by the official
Python SDK's client as a host would."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from functions.api import context
from infra.local.apigw import LambdaContext, http_event, response_body
from infra.local.stack import LocalStack, local_stack
from store import SessionStore
from store.core.scoped_ids import scoped_id
from tests.api.mcp_client import data, over_http, over_stdio, text
from tests.api.test_api_hostile import HOSTILE as HOSTILE_JSON
from tests.conftest import Harness

READING = {
    "search_memories",
    "get_memory",
    "list_namespaces",
    "get_context",
    "search_sessions",
    "search_messages",
    "read_transcript",
    "list_extraction_runs",
}
WRITING = {"remember", "correct_memory", "forget_memory", "extract_memories"}
ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def api(dyn: Harness) -> Iterator[Harness]:
    context.use_store(dyn.store)
    yield dyn
    context.use_store(None)


def post(
    message: Any,
    *,
    owner: str | None = "alice",
    scope: str | None = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> tuple[int, dict[str, str], Any]:
    """One request to the MCP function as API Gateway hands it over: (status, headers, JSON body or None)."""
    from functions.mcp.app import lambda_handler

    claims = None if owner is None else {"sub": owner, **({"scope": scope} if scope else {})}
    body = raw if raw is not None else (None if message is None else json.dumps(message).encode())
    hdrs = {"content-type": "application/json", "accept": ACCEPT, "host": "127.0.0.1:8000", **(headers or {})}
    event = http_event(method, "/mcp", headers=hdrs, body=body, claims=claims)
    response = lambda_handler(event, LambdaContext())
    payload = response_body(response)
    try:
        parsed = json.loads(payload) if payload else None
    except ValueError:
        parsed = payload.decode("utf-8", "replace")
    return int(response["statusCode"]), {k.lower(): v for k, v in response["headers"].items()}, parsed


def tool(name: str, arguments: dict[str, Any], **kw: Any) -> dict[str, Any]:
    """A tools/call's JSON-RPC result (or error), checked to be answered with 200."""
    status, _, body = post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}, **kw
    )
    assert status == 200, (status, body)
    return dict(body)


def listed(**kw: Any) -> set[str]:
    status, _, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, **kw)
    assert status == 200, body
    return {t["name"] for t in body["result"]["tools"]}


def alices(api: Harness) -> str:
    """Alice's session "plans" (as she names it) with a secret in it, and a secret memory of hers."""
    store = api.store
    sid = scoped_id("alice", "plans")
    store.create_session("alice", session_id=sid, title="secret plans")
    store.append_messages(sid, [{"role": "user", "content": "the secret is in Lisbon"}])
    store.put_memory("alice", ["plans"], "k", {"text": "secret window seat"})
    return "plans"


def test_tools_list_every_tool_with_schemas_and_no_owner_argument(api: Harness) -> None:
    status, _, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert status == 200
    tools = {t["name"]: t for t in body["result"]["tools"]}
    assert set(tools) == READING | WRITING
    for name, spec in tools.items():
        assert spec["description"] and spec["outputSchema"]["type"] == "object", name
        assert "owner" not in spec["inputSchema"].get("properties", {}), name  # the owner is the token's
        assert spec["annotations"]["readOnlyHint"] is (name in READING), name


def test_alice_remembers_and_recalls_through_the_handler(api: Harness) -> None:
    sid = alices(api)
    kept = tool("remember", {"text": "Alice's cat is called Miso", "namespace": ["pets"]})["result"]
    assert not kept["isError"] and kept["structuredContent"]["value"] == {"text": "Alice's cat is called Miso"}
    assert api.store.get_memory("alice", ["pets"], kept["structuredContent"]["key"]) is not None
    again = tool("remember", {"text": "Alice's cat is called Miso", "namespace": ["pets"]})["result"]
    assert again["structuredContent"]["key"] == kept["structuredContent"]["key"]  # a retry keeps one memory
    found = tool("search_memories", {"query": "cat name", "mode": "keyword"})["result"]["structuredContent"]
    assert [h["value"]["text"] for h in found["items"]] == ["Alice's cat is called Miso"]
    page = tool("read_transcript", {"session_id": sid})["result"]
    assert page["structuredContent"]["messages"][0]["text"] == "the secret is in Lisbon"
    assert page["content"][0]["text"] == "[1] user: the secret is in Lisbon"
    shown = tool("get_context", {"session_id": sid, "question": "where is the secret"})["result"]
    assert shown["structuredContent"]["session_id"] == sid and "Lisbon" in shown["content"][0]["text"]
    assert shown["structuredContent"]["used_tokens"] <= shown["structuredContent"]["budget_tokens"]
    forgot = tool("forget_memory", {"namespace": ["pets"], "key": kept["structuredContent"]["key"]})["result"]
    assert forgot["structuredContent"]["forgotten"] is True
    assert api.store.get_memory("alice", ["pets"], kept["structuredContent"]["key"]) is None


# every tool, as mallory, aimed at what alice keeps (her session id as she names it, her namespace and key)
AGAINST_ALICE: list[tuple[str, dict[str, Any]]] = [
    ("search_memories", {"query": "secret window seat"}),
    ("search_memories", {"query": "secret", "mode": "keyword", "owner": "alice"}),
    ("search_memories", {"namespace_prefix": ["plans"]}),
    ("get_memory", {"namespace": ["plans"], "key": "k"}),
    ("list_namespaces", {}),
    ("get_context", {"session_id": "plans", "question": "secret"}),
    ("search_sessions", {"query": "secret"}),
    ("search_messages", {"query": "secret", "mode": "keyword"}),
    ("search_messages", {"query": "secret", "session_id": "plans"}),
    ("read_transcript", {"session_id": "plans"}),
    ("read_transcript", {"session_id": scoped_id("alice", "plans")}),
    ("list_extraction_runs", {"session_id": "plans"}),
    ("correct_memory", {"namespace": ["plans"], "key": "k", "text": "mine now"}),
    ("forget_memory", {"namespace": ["plans"], "key": "k"}),
    ("extract_memories", {"session_id": "plans"}),
]


def test_another_owner_reaches_nothing_of_alices_and_writes_nothing(api: Harness) -> None:
    alices(api)
    before = api.snapshot()
    assert {name for name, _ in AGAINST_ALICE} == READING | WRITING - {"remember"}
    for name, arguments in AGAINST_ALICE:
        body = json.dumps(tool(name, arguments, owner="mallory"))
        assert "secret" not in body and "Lisbon" not in body and "alice" not in body, (name, body[:300])
    assert api.snapshot() == before
    # remember writes only into the caller's own memory, whatever the arguments name
    tool("remember", {"text": "mine", "namespace": ["plans"], "key": "k", "owner": "alice"}, owner="mallory")
    assert api.store.get_memory("alice", ["plans"], "k").value == {"text": "secret window seat"}
    assert api.store.get_memory("mallory", ["plans"], "k").value == {"text": "mine"}


def test_a_read_only_token_lists_and_runs_only_the_reading_tools(api: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JWT_SCOPES", "agent-store/full")
    monkeypatch.setenv("JWT_READ_SCOPES", "agent-store/read")
    alices(api)
    assert listed(scope="agent-store/read") == READING
    assert listed(scope="agent-store/read agent-store/full") == READING | WRITING
    before = api.snapshot()
    refused = tool("remember", {"text": "a new fact"}, scope="agent-store/read")
    assert refused.get("error") or refused["result"]["isError"]
    assert api.snapshot() == before
    found = tool("search_memories", {"query": "secret", "mode": "keyword"}, scope="agent-store/read")
    assert found["result"]["structuredContent"]["items"]
    status, _, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, scope="openid")
    assert status == 403 and body["code"] == "insufficient_scope"
    # the API: a read-only token reads, and every write is a 403 that writes nothing
    from functions.api.app import lambda_handler

    def api_call(method: str, path: str, body: Any = None) -> int:
        raw = None if body is None else json.dumps(body).encode()
        claims = {"sub": "alice", "scope": "agent-store/read"}
        event = http_event(method, path, headers={"content-type": "application/json"}, body=raw, claims=claims)
        return int(lambda_handler(event, LambdaContext())["statusCode"])

    assert api_call("GET", "/sessions/plans/messages") == 200
    assert api_call("POST", "/sessions", {"title": "x"}) == 403
    assert api_call("DELETE", "/sessions/plans") == 403
    assert api.snapshot() == before


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("malformed JSON", {"raw": b'{"jsonrpc": "2.0", "id": 1, "method": '}),
    ("not UTF-8", {"raw": b"\xff\xfe{}"}),
    ("a batch", {"message": [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}] * 3}),
    ("an empty batch", {"message": []}),
    ("no method", {"message": {"jsonrpc": "2.0", "id": 1}}),
    ("an unknown method", {"message": {"jsonrpc": "2.0", "id": 1, "method": "tools/destroy"}}),
    ("a wrong protocol version", {"headers": {"mcp-protocol-version": "1999-01-01"}}),
    ("a body that is not JSON-RPC", {"message": {"hello": "world"}}),
    ("params of the wrong type", {"message": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}}),
    ("text/plain", {"headers": {"content-type": "text/plain"}}),
    ("no Accept", {"headers": {"accept": "text/html"}}),
    ("GET", {"method": "GET", "message": None}),
    ("DELETE", {"method": "DELETE", "message": None}),
]


@pytest.mark.parametrize(("why", "how"), HOSTILE, ids=[w for w, _ in HOSTILE])
def test_hostile_requests_get_a_4xx_or_a_json_rpc_error_and_write_nothing(
    api: Harness, why: str, how: dict[str, Any]
) -> None:
    alices(api)
    before = api.snapshot()
    message = how.get("message", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    status, _, body = post(message, raw=how.get("raw"), headers=how.get("headers"), method=how.get("method", "POST"))
    assert status < 500, (why, status, body)
    if status == 200:
        answers = body if isinstance(body, list) else [body]
        assert answers and all("error" in a for a in answers), (why, body)
    assert "secret" not in json.dumps(body)
    assert api.snapshot() == before


def test_unknown_tools_oversized_arguments_and_bad_values_are_tool_errors(api: Harness) -> None:
    before = api.snapshot()
    unknown = tool("drop_tables", {})
    assert unknown.get("error") or unknown["result"]["isError"]
    bad: list[tuple[str, dict[str, Any]]] = [
        ("remember", {"text": "x" * 20_000}),
        ("remember", {"text": "fine", "namespace": ["a"] * 9}),
        ("remember", {"text": "fine", "namespace": ["\x00bad"]}),
        ("search_memories", {"query": "q" * 5000}),
        ("get_context", {"session_id": "nope", "budget_tokens": 10}),
        ("get_context", {"session_id": "../etc"}),
        ("read_transcript", {"session_id": "nope"}),
        ("search_memories", {"query": "q", "limit": 0}),
        ("search_memories", {"query": "q", "cursor": "garbage"}),
    ]
    for name, arguments in bad:
        result = tool(name, arguments)["result"]
        assert result["isError"], (name, result)
    assert api.snapshot() == before
    status, _, body = post(None, raw=b"{" + b" " * (5 * 1024 * 1024) + b"}")
    assert status == 413 and body["code"] == "payload_too_large"


def test_without_a_verified_token_nothing_reaches_the_sdk(api: Harness) -> None:
    status, headers, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, owner=None)
    assert status == 401 and body["code"] == "unauthorized" and headers["www-authenticate"] == "Bearer"


# ---------------------------------------------------------------- the local stack, as hosts use it


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(port=0, prefix="mcp") as running:  # its own tables: another module's stack may be up
        yield running


def _session(stack: LocalStack, token: str, messages: list[dict[str, Any]]) -> str:
    from tests.api.test_local_stack import http

    status, _, body = http("POST", f"{stack.api_url}/sessions", token=token, body={"title": "trip"})
    assert status == 201
    sid = str(json.loads(body)["id"])
    assert http("POST", f"{stack.api_url}/sessions/{sid}/messages", token=token, body={"messages": messages})[0] == 201
    return sid


def test_the_sdk_client_remembers_in_one_session_and_recalls_in_another(stack: LocalStack) -> None:
    token, url = stack.token("mcp-alice"), stack.api_url + "/mcp"
    sid = _session(stack, token, [{"role": "user", "content": "Book me a flight to Porto on Friday"}])

    async def first() -> None:
        async with over_http(url, token) as mcp:
            assert {t.name for t in (await mcp.list_tools()).tools} == READING | WRITING
            kept = data(await mcp.call_tool("remember", {"text": "Prefers aisle seats on short flights"}))
            assert kept["namespace"] == ["notes"]

    async def second() -> None:
        async with over_http(url, token) as mcp:
            found = data(await mcp.call_tool("search_memories", {"query": "which seat does the user like"}))
            assert [h["value"]["text"] for h in found["items"]][:1] == ["Prefers aisle seats on short flights"]
            shown = await mcp.call_tool("get_context", {"session_id": sid, "question": "seat for the flight"})
            assert "Porto" in text(shown) and "aisle" in text(shown)
            templates = {t.uri_template for t in (await mcp.list_resource_templates()).resource_templates}
            assert "agent-store://sessions/{session_id}/transcript" in templates
            read = await mcp.read_resource(f"agent-store://sessions/{sid}/transcript")
            assert "Porto" in read.contents[0].text
            notes = await mcp.read_resource("agent-store://memories/notes")
            assert "aisle" in notes.contents[0].text
            deadline = time.monotonic() + 30
            while True:  # the cascade indexes the session's messages within seconds
                hits = data(await mcp.call_tool("search_messages", {"query": "flight to Porto"}))
                if hits["items"] or time.monotonic() > deadline:
                    break
                await anyio.sleep(0.5)
            assert hits["items"][0]["session_id"] == sid and hits["items"][0]["seq"] == 1

    anyio.run(first)
    anyio.run(second)

    async def other_owner() -> None:
        async with over_http(url, stack.token("mcp-mallory")) as mcp:
            found = data(await mcp.call_tool("search_memories", {"query": "aisle seats"}))
            assert found["items"] == []
            refused = await mcp.call_tool("read_transcript", {"session_id": sid})
            assert refused.is_error and "Porto" not in text(refused)

    anyio.run(other_owner)


def test_agent_store_mcp_over_stdio_acts_as_the_tokens_owner(stack: LocalStack) -> None:
    token = stack.token("stdio-alice")
    env = {"AGENT_STORE_API": stack.api_url, "AGENT_STORE_TOKEN": token}

    async def use() -> None:
        async with over_stdio(env) as mcp:
            kept = data(await mcp.call_tool("remember", {"text": "Works from Lisbon", "namespace": ["facts"]}))
            assert kept["namespace"] == ["facts"]
            found = data(await mcp.call_tool("search_memories", {"query": "where does the user work"}))
            assert found["items"][0]["value"]["text"] == "Works from Lisbon"
        async with over_stdio(env, "--read-only") as mcp:
            assert {t.name for t in (await mcp.list_tools()).tools} == READING

    anyio.run(use)
    from tests.api.test_local_stack import http

    status, _, body = http("GET", f"{stack.api_url}/memories/search?q=Lisbon&mode=keyword", token=token)
    assert status == 200 and json.loads(body)["items"][0]["value"]["text"] == "Works from Lisbon"


def test_the_stacks_mcp_refuses_missing_malformed_expired_and_foreign_tokens(stack: LocalStack) -> None:
    from infra.local import devtoken
    from tests.api.test_local_stack import http

    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": ACCEPT}
    tokens = {
        "none": None,
        "malformed": "x.y",
        "expired": devtoken.issue(stack.secret, "alice", now=time.time() - 7200, ttl=60),
        "foreign": devtoken.issue(devtoken.new_secret(), "alice"),  # signed by another issuer's key
    }
    for name, token in tokens.items():
        status, answer_headers, raw = http("POST", f"{stack.api_url}/mcp", token=token, body=listing, headers=headers)
        assert status == 401 and json.loads(raw)["code"] == "unauthorized", name
        assert answer_headers.get("WWW-Authenticate") == "Bearer", name
    good = stack.token("alice")
    status, _, raw = http("POST", f"{stack.api_url}/mcp", token=good, body=listing, headers=headers)
    assert status == 200 and {t["name"] for t in json.loads(raw)["result"]["tools"]} == READING | WRITING
    # a web page whose name was rebound to 127.0.0.1: refused by its Host, token or not
    rebound = {**headers, "Host": "evil.example:80"}
    assert http("POST", f"{stack.api_url}/mcp", token=good, body=listing, headers=rebound)[0] in (403, 421)


# the API's hostile JSON values (tests/api/test_api_hostile.py), placed (@) where MCP tool arguments take values
ARGUMENT_BODIES = [
    ("remember", '{"text": "fine", "namespace": ["n"], "key": @}'),
    ("remember", '{"text": @}'),
    ("search_memories", '{"query": "q", "filter": {"m": @}}'),
    ("correct_memory", '{"namespace": ["n"], "key": "k", "text": @}'),
    ("get_context", '{"session_id": "plans", "budget_tokens": @}'),
    ("read_transcript", '{"session_id": "plans", "after_seq": @}'),
]


@pytest.mark.parametrize("value", sorted(HOSTILE_JSON))
@pytest.mark.parametrize(("name", "template"), ARGUMENT_BODIES, ids=[f"{n}:{t[:24]}" for n, t in ARGUMENT_BODIES])
def test_hostile_json_in_tool_arguments_is_refused_and_writes_nothing(
    api: Harness, value: str, name: str, template: str
) -> None:
    alices(api)
    api.store.put_memory("alice", ["n"], "k", {"text": "kept"})
    before = api.snapshot()
    arguments = template.replace("@", HOSTILE_JSON[value])
    params = f'{{"name": "{name}", "arguments": {arguments}}}'
    raw = f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {params}}}'
    status, _, body = post(None, raw=raw.encode())
    assert status < 500, (status, body)
    if status == 200:
        assert "error" in body or body["result"]["isError"], body
    assert api.snapshot() == before


def test_every_tool_on_the_memory_backend_and_dynamodb_in_process(remembering_store: SessionStore) -> None:
    """The server over each backend (the official SDK's in-process client): every tool once as ada, whose view is
    scoped as the function scopes it; bob's server sees none of it."""
    from mcp.client import Client

    from store.backends.scoped import ScopedBackend
    from store.mcp import McpCaller, build_server

    def view(owner: str) -> McpCaller:
        scoped = SessionStore(
            backend=ScopedBackend(remembering_store.backend, owner), settings=remembering_store.settings
        )
        return McpCaller(owner, scoped)

    ada = view("ada")
    ada.store.create_session("ada", session_id="trip")
    ada.store.append_messages("trip", [{"role": "user", "content": "I am flying to Porto on Friday"}])
    ada.store.index_messages("trip")

    async def use(me: McpCaller) -> dict[str, Any]:
        got: dict[str, Any] = {}
        calls: list[tuple[str, dict[str, Any]]] = [
            ("remember", {"text": "Prefers aisle seats", "namespace": ["prefs"], "key": "seat"}),
            ("correct_memory", {"namespace": ["prefs"], "key": "seat", "text": "Prefers window seats"}),
            ("get_memory", {"namespace": ["prefs"], "key": "seat"}),
            ("search_memories", {"query": "which seat"}),
            ("list_namespaces", {}),
            ("get_context", {"session_id": "trip", "question": "when is the flight"}),
            ("search_sessions", {"query": "Porto"}),
            ("search_messages", {"query": "flight to Porto"}),
            ("read_transcript", {"session_id": "trip"}),
            ("list_extraction_runs", {"session_id": "trip"}),
            ("forget_memory", {"namespace": ["prefs"], "key": "other"}),
        ]
        async with Client(build_server(me)) as mcp:
            for name, arguments in calls:
                result = await mcp.call_tool(name, arguments)
                got[name] = {"error": result.is_error, "data": result.structured_content, "text": text(result)}
        return got

    mine = anyio.run(use, ada)
    assert mine["get_memory"]["data"]["value"]["text"] == "Prefers window seats"
    assert mine["search_memories"]["data"]["items"][0]["key"] == "seat"
    assert mine["list_namespaces"]["data"]["items"] == [["prefs"]]
    assert "Porto" in mine["get_context"]["text"]
    assert mine["search_sessions"]["data"]["items"][0]["session_id"] == "trip"
    assert mine["search_messages"]["data"]["items"][0]["session_id"] == "trip"
    assert mine["read_transcript"]["data"]["messages"][0]["text"] == "I am flying to Porto on Friday"
    assert mine["list_extraction_runs"]["data"]["items"] == []
    assert not any(r["error"] for r in mine.values()), mine
    theirs = anyio.run(use, view("bob"))
    for name in ("get_context", "read_transcript", "list_extraction_runs"):
        assert theirs[name]["error"] and "session_not_found" in theirs[name]["text"], name
    assert theirs["search_sessions"]["data"]["items"] == [] and theirs["search_messages"]["data"]["items"] == []
    assert [h["value"]["text"] for h in theirs["search_memories"]["data"]["items"]] == ["Prefers window seats"]
    assert remembering_store.get_memory("ada", ["prefs"], "seat").value["text"] == "Prefers window seats"
