"""One ordinary agent turn through each framework adapter, with a scripted model: the user asks for the
weather in Lisbon, the model calls the `weather` tool, the tool answers "sunny", the model answers from it.
Every model call reports its token usage as its framework does (CALL_USAGE for the call, ANSWER_USAGE for the
answer). Each builder returns a function that runs one turn in the session the user names (`name`), as
`owner`. Used by bench/turn_costs.py and by the conversation tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Annotated, Any, Literal, TypedDict

from store import SessionStore

CITY = "Lisbon"
CALL_USAGE = (120, 11)  # (input, output) tokens of the model call that asks for the tool
ANSWER_USAGE = (150, 9)  # and of the one that answers
TURN_TOKENS = sum(CALL_USAGE) + sum(ANSWER_USAGE)
CALL_USAGE_STRANDS = {"inputTokens": CALL_USAGE[0], "outputTokens": CALL_USAGE[1], "totalTokens": sum(CALL_USAGE)}
ANSWER_USAGE_STRANDS = {
    "inputTokens": ANSWER_USAGE[0],
    "outputTokens": ANSWER_USAGE[1],
    "totalTokens": sum(ANSWER_USAGE),
}


def _lc_usage(used: tuple[int, int]) -> Any:
    """LangChain's `usage_metadata` of a model call."""
    return {"input_tokens": used[0], "output_tokens": used[1], "total_tokens": sum(used)}


def _adk_usage(types: Any, used: tuple[int, int]) -> Any:
    """ADK's (google.genai's) `usage_metadata` of a model call."""
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=used[0], candidates_token_count=used[1], total_token_count=sum(used)
    )


def strands_agent(manager: Any, *, windowed: bool = True) -> Any:
    """A Strands agent whose model calls `weather` and answers from its result (usage reported), kept by
    `manager`; with Strands' default conversation manager (a 40-message window) unless not `windowed`."""
    from strands import Agent, tool
    from strands.agent.conversation_manager import NullConversationManager

    from bench.strands_models import ScriptModel

    class ToolModel(ScriptModel):
        """Asks for the weather tool, then answers from its result."""

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            last = messages[-1]["content"][0]
            yield {"messageStart": {"role": "assistant"}}
            if "toolResult" in last:
                yield {"contentBlockDelta": {"delta": {"text": f"It is {last['toolResult']['content'][0]['text']}."}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
                yield {"metadata": {"usage": ANSWER_USAGE_STRANDS, "metrics": {"latencyMs": 1}}}
                return
            use = {"toolUseId": f"t{len(messages)}", "name": "weather"}
            yield {"contentBlockStart": {"start": {"toolUse": use}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"city": CITY})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            yield {"metadata": {"usage": CALL_USAGE_STRANDS, "metrics": {"latencyMs": 1}}}

    @tool(context=True)
    def weather(city: str, tool_context: Any) -> str:
        """The weather in a city."""
        tool_context.agent.state.set("last_city", city)
        return "sunny"

    window: dict[str, Any] = {} if windowed else {"conversation_manager": NullConversationManager()}
    return Agent(model=ToolModel(), tools=[weather], session_manager=manager, callback_handler=None, **window)


def strands_turn(store: SessionStore, *, batched: bool, name: str = "turns", owner: str = "bench") -> Callable[[], Any]:
    """A Strands agent asking its model, which calls `weather` and answers from its result (usage reported):
    `batched`, at the adapter's default (the turn written when the invocation ends), else a write a message."""
    from store.integrations.strands import session_manager

    extra: dict[str, Any] = {} if batched else {"durability": "message"}
    agent = strands_agent(session_manager(name, store, owner=owner, **extra))
    return lambda: agent(f"What is the weather in {CITY}?")


# ---------------------------------------------------------------- OpenAI Agents


def openai_turn(store: SessionStore, *, name: str = "turns", owner: str = "bench") -> Callable[[], Any]:
    """An OpenAI Agents SDK Runner turn: a function call to `weather`, then the answer (usage reported)."""
    from store.integrations.openai_agents import OpenAIAgentsSession

    session: Any = OpenAIAgentsSession(name, store, owner=owner)
    run = openai_runner()
    return lambda: run(session)


def openai_runner() -> Callable[[Any], Any]:
    """`openai_turn`'s turn on any SDK session: (session) -> the run's result."""
    from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    set_tracing_disabled(True)

    class ToolModel(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            last = input[-1] if isinstance(input, list) else {}
            if last.get("type") == "function_call_output":
                text = ResponseOutputText(type="output_text", text=f"It is {last['output']}.", annotations=[])
                out: Any = ResponseOutputMessage(
                    id="msg", type="message", role="assistant", status="completed", content=[text]
                )
                used = ANSWER_USAGE
            else:
                arguments = json.dumps({"city": CITY})
                out = ResponseFunctionToolCall(type="function_call", call_id="c1", name="weather", arguments=arguments)
                used = CALL_USAGE
            usage = Usage(requests=1, input_tokens=used[0], output_tokens=used[1], total_tokens=sum(used))
            return ModelResponse(output=[out], usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError

    @function_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    agent = Agent(name="assistant", model=ToolModel(), tools=[weather])
    return lambda session: asyncio.run(Runner.run(agent, f"What is the weather in {CITY}?", session=session))


# ---------------------------------------------------------------- Google ADK


def adk_turn(
    store: SessionStore, *, batched: bool, name: str = "turns", owner: str = "bench", create: bool = True
) -> Callable[[], Any]:
    """An ADK Runner turn: a function call to `weather`, then the answer (usage_metadata reported); in a new
    session of that name unless `create` is False (a session that exists: another turn, or a fork)."""
    from store.integrations.adk import StoreSessionService

    service = StoreSessionService(store) if batched else StoreSessionService(store, durability="event")
    return adk_runner_turn(service, name=name, owner=owner, create=create)


def adk_runner_turn(
    service: Any, *, name: str, owner: str, create: bool = True, shared: bool = False
) -> Callable[[], Any]:
    """`adk_turn`'s turn on any ADK session service; with `shared`, its tool also sets `user:` state (which the
    user's other sessions read)."""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.tools.tool_context import ToolContext
    from google.genai import types

    class ToolLlm(BaseLlm):
        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            last = (llm_request.contents[-1].parts or [types.Part()])[0]
            if last.function_response is not None:
                text = f"It is {(last.function_response.response or {}).get('result')}."
                answer = types.Content(role="model", parts=[types.Part(text=text)])
                yield LlmResponse(content=answer, usage_metadata=_adk_usage(types, ANSWER_USAGE))
                return
            call = types.FunctionCall(name="weather", args={"city": CITY})
            asked = types.Content(role="model", parts=[types.Part(function_call=call)])
            yield LlmResponse(content=asked, usage_metadata=_adk_usage(types, CALL_USAGE))

    async def weather(city: str, tool_context: ToolContext) -> str:
        """The weather in a city."""
        tool_context.state["last_city"] = city
        if shared:
            tool_context.state["user:last_city"] = city
        return "sunny"

    agent = LlmAgent(name="assistant", model=ToolLlm(model="scripted"), tools=[weather])
    runner = Runner(app_name="bench", agent=agent, session_service=service)

    if create:
        asyncio.run(service.create_session(app_name="bench", user_id=owner, session_id=name))

    async def turn() -> None:
        message = types.Content(role="user", parts=[types.Part(text=f"What is the weather in {CITY}?")])
        async for _ in runner.run_async(user_id=owner, session_id=name, new_message=message):
            pass

    return lambda: asyncio.run(turn())


# ---------------------------------------------------------------- LangGraph


def langgraph_turn(
    store: SessionStore,
    *,
    durability: Literal["sync", "async", "exit"] = "sync",
    name: str = "turns",
    owner: str = "bench",
) -> Callable[[], Any]:
    """A LangGraph graph with a model node that calls `weather` through a ToolNode (usage_metadata reported)."""
    from langchain_core.messages import HumanMessage

    from store.integrations.langgraph import SessionStoreSaver

    graph = langgraph_graph(SessionStoreSaver(store, owner=owner))
    config: Any = {"configurable": {"thread_id": name}}
    question = {"messages": [HumanMessage(f"What is the weather in {CITY}?")]}
    return lambda: graph.invoke(question, config, durability=durability)


def langgraph_graph(saver: Any) -> Any:
    """The graph of `langgraph_turn` on any checkpointer: a model node that calls `weather` through a
    ToolNode, then answers from its result."""
    from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.graph import START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode, tools_condition

    State = TypedDict("State", {"messages": Annotated[list[AnyMessage], add_messages]})  # noqa: UP013

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    def model(state: State) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(content=f"It is {last.content}.", usage_metadata=_lc_usage(ANSWER_USAGE))]}
        call = {"id": f"c{len(state['messages'])}", "name": "weather", "args": {"city": CITY}}
        return {"messages": [AIMessage(content="", tool_calls=[call], usage_metadata=_lc_usage(CALL_USAGE))]}

    builder: StateGraph[Any] = StateGraph(State)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=saver)


# ---------------------------------------------------------------- LangChain


def langchain_turn(
    store: SessionStore | None,
    *,
    name: str = "turns",
    owner: str = "bench",
    history: Callable[[str], Any] | None = None,
) -> Callable[[], Any]:
    """A RunnableWithMessageHistory turn whose step returns the tool call, its result and the answer; its history
    `history(session_id)`, else `SessionStoreChatMessageHistory` on `store`."""
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.runnables.history import RunnableWithMessageHistory

    from store.integrations.langchain import SessionStoreChatMessageHistory

    def agent(_: Any) -> list[BaseMessage]:
        """An agent step whose output is the turn's messages after the user's (tool call, result, answer)."""
        call = {"id": "c1", "name": "weather", "args": {"city": CITY}}
        return [
            AIMessage(content="", tool_calls=[call], usage_metadata=_lc_usage(CALL_USAGE)),
            ToolMessage(content="sunny", tool_call_id="c1"),
            AIMessage(content="It is sunny.", usage_metadata=_lc_usage(ANSWER_USAGE)),
        ]

    chain = RunnableWithMessageHistory(
        RunnableLambda(agent),
        history or (lambda session_id: SessionStoreChatMessageHistory(session_id, store, owner=owner)),  # type: ignore[arg-type]
    )
    config: Any = {"configurable": {"session_id": name}}
    return lambda: chain.invoke(f"What is the weather in {CITY}?", config)
