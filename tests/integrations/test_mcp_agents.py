"""Frameworks' own MCP clients against the local stack's `/mcp`, each an agent with a scripted model: it stores
a fact through the `remember` tool in one conversation (one connection), and a new agent in another finds it
with `search_memories`; another owner's agent finds nothing of it. Strands `MCPClient`, the OpenAI Agents
SDK's `MCPServerStreamableHttp`, ADK's `McpToolset` (langchain-mcp-adapters does not install beside the lock:
it pins mcp 1.x)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any

import pytest

from bench.strands_models import ScriptModel
from infra.local.stack import LocalStack, local_stack

FACT = "Prefers aisle seats on short flights"
QUESTION = "which seat does the user like on a plane"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with local_stack(port=0, prefix="mcpagents") as running:
        yield running


def mcp_url(stack: LocalStack) -> str:
    return f"{stack.api_url}/mcp"


# ---------------------------------------------------------------- Strands


class StrandsToolScript(ScriptModel):
    """Calls the tool it is given with its arguments, then answers "done"; keeps the tool results it saw."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool, self.arguments = tool, arguments
        self.results: list[Any] = []
        self.called = False

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        yield {"messageStart": {"role": "assistant"}}
        if not self.called:
            self.called = True
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t1", "name": self.tool}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(self.arguments)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        self.results += [b["toolResult"] for b in messages[-1]["content"] if "toolResult" in b]
        yield {"contentBlockDelta": {"delta": {"text": "done"}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def test_a_strands_agent_remembers_and_another_recalls_through_mcp_client(stack: LocalStack) -> None:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from strands import Agent
    from strands.tools.mcp import MCPClient

    def run(owner: str, tool: str, arguments: dict[str, Any], said: str) -> list[Any]:
        token = stack.token(owner)

        def transport() -> Any:
            headers = {"Authorization": f"Bearer {token}"}
            return streamable_http_client(mcp_url(stack), http_client=create_mcp_http_client(headers=headers))

        model = StrandsToolScript(tool, arguments)
        with MCPClient(transport) as client:
            Agent(model=model, tools=client.list_tools_sync(), callback_handler=None)(said)
        return model.results

    kept = run("strands-ada", "remember", {"text": FACT}, "Remember that I like aisle seats")
    assert kept[0]["status"] == "success" and kept[0]["structuredContent"]["value"] == {"text": FACT}
    found = run("strands-ada", "search_memories", {"query": QUESTION}, "Which seat do I like?")
    assert found[0]["structuredContent"]["items"][0]["value"]["text"] == FACT
    stranger = run("strands-bob", "search_memories", {"query": QUESTION}, "Which seat do I like?")
    assert FACT not in json.dumps(stranger)


# ---------------------------------------------------------------- OpenAI Agents SDK


def test_an_openai_agent_remembers_and_another_recalls_through_mcp_server_streamable_http(stack: LocalStack) -> None:
    from agents import Agent, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStreamableHttp

    from tests.integrations.test_framework_memory import OpenAIScripted

    set_tracing_disabled(True)

    async def run(owner: str, tool: str, arguments: dict[str, Any], said: str) -> str:
        params: Any = {"url": mcp_url(stack), "headers": {"Authorization": f"Bearer {stack.token(owner)}"}}
        async with MCPServerStreamableHttp(params=params) as server:
            agent = Agent(name="assistant", model=OpenAIScripted(tool, arguments), mcp_servers=[server])
            return str((await Runner.run(agent, said)).final_output)

    kept = asyncio.run(run("openai-ada", "remember", {"text": FACT}, "remember I like aisle seats"))
    assert FACT in kept and '"namespace": ["notes"]' in kept
    found = asyncio.run(run("openai-ada", "search_memories", {"query": QUESTION}, "which seat do I like?"))
    assert FACT in found
    stranger = asyncio.run(run("openai-bob", "search_memories", {"query": QUESTION}, "which seat do I like?"))
    assert FACT not in stranger and '"items": []' in stranger


# ---------------------------------------------------------------- Google ADK


def test_an_adk_agent_remembers_and_another_recalls_through_mcp_toolset(stack: LocalStack) -> None:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import InMemoryRunner
    from google.adk.tools.mcp_tool import McpToolset
    from google.adk.tools.mcp_tool.mcp_session_manager import StreamableHTTPConnectionParams
    from google.genai import types

    class CallThenSay(BaseLlm):
        """Calls `tool` with `args`, then answers with the tool's result (kept in `seen`)."""

        tool: str
        args: dict[str, Any]
        seen: list[Any]

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            parts = [p for c in llm_request.contents for p in (c.parts or [])]
            results = [p.function_response for p in parts if p.function_response]
            if not results:
                call = types.FunctionCall(name=self.tool, args=self.args)
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
                return
            self.seen.append(results[-1].response)
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="done")]))

    async def run(owner: str, tool: str, arguments: dict[str, Any], said: str) -> list[Any]:
        headers = {"Authorization": f"Bearer {stack.token(owner)}"}
        toolset = McpToolset(connection_params=StreamableHTTPConnectionParams(url=mcp_url(stack), headers=headers))
        model = CallThenSay(model="scripted", tool=tool, args=arguments, seen=[])
        runner = InMemoryRunner(agent=LlmAgent(name="assistant", model=model, tools=[toolset]), app_name="app")
        session = await runner.session_service.create_session(app_name="app", user_id=owner)
        message = types.Content(role="user", parts=[types.Part(text=said)])
        try:
            async for _ in runner.run_async(user_id=owner, session_id=session.id, new_message=message):
                pass
        finally:
            await toolset.close()
        return model.seen

    kept = asyncio.run(run("adk-ada", "remember", {"text": FACT}, "remember my seat"))
    assert kept[0]["structuredContent"]["value"] == {"text": FACT}
    found = asyncio.run(run("adk-ada", "search_memories", {"query": QUESTION}, "which seat do I like?"))
    assert found[0]["structuredContent"]["items"][0]["value"]["text"] == FACT
    stranger = asyncio.run(run("adk-bob", "search_memories", {"query": QUESTION}, "which seat do I like?"))
    assert FACT not in json.dumps(stranger)
