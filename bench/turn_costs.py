"""What one typical agent turn costs through each framework adapter: DynamoDB and S3 requests, and the
write and read capacity they consume (computed from item sizes, bench/meter.py).

    .venv/bin/python -m bench.turn_costs          # prints the table docs/integrations.md holds

A typical turn: the user's message, the assistant's tool call, the tool's result, the final answer and a
state update made by the tool (where the framework has session state). Each framework runs its own
agent loop (Strands `Agent`, OpenAI Agents `Runner`, ADK `Runner`, a LangGraph `StateGraph`, LangChain's
`RunnableWithMessageHistory`) with a scripted model, on a store whose clients are metered. A first turn
is run unmeasured (it creates the sessions), then a second turn is measured: what every later turn costs.
tests/integrations/test_turn_costs.py checks that docs/integrations.md states exactly these numbers.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import boto3

from bench.meter import Meter, Tally
from infra.local.aws import FAKE_CREDENTIALS, REGION, create_tables, local_client, moto_server_process
from store import SessionStore

DOC = Path(__file__).resolve().parent.parent / "docs" / "integrations.md"
CITY = "Lisbon"


@dataclass(frozen=True)
class TurnCost:
    """What one measured turn cost through one adapter."""

    adapter: str
    mode: str
    requests: int
    calls: str
    wcu: float
    rcu: float

    def row(self) -> str:
        return f"| {self.adapter} | {self.mode} | {self.requests} | {self.calls} | {self.wcu:g} | {self.rcu:g} |"


class MeteredStore:
    """A SessionStore on fresh tables whose every request is counted (one boto3 session, one Meter)."""

    def __init__(self, url: str, prefix: str) -> None:
        from store.session_store import s3_config

        reader = local_client(endpoint_url=url)
        tables = create_tables(reader, prefix=prefix, s3=local_client("s3", url, s3_config(path_style=True)))
        session = boto3.Session(
            region_name=REGION,
            aws_access_key_id=FAKE_CREDENTIALS["aws_access_key_id"],
            aws_secret_access_key=FAKE_CREDENTIALS["aws_secret_access_key"],
        )
        self.meter = Meter(session, reader)
        self.url = url
        self.store = SessionStore(
            tables.sessions,
            tables.messages,
            bucket=tables.bucket,
            client=session.client("dynamodb", endpoint_url=url),
            s3_client=session.client("s3", endpoint_url=url, config=s3_config(path_style=True)),
        )

    def turn(self, adapter: str, mode: str, run: Callable[[], Any]) -> TurnCost:
        """Run an unmeasured first turn, then measure the second."""
        run()
        with self.meter.measure() as tally:
            run()
        return _cost(adapter, mode, tally)


def _cost(adapter: str, mode: str, tally: Tally) -> TurnCost:
    return TurnCost(adapter, mode, tally.request_count, tally.describe(), tally.wcu, tally.rcu)


# ---------------------------------------------------------------- Strands


def strands_turn(store: SessionStore, *, batched: bool) -> Callable[[], Any]:
    from strands import Agent, tool

    from bench.strands_models import ScriptModel
    from store.integrations.strands import session_manager

    class ToolModel(ScriptModel):
        """Asks for the weather tool, then answers from its result."""

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            last = messages[-1]["content"][0]
            yield {"messageStart": {"role": "assistant"}}
            if "toolResult" in last:
                yield {"contentBlockDelta": {"delta": {"text": f"It is {last['toolResult']['content'][0]['text']}."}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
                return
            use = {"toolUseId": f"t{len(messages)}", "name": "weather"}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"city": CITY})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}

    @tool(context=True)
    def weather(city: str, tool_context: Any) -> str:
        """The weather in a city."""
        tool_context.agent.state.set("last_city", city)
        return "sunny"

    extra = {"flush_every": 16} if batched else {}
    manager = session_manager("turns", store, owner="bench", **extra)
    agent = Agent(model=ToolModel(), tools=[weather], session_manager=manager, callback_handler=None)
    return lambda: agent(f"What is the weather in {CITY}?")


# ---------------------------------------------------------------- OpenAI Agents


def openai_turn(store: SessionStore) -> Callable[[], Any]:
    from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from store.integrations.openai_agents import OpenAIAgentsSession

    set_tracing_disabled(True)

    class ToolModel(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            last = input[-1] if isinstance(input, list) else {}
            if last.get("type") == "function_call_output":
                text = ResponseOutputText(type="output_text", text=f"It is {last['output']}.", annotations=[])
                out: Any = ResponseOutputMessage(
                    id="msg", type="message", role="assistant", status="completed", content=[text]
                )
            else:
                arguments = json.dumps({"city": CITY})
                out = ResponseFunctionToolCall(type="function_call", call_id="c1", name="weather", arguments=arguments)
            return ModelResponse(output=[out], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError

    @function_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    agent = Agent(name="assistant", model=ToolModel(), tools=[weather])
    session: Any = OpenAIAgentsSession("turns", store, owner="bench")
    return lambda: asyncio.run(Runner.run(agent, f"What is the weather in {CITY}?", session=session))


# ---------------------------------------------------------------- Google ADK


def adk_turn(store: SessionStore, *, batched: bool) -> Callable[[], Any]:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types

    from store.integrations.adk import StoreSessionService

    class ToolLlm(BaseLlm):
        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            last = (llm_request.contents[-1].parts or [types.Part()])[0]
            if last.function_response is not None:
                text = f"It is {(last.function_response.response or {}).get('result')}."
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
                return
            call = types.FunctionCall(name="weather", args={"city": CITY})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))

    async def weather(city: str, tool_context: ToolContext) -> str:
        """The weather in a city."""
        tool_context.state["last_city"] = city
        return "sunny"

    agent = LlmAgent(name="assistant", model=ToolLlm(model="scripted"), tools=[weather])
    service = StoreSessionService(store, flush_every=16) if batched else StoreSessionService(store)
    runner = Runner(app_name="bench", agent=agent, session_service=service)

    asyncio.run(service.create_session(app_name="bench", user_id="bench", session_id="turns"))

    async def turn() -> None:
        message = types.Content(role="user", parts=[types.Part(text=f"What is the weather in {CITY}?")])
        async for _ in runner.run_async(user_id="bench", session_id="turns", new_message=message):
            pass

    return lambda: asyncio.run(turn())


# ---------------------------------------------------------------- LangGraph


def langgraph_turn(store: SessionStore, *, durability: Literal["sync", "async", "exit"] = "sync") -> Callable[[], Any]:
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode, tools_condition

    from store.integrations.langgraph import SessionStoreSaver

    State = TypedDict("State", {"messages": Annotated[list[AnyMessage], add_messages]})  # noqa: UP013

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    def model(state: State) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(content=f"It is {last.content}.")]}
        call = {"id": f"c{len(state['messages'])}", "name": "weather", "args": {"city": CITY}}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    builder: StateGraph[Any] = StateGraph(State)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    graph = builder.compile(checkpointer=SessionStoreSaver(store, owner="bench"))
    config: Any = {"configurable": {"thread_id": "turns"}}
    question = {"messages": [HumanMessage(f"What is the weather in {CITY}?")]}
    return lambda: graph.invoke(question, config, durability=durability)


# ---------------------------------------------------------------- LangChain


def langchain_turn(store: SessionStore) -> Callable[[], Any]:
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.history import RunnableWithMessageHistory

    from store.integrations.langchain import SessionStoreChatMessageHistory

    def agent(_: Any) -> list[BaseMessage]:
        """An agent step whose output is the turn's messages after the user's (tool call, result, answer)."""
        call = {"id": "c1", "name": "weather", "args": {"city": CITY}}
        return [
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="sunny", tool_call_id="c1"),
            AIMessage(content="It is sunny."),
        ]

    chain = RunnableWithMessageHistory(
        RunnableLambda(agent),
        lambda session_id: SessionStoreChatMessageHistory(session_id, store, owner="bench"),
    )
    config: Any = {"configurable": {"session_id": "turns"}}
    return lambda: chain.invoke(f"What is the weather in {CITY}?", config)


# ---------------------------------------------------------------- all of them


def measure(url: str) -> list[TurnCost]:
    """One metered store per adapter and mode on the moto server at `url`."""
    plans: list[tuple[str, str, Callable[[SessionStore], Callable[[], Any]]]] = [
        ("Strands", "per message", lambda s: strands_turn(s, batched=False)),
        ("Strands", "flush_every=16", lambda s: strands_turn(s, batched=True)),
        ("OpenAI Agents", "per call", openai_turn),
        ("ADK", "per event", lambda s: adk_turn(s, batched=False)),
        ("ADK", "flush_every=16", lambda s: adk_turn(s, batched=True)),
        ("LangGraph", "per super-step", langgraph_turn),
        ("LangGraph", 'durability="exit"', lambda s: langgraph_turn(s, durability="exit")),
        ("LangChain", "per call", langchain_turn),
    ]
    costs = []
    for i, (adapter, mode, plan) in enumerate(plans):
        metered = MeteredStore(url, f"turn{i}")
        costs.append(metered.turn(adapter, mode, plan(metered.store)))
    return costs


HEADER = "| Adapter | Mode | Requests | Calls | WCU | RCU |\n|---|---|---|---|---|---|"


def table(costs: list[TurnCost]) -> str:
    return "\n".join([HEADER, *(c.row() for c in costs)])


def documented_table(doc: Path = DOC) -> str:
    """The table between the turn-costs markers of docs/integrations.md."""
    found = re.search(r"<!-- turn-costs -->\n(.*?)\n<!-- /turn-costs -->", doc.read_text(), re.S)
    return found.group(1).strip() if found else ""


@contextmanager
def server() -> Iterator[str]:
    with moto_server_process() as url:
        yield url


def main() -> None:
    with server() as url:
        print(table(measure(url)))


if __name__ == "__main__":
    main()
