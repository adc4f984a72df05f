"""One ordinary turn through each framework adapter (a real agent or graph with a scripted model that calls
`weather(city="Lisbon")` and reports usage), then read as an operator reads it: the HTTP API, `agent-store
sessions show <the name the user chose>`, search and the console in Chromium. Each must show the question,
the tool call's name and arguments, its result, the answer and the token totals as a conversation, with no
framework JSON or encoded blobs."""

from __future__ import annotations

import io
import json
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from playwright.sync_api import expect

from bench import framework_turns as turns
from infra.local.stack import LocalStack, local_stack
from store import SessionStore
from store.tools.cli import main
from tests.api.browser import open_console, shots

OWNER = "ada"
FRAMEWORKS: dict[str, Callable[[SessionStore, str], Callable[[], Any]]] = {
    "strands": lambda store, name: turns.strands_turn(store, batched=False, name=name, owner=OWNER),
    "openai": lambda store, name: turns.openai_turn(store, name=name, owner=OWNER),
    "adk": lambda store, name: turns.adk_turn(store, batched=False, name=name, owner=OWNER),
    "langgraph": lambda store, name: turns.langgraph_turn(store, name=name, owner=OWNER),
    "langchain": lambda store, name: turns.langchain_turn(store, name=name, owner=OWNER),
}
RAW = ("additional_kwargs", "invocation_id", "function_call_output", '"type"', "toolUseId", "msgpack", "__bytes")


def run_turn(turn: Callable[[SessionStore, str], Callable[[], Any]], store: SessionStore, name: str) -> None:
    """Build the framework's agent and run one turn in the session `name`."""
    turn(store, name)()


def two_agents(store: SessionStore) -> None:
    """A Strands session of two agents: the default one and a critic, each with its own turn."""
    from strands import Agent

    from bench.strands_models import ScriptModel
    from store.integrations.strands import session_manager

    class Says(ScriptModel):
        def __init__(self, text: str) -> None:
            self.text = text

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockDelta": {"delta": {"text": self.text}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}

    for agent_id, text in ((None, "A plan."), ("critic", "A critique.")):
        manager = session_manager("team-chat", store, owner=OWNER)
        Agent(agent_id=agent_id, model=Says(text), session_manager=manager, callback_handler=None)("Plan a trip")


def chosen(framework: str) -> str:
    """The session name the user gives their framework."""
    return f"{framework}-chat"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(port=0, cascade=False, prefix="frameworks") as running:
        t = running.tables
        library = SessionStore(t.sessions, t.messages, bucket=t.bucket, client=running.dynamodb, s3_client=running.s3)
        with ThreadPoolExecutor(1) as worker:  # a thread of its own: no event loop (Playwright's) runs in it
            for framework, turn in FRAMEWORKS.items():
                worker.submit(run_turn, turn, library, chosen(framework)).result()
            worker.submit(two_agents, library).result()
        yield running


def api(stack: LocalStack, path: str, **query: Any) -> Any:
    """GET `path` from the stack's API over HTTP, as OWNER (the path's ids encoded, as a client does)."""
    url = stack.api_url + quote(path, safe="/") + ("?" + urlencode(query) if query else "")
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {stack.token(OWNER)}"})
    with urllib.request.urlopen(request, timeout=30) as reply:  # nosec B310: the local stack's own address
        assert reply.status == 200
        return json.loads(reply.read())


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_the_api_serves_the_named_session_as_a_conversation(stack: LocalStack, framework: str) -> None:
    name = chosen(framework)
    listed = [s["id"] for s in api(stack, "/sessions", conversations_only="true", limit=100)["items"]]
    assert name in listed
    session = api(stack, f"/sessions/{name}")
    assert session["usage"]["total_tokens"] == turns.TURN_TOKENS
    messages = api(stack, f"/sessions/{name}/messages")["items"]
    views = [m["canonical"] for m in messages]
    assert [v["role"] for v in views] == ["user", "assistant", "tool", "assistant"]
    parts = [v["parts"] for v in views]
    assert parts[0] == [{"type": "text", "text": f"What is the weather in {turns.CITY}?"}]
    call_part = parts[1][-1]
    assert (call_part["type"], call_part["name"], call_part["arguments"]) == (
        "tool_call",
        "weather",
        {"city": "Lisbon"},
    )
    result = parts[2][0]
    assert result["type"] == "tool_result" and "sunny" in result["content"] and not result.get("is_error")
    assert [p["text"] for p in parts[3] if p["type"] == "text"] == ["It is sunny."]
    assert all(p["type"] != "data" for v in views for p in v["parts"])
    usages = [v["usage"]["total_tokens"] for v in views if v.get("usage")]
    assert sum(usages) == turns.TURN_TOKENS
    assert session.get("title") or session.get("preview")


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_the_cli_shows_the_session_the_user_named(stack: LocalStack, framework: str) -> None:
    out = io.StringIO()
    argv = ["sessions", "show", chosen(framework), "--full", "--api", stack.api_url, "--token", stack.token(OWNER)]
    assert main(argv, out=out) == 0
    shown = out.getvalue()
    for words in ("What is the weather in Lisbon?", 'weather({"city": "Lisbon"})', "sunny", "It is sunny."):
        assert words in shown, (words, shown)
    assert f"total_tokens {turns.TURN_TOKENS}" in shown
    for raw in RAW:
        assert raw not in shown, (raw, shown)


def test_the_cli_lists_conversations_not_internal_sessions(stack: LocalStack) -> None:
    out = io.StringIO()
    argv = ["sessions", "list", "--json", "--api", stack.api_url, "--token", stack.token(OWNER)]
    assert main(argv, out=out) == 0
    ids = {s["id"] for s in json.loads(out.getvalue())["items"]}
    assert {chosen(f) for f in FRAMEWORKS} <= ids
    assert not any(i.endswith(".g0") or i.startswith(("lg-run.", "adk-user.")) for i in ids), ids


def test_search_finds_the_words_of_every_framework_conversation(stack: LocalStack) -> None:
    hits = api(stack, "/search", q="lisbon", limit=50)["items"]
    assert {chosen(f) for f in FRAMEWORKS} <= {h["session_id"] for h in hits}
    for raw in ("invocation_id", "additional_kwargs", "function_call"):
        assert api(stack, "/search", q=raw)["items"] == [], raw


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_the_console_renders_each_framework_as_a_conversation(
    page: Any, stack: LocalStack, framework: str, tmp_path: Path
) -> None:
    open_console(page, stack, OWNER, f"/s/{chosen(framework)}")
    page.wait_for_selector("article.msg")
    messages = page.locator("article.msg")
    assert messages.count() == 4
    assert [messages.nth(i).get_attribute("class") for i in range(4)] == [
        "msg user", "msg assistant", "msg tool", "msg assistant"
    ]  # fmt: skip
    assert messages.nth(0).locator(".text").inner_text() == "What is the weather in Lisbon?"
    call_part = messages.nth(1).locator(".part.call")
    assert call_part.locator(".label").inner_text().lower() == "tool call · weather"
    assert json.loads(call_part.locator("pre").inner_text()) == {"city": "Lisbon"}
    assert "sunny" in messages.nth(2).locator(".part.result").inner_text()
    assert messages.nth(3).locator(".text").inner_text() == "It is sunny."
    visible = page.locator("main").inner_text()
    for raw in RAW:
        assert raw not in visible, raw
    messages.nth(1).locator("details.raw summary").click()  # the framework's own payload, a click away
    assert messages.nth(1).locator("details.raw pre").is_visible()
    if framework == "strands":
        messages.nth(1).locator("details.raw summary").click()
        page.screenshot(path=str(shots(tmp_path) / "framework-transcript.png"), full_page=True)


def test_another_agent_of_a_session_is_shown_under_it(stack: LocalStack, page: Any) -> None:
    listed = [s["id"] for s in api(stack, "/sessions", conversations_only="true", limit=100)["items"]]
    assert "team-chat" in listed and not any(i.startswith("team-chat:") for i in listed), listed
    critic = api(stack, "/sessions", metadata=json.dumps({"strands_parent": "team-chat"}))["items"]
    assert [s["metadata"]["agent_id"] for s in critic] == ["critic"]
    said = [m["canonical"]["parts"][0]["text"] for m in api(stack, f"/sessions/{critic[0]['id']}/messages")["items"]]
    assert said == ["Plan a trip", "A critique."]
    out = io.StringIO()
    argv = ["sessions", "show", "team-chat", "--api", stack.api_url, "--token", stack.token(OWNER)]
    assert main(argv, out=out) == 0
    assert f"other agents: critic ({critic[0]['id']})" in out.getvalue()
    assert "A plan." in out.getvalue()
    open_console(page, stack, OWNER, "/s/team-chat")
    page.wait_for_selector("p.agents a")
    link = page.locator("p.agents a")
    assert link.inner_text() == "critic"
    link.click()
    expect(page.locator("h1")).to_have_text("team-chat / critic")
    expect(page.locator("article.msg .text")).to_have_text(["Plan a trip", "A critique."])


def test_a_langgraph_threads_checkpoints_are_a_step_away(stack: LocalStack, page: Any) -> None:
    out = io.StringIO()
    argv = ["sessions", "show", "langgraph-chat", "--api", stack.api_url, "--token", stack.token(OWNER)]
    assert main(argv, out=out) == 0
    assert "checkpoints: the thread's log, langgraph-chat.g0" in out.getvalue()
    log = api(stack, "/sessions/langgraph-chat.g0/messages")["items"]
    assert log and all(m["canonical"]["dialect"] == "langgraph" and m["canonical"]["parts"] == [] for m in log)
    open_console(page, stack, OWNER, "/s/langgraph-chat")
    page.locator("p.checkpoints a").click()
    expect(page.locator("h1")).to_have_text("langgraph-chat.g0")
    expect(page.locator("article.msg").first).to_be_visible()
