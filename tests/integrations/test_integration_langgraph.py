"""LangGraph: `SessionStoreSaver` passes LangGraph's own conformance suite, all eight capabilities, on every
backend (memory, DynamoDB, async DynamoDB), and runs real graphs: interrupt and resume from new objects,
time travel, owners apart."""

from __future__ import annotations

import asyncio
import json
import operator
import random
import time
from collections.abc import AsyncGenerator, Callable
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import CapabilityReport
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, Send, interrupt

from store import SessionStore
from store.errors import Conflict
from store.integrations.langgraph import SessionStoreSaver
from tests.conftest import Backend

CAPABILITIES = {"put", "put_writes", "get_tuple", "list", "delete_thread", "delete_for_runs", "copy_thread", "prune"}


@pytest.mark.slow
def test_the_conformance_suite_passes_every_capability(backend: Backend) -> None:
    @checkpointer_test(name=f"SessionStoreSaver[{backend.name}]")
    async def factory() -> AsyncGenerator[SessionStoreSaver, None]:
        yield SessionStoreSaver(backend.make(), runner=backend.runner)

    report: CapabilityReport = backend.run(validate(factory))
    results = dict(report.results)
    assert set(results) == CAPABILITIES
    failures = {name: r.failures for name, r in results.items() if not r.passed}
    assert failures == {}, failures
    assert all(r.detected and r.passed and r.tests_failed == 0 and r.tests_passed > 0 for r in results.values())


# ---------------------------------------------------------------- a real graph


class TravelState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


@tool
def book_flight(to: str) -> str:
    """Book a flight."""
    return f"flight to {to}, seat 12A"


def agent(state: TravelState) -> dict[str, Any]:
    """A scripted model: it asks for the tool, then reports what the tool said."""
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content=f"Done: {last.content}")]}
    call = {"id": "call-1", "name": "book_flight", "args": {"to": "LIS"}}
    return {"messages": [AIMessage(content="", tool_calls=[call])]}


def approve(state: TravelState) -> Command[Any]:
    """A human approves the tool call, or declines it."""
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    call = last.tool_calls[0]
    if interrupt({"question": "Book this flight?", "args": call["args"]}) == "yes":
        return Command(goto="tools")
    refusal = ToolMessage(content="the traveller declined", tool_call_id=call["id"])
    return Command(goto="agent", update={"messages": [refusal]})


def route(state: TravelState) -> str:
    return "approve" if getattr(state["messages"][-1], "tool_calls", None) else END


def travel_graph() -> StateGraph[Any]:
    """An agent that wants to book a flight, a human who approves the tool call (`interrupt`), the tool."""
    builder: StateGraph[Any] = StateGraph(TravelState)
    builder.add_node("agent", agent)
    builder.add_node("approve", approve)
    builder.add_node("tools", ToolNode([book_flight]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["approve", END])
    builder.add_edge("tools", "agent")
    return builder


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_graph_is_interrupted_resumed_elsewhere_and_travels_in_time(backend: Backend, mode: str) -> None:
    builder = travel_graph()
    config: Any = {"configurable": {"thread_id": "trip-1"}}

    def call(graph: Any, method: str, *args: Any) -> Any:
        if mode == "sync":
            return getattr(graph, method)(*args)
        return backend.run(getattr(graph, "a" + method)(*args))

    def history(graph: Any) -> list[Any]:
        if mode == "sync":
            return list(graph.get_state_history(config))
        return list(backend.run(_collect(graph.aget_state_history(config))))

    store = backend.make()
    first = builder.compile(checkpointer=SessionStoreSaver(store, owner="ada", runner=backend.runner))
    paused = call(first, "invoke", {"messages": [HumanMessage("Book me a flight to Lisbon")]}, config)
    assert paused["__interrupt__"][0].value == {"question": "Book this flight?", "args": {"to": "LIS"}}
    assert call(first, "get_state", config).next == ("approve",)

    # another process: new store and saver objects over the same tables
    resumed_graph = builder.compile(
        checkpointer=SessionStoreSaver(backend.twin(store), owner="ada", runner=backend.runner)
    )
    done = call(resumed_graph, "invoke", Command(resume="yes"), config)
    assert done["messages"][-1].content == "Done: flight to LIS, seat 12A"
    assert [m.type for m in done["messages"]] == ["human", "ai", "tool", "ai"]

    # time travel: back to the checkpoint before the agent first ran; the replay asks again, and this
    # time the human declines: the thread's head is the new branch, the old one stays in its history
    before = history(resumed_graph)
    assert [h.next for h in before] == [(), ("agent",), ("tools",), ("approve",), ("agent",), ("__start__",)]
    replay = call(resumed_graph, "invoke", None, before[-2].config)
    assert replay["__interrupt__"][0].value["question"] == "Book this flight?"
    declined = call(resumed_graph, "invoke", Command(resume="no"), config)
    assert [m.content for m in declined["messages"][-2:]] == ["the traveller declined", "Done: the traveller declined"]
    assert call(resumed_graph, "get_state", config).values["messages"][-1].content == "Done: the traveller declined"
    assert len(history(resumed_graph)) > len(before)  # the branch was added; nothing was rewritten
    first_branch = call(resumed_graph, "get_state", before[0].config)
    assert first_branch.values["messages"][-1].content == "Done: flight to LIS, seat 12A"

    # another owner's thread of the same id is another thread: nothing of ada's is seen
    mallory = builder.compile(checkpointer=SessionStoreSaver(store, owner="mallory", runner=backend.runner))
    assert call(mallory, "get_state", config).values == {}
    assert len(history(mallory)) == 0


async def _collect(items: Any) -> list[Any]:
    return [item async for item in items]


class ReportState(TypedDict):
    report: bytes


def test_a_channel_value_over_the_item_limit_spills_to_s3(backend: Backend, request: pytest.FixtureRequest) -> None:
    """A checkpoint whose channel value is larger than a DynamoDB item (1 MB, incompressible) is stored
    (its body in S3 through the store's spill) and read back whole by another process."""
    big = random.Random(7).randbytes(1_000_000)
    builder: StateGraph[Any] = StateGraph(ReportState)
    builder.add_node("write", lambda state: {"report": big})
    builder.add_edge(START, "write")
    config: Any = {"configurable": {"thread_id": "big"}}
    store = backend.make()
    graph = builder.compile(checkpointer=SessionStoreSaver(store, runner=backend.runner))
    assert graph.invoke({"report": b""}, config)["report"] == big
    again = builder.compile(checkpointer=SessionStoreSaver(backend.twin(store), runner=backend.runner))
    assert again.get_state(config).values["report"] == big
    if backend.name != "memory":
        _, s3 = request.getfixturevalue("server_inspectors")
        listed = s3.list_objects_v2(Bucket=store.tables.bucket).get("Contents", [])
        assert any(obj["Size"] > 400 * 1024 for obj in listed)  # the body, in S3


# ---------------------------------------------------------------- rewrites never lose a racing write


def _checkpoint(saver: SessionStoreSaver, thread: str, parent: str | None, step: int) -> str:
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = empty_checkpoint()
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if parent:
        config["configurable"]["checkpoint_id"] = parent
    saver.put(config, checkpoint, {"source": "loop", "step": step, "parents": {}}, {})
    return str(checkpoint["id"])


def _ids(saver: SessionStoreSaver, thread: str) -> list[str]:
    return [t.checkpoint["id"] for t in saver.list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})]


def _drive_until(saver: SessionStoreSaver, flow: Any, stop: Callable[[Any], bool], outcome: Any = None) -> Any:
    """Run `flow` step by step (sending `outcome` first) until the step `stop` picks (returned, not yet
    performed)."""
    while True:
        step = flow.send(outcome)
        if stop(step):
            return step
        outcome = saver._call_sync(step)


def _finish(saver: SessionStoreSaver, flow: Any, step: Any) -> None:
    """Perform `step` and run the rest of `flow`."""
    while True:
        failure: Exception | None = None
        try:
            outcome = saver._call_sync(step)
        except Exception as exc:
            failure = exc
        try:
            step = flow.throw(failure) if failure is not None else flow.send(outcome)
        except StopIteration:
            return


def _is_seal(step: Any) -> bool:
    return getattr(step, "method", "") == "append_messages" and step.args[1][0]["role"] == "lg.seal"


@pytest.mark.parametrize("moment", ["before the seal", "after the seal"])
def test_a_prune_never_loses_a_write_that_races_it(moment: str) -> None:
    """Another process puts a checkpoint while a prune rewrites the thread: just before the prune seals
    the old log (the seal then fails, and the prune copies the newcomer), or after the seal (the writer
    finds it and writes to the new log). Either way nothing is lost, and the old log is gone."""
    store = SessionStore.memory()
    pruner, writer = SessionStoreSaver(store), SessionStoreSaver(store)
    ids = [_checkpoint(pruner, "t", None, 0)]
    for step in (1, 2):
        ids.append(_checkpoint(pruner, "t", ids[-1], step))
    assert _ids(writer, "t") == ids[::-1]  # the writer has read the log: it knows generation 0
    flow = pruner._prune(["t"], "keep_latest")
    seal = _drive_until(pruner, flow, _is_seal)
    if moment == "before the seal":
        racing = _checkpoint(writer, "t", ids[-1], 3)
        _finish(pruner, flow, seal)
    else:
        sealed = pruner._call_sync(seal)
        delete_old = _drive_until(pruner, flow, lambda s: getattr(s, "method", "") == "delete_session", sealed)
        racing = _checkpoint(writer, "t", ids[-1], 3)
        _finish(pruner, flow, delete_old)
    assert _ids(pruner, "t") == [racing, ids[-1]]
    assert _ids(SessionStoreSaver(store), "t") == [racing, ids[-1]]  # a fresh process sees the same
    later = _checkpoint(writer, "t", racing, 4)  # the writer's cached log may be gone: it follows the thread
    assert _ids(SessionStoreSaver(store), "t") == [later, racing, ids[-1]]
    assert store.get_session(pruner.log_session_id("t", 0), owner="langgraph") is None


# ---------------------------------------------------------------- a fan-out


class FanState(TypedDict):
    topic: str
    findings: Annotated[list[str], operator.add]


def fan_out_graph(branches: int, mode: str) -> StateGraph[Any]:
    """A planner sends `branches` researchers off at once (the Send API); each writes its finding, and the
    saver takes every branch's writes of the one superstep concurrently; a summary joins them."""

    def plan(state: FanState) -> dict[str, Any]:
        return {}

    def send(state: FanState) -> list[Send]:
        return [Send("research", {"topic": f"{state['topic']} #{i}", "findings": []}) for i in range(branches)]

    def research_sync(state: FanState) -> dict[str, Any]:
        time.sleep(0.02)  # the branches finish together, so their writes meet at the saver
        return {"findings": [f"found {state['topic']}"]}

    async def research_async(state: FanState) -> dict[str, Any]:
        await asyncio.sleep(0.02)
        return {"findings": [f"found {state['topic']}"]}

    def summary(state: FanState) -> dict[str, Any]:
        return {"findings": [f"{len(state['findings'])} findings"]}

    builder = StateGraph(FanState)
    builder.add_node("plan", plan)
    builder.add_node("research", research_sync if mode == "sync" else research_async)
    builder.add_node("summary", summary)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", send, ["research"])
    builder.add_edge("research", "summary")
    builder.add_edge("summary", END)
    return builder


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_graph_fanning_out_to_eight_branches_completes(backend: Backend, mode: str) -> None:
    """Eight parallel branches write to one thread at the same moment, three runs in a row: every run
    completes with every branch's finding, and the checkpoints after it hold them all."""
    graph = fan_out_graph(8, mode).compile(
        checkpointer=SessionStoreSaver(backend.make(), owner="ada", runner=backend.runner)
    )
    config: Any = {"configurable": {"thread_id": "fan-1"}}
    for run in range(3):
        start = {"topic": f"run {run}", "findings": []}
        done = graph.invoke(start, config) if mode == "sync" else backend.run(graph.ainvoke(start, config))
        found = done["findings"]  # the thread's findings so far: 9 a run (the reducer adds)
        assert len(found) == 9 * (run + 1)
        assert sorted(found[-9:-1]) == sorted(f"found run {run} #{i}" for i in range(8))
        assert found[-1] == f"{8 * (run + 1) + run} findings"
    state = graph.get_state(config) if mode == "sync" else backend.run(graph.aget_state(config))
    assert len(state.values["findings"]) == 27 and state.next == ()


def test_copy_thread_forks_the_thread_with_its_conversation(backend: Backend) -> None:
    """`copy_thread` into a new thread is the store's fork of the thread: every checkpoint and its history,
    the conversation, a thread of its own from then on (the source goes on unchanged)."""
    store = backend.make()
    saver = SessionStoreSaver(store, owner="ada", runner=backend.runner)
    graph = travel_graph().compile(checkpointer=saver)
    source: Any = {"configurable": {"thread_id": "trip-1"}}
    copy: Any = {"configurable": {"thread_id": "trip-2"}}
    graph.invoke({"messages": [HumanMessage("Book me a flight to Lisbon")]}, source)
    graph.invoke(Command(resume="yes"), source)
    saver.copy_thread("trip-1", "trip-2")

    def steps(config: Any) -> list[tuple[Any, list[Any]]]:
        return [(h.next, [m.content for m in h.values.get("messages", [])]) for h in graph.get_state_history(config)]

    assert steps(copy) == steps(source) and len(steps(copy)) == 6
    thread = backend.call(store, "get_session", saver.thread_session_id("trip-2"), owner="ada")
    assert thread.title == "trip-2" and thread.metadata["forked_from"]["session_id"] == saver.thread_session_id(
        "trip-1"
    )
    conversation = backend.call(store, "list_messages", saver.thread_session_id("trip-2"), owner="ada").items
    assert [m.role for m in conversation] == ["human", "ai", "tool", "ai"]
    # the copy goes on by itself: declining in it leaves the source's booking alone
    before = graph.get_state_history(copy)
    graph.invoke(None, list(before)[-2].config)
    graph.invoke(Command(resume="no"), copy)
    assert graph.get_state(copy).values["messages"][-1].content == "Done: the traveller declined"
    assert graph.get_state(source).values["messages"][-1].content == "Done: flight to LIS, seat 12A"


@pytest.mark.parametrize("old_log", ["deleted", "sealed, not yet deleted"])
def test_a_new_checkpointer_resumes_a_thread_from_its_log_and_conversation_and_follows_a_rewrite(
    dyn: Any, old_log: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new process's `get_state` after a run's end is 2 requests: one transaction reads the thread's head
    and state, generation 0's log's head and its state (which says the log's tail, written with the run's
    last checkpoint), then one Query the conversation the checkpoint refers to. Once a prune has rewritten
    the log, the thread's state names generation 1 and the old generation's seal (or its absence) sends the
    reader to the rewritten log."""

    def graph_on(saver: Any) -> Any:
        def step(state: dict[str, Any]) -> dict[str, Any]:
            return {"messages": [AIMessage(content=f"reply {len(state['messages'])}")]}

        builder: Any = StateGraph(TypedDict("S", {"messages": Annotated[list[AnyMessage], add_messages]}))  # type: ignore[operator]
        builder.add_node("step", step)
        builder.add_edge(START, "step")
        builder.add_edge("step", END)
        return builder.compile(checkpointer=saver)

    config: Any = {"configurable": {"thread_id": "resume-2"}}
    writer = SessionStoreSaver(dyn.store, owner="ada")
    for i in range(3):
        graph_on(writer).invoke({"messages": [HumanMessage(f"question {i}")]}, config)
    dyn.requests.clear()
    state = graph_on(SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
    assert len(state.values["messages"]) == 6
    assert dyn.requests.names == ["TransactGetItems", "Query"]
    if old_log != "deleted":  # a rewrite caught between its seal and its delete of the old log
        first_log, delete = writer.log_session_id("resume-2", 0), dyn.store.delete_session
        monkeypatch.setattr(
            dyn.store, "delete_session", lambda sid, **kw: None if sid == first_log else delete(sid, **kw)
        )
    writer.prune(["resume-2"], strategy="keep_latest")
    if old_log != "deleted":
        assert dyn.store.last_messages(writer.log_session_id("resume-2", 0), 1, owner="ada")[0].role == "lg.seal"
    later = graph_on(SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
    assert [m.content for m in later.values["messages"]] == [m.content for m in state.values["messages"]]
    graph_on(writer).invoke({"messages": [HumanMessage("question 3")]}, config)
    latest = graph_on(SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
    assert len(latest.values["messages"]) == 8


def _chat_graph(saver: Any, *, fail: bool = False) -> Any:
    """A scripted tool-calling agent (model, tools, model), a super-step each; `fail`: the tool raises."""

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        if fail:
            raise RuntimeError("the weather service is down")
        return "sunny"

    def model(state: TravelState) -> dict[str, Any]:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(content=f"It is {last.content}.")]}
        call = {"id": f"c{len(state['messages'])}", "name": "weather", "args": {"city": "Lisbon"}}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    builder: StateGraph[Any] = StateGraph(TravelState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([weather], handle_tool_errors=False))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", lambda s: "tools" if s["messages"][-1].tool_calls else END)
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=saver)


def test_a_super_step_is_one_two_item_transaction_and_the_conversation_is_written_at_the_answer(
    dyn: Any, dynamodb_client: Any
) -> None:
    """Each checkpoint is one append of two items (the log's head and the record: no idempotency claim), the
    writes of the task that led to it inside its record (no write of their own); the run's last one, the
    answer, has a third: the log's state, saying the log's tail for a resume. The turn's four messages reach
    the thread's conversation in one append, at the answer; a new checkpointer resumes the whole
    conversation from the checkpoints."""
    saver = SessionStoreSaver(dyn.store, owner="ada")
    calls: list[str] = []

    def counted(name: str) -> Callable[..., Any]:
        method = getattr(saver, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return method(*args, **kwargs)

        return call

    for name in ("put", "put_writes"):
        setattr(saver, name, counted(name))
    graph = _chat_graph(saver)
    config: Any = {"configurable": {"thread_id": "weather"}}
    graph.invoke({"messages": [HumanMessage("Weather in Lisbon?")]}, config)
    written: list[dict[str, Any]] = []
    event = "provide-client-params.dynamodb.TransactWriteItems"
    dynamodb_client.meta.events.register(event, record := lambda params, **_: written.append(params))
    calls.clear()
    try:
        graph.invoke({"messages": [HumanMessage("And now?")]}, config)
    finally:
        dynamodb_client.meta.events.unregister(event, record)
    transactions = [[next(iter(a.values())) for a in w["TransactItems"]] for w in written]
    assert calls.count("put") >= 4 and calls.count("put_writes") >= 3
    assert len(transactions) == calls.count("put") + 1  # every put (with the writes before it) and one view
    assert sorted(len(items) for items in transactions) == [2] * (len(transactions) - 1) + [3]
    thread = saver.thread_session_id("weather")
    views = [t for t in transactions if any(a.get("Item", {}).get("sid", {}).get("S") == thread for a in t)]
    assert len(views) == 1 and transactions.index(views[0]) == len(transactions) - 1
    assert [len(items) for items in transactions][-2] == 3  # the answer's checkpoint, with the log's state
    conversation = dyn.store.list_messages(thread, owner="ada").items
    assert [m.role for m in conversation] == ["human", "ai", "tool", "ai"] * 2
    resumed = _chat_graph(SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
    assert [m.content for m in resumed.values["messages"]] == [c.content["data"]["content"] for c in conversation]


def test_a_run_that_stops_shows_its_conversation_so_far(backend: Backend) -> None:
    """An interrupt or an error ends a run before its answer: the thread's conversation holds what the run
    said until then (the pending tool call), and the rest follows at the next answer."""
    store = backend.make()
    saver = SessionStoreSaver(store, owner="ada", runner=backend.runner)
    travel = travel_graph().compile(checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "trip"}}
    travel.invoke({"messages": [HumanMessage("Book me a flight to Lisbon")]}, config)

    def roles(thread: str) -> list[str]:
        sid = saver.thread_session_id(thread)
        return [m.role for m in backend.call(store, "list_messages", sid, owner="ada").items]

    assert roles("trip") == ["human", "ai"]
    travel.invoke(Command(resume="yes"), config)
    assert roles("trip") == ["human", "ai", "tool", "ai"]
    broken: Any = {"configurable": {"thread_id": "storm"}}
    with pytest.raises(RuntimeError, match="weather service"):
        _chat_graph(saver, fail=True).invoke({"messages": [HumanMessage("Weather?")]}, broken)
    assert roles("storm") == ["human", "ai"]
    done = _chat_graph(saver).invoke({"messages": [HumanMessage("Weather, again?")]}, broken)
    assert roles("storm") == [m.type for m in done["messages"]]


def _latest_checkpoint_bytes(store: Any, backend: Backend, saver: SessionStoreSaver, thread: str) -> int:
    """The size of the stored body of the thread's latest root checkpoint."""
    log = backend.call(store, "list_messages", saver.log_session_id(thread, 0), newest_first=True, owner="ada")
    latest = next(r for r in log.items if r.role.startswith("lg.c."))
    return len(json.dumps(latest.content))


def test_a_checkpoint_does_not_grow_with_the_conversation(backend: Backend) -> None:
    """The root checkpoint refers to the messages its thread's conversation holds instead of repeating them:
    its stored size after 24 turns is that after 2; every checkpoint still reads back whole, from a new
    saver too, and a time-travel fork reads the messages of its own past."""
    store = backend.make()
    saver = SessionStoreSaver(store, owner="ada", runner=backend.runner)
    graph = _chat_graph(saver)
    config: Any = {"configurable": {"thread_id": "long"}}
    sizes = []
    for turn in range(24):
        graph.invoke({"messages": [HumanMessage(f"Weather on day {turn}? " + "x" * 200)]}, config)
        sizes.append(_latest_checkpoint_bytes(store, backend, saver, "long"))
    assert sizes[-1] <= sizes[1] + 64, sizes  # inline, each turn's messages would add about 1.5 KB
    fresh = _chat_graph(SessionStoreSaver(backend.twin(store), owner="ada", runner=backend.runner))
    state = fresh.get_state(config)
    assert [m.content for m in state.values["messages"]] == [
        m.content for m in graph.get_state(config).values["messages"]
    ]
    assert len(state.values["messages"]) == 96
    history = list(fresh.get_state_history(config))
    assert [len(h.values.get("messages", [])) for h in history][:6] == [96, 95, 94, 93, 92, 92]
    early = next(h for h in history if len(h.values.get("messages", [])) == 8 and h.next == ("__start__",))
    replayed = fresh.invoke(None, early.config)  # the third turn again, from its input
    assert len(replayed["messages"]) == 12 and replayed["messages"][:8] == state.values["messages"][:8]


def test_a_rewound_or_copied_conversation_keeps_every_checkpoint_readable(backend: Backend) -> None:
    """A user's rewind of the thread's conversation keeps the line it left as a branch: a new saver reads
    the checkpoints that refer to it from there, and the next turn goes on. A copy into a thread that exists
    takes the messages along (the target's conversation is another one). A checkpoint whose messages were
    popped is a typed Conflict, not a wrong state."""
    store = backend.make()
    saver = SessionStoreSaver(store, owner="ada", runner=backend.runner)
    graph = _chat_graph(saver)
    config: Any = {"configurable": {"thread_id": "rewound"}}
    for turn in range(3):
        graph.invoke({"messages": [HumanMessage(f"Weather, take {turn}?")]}, config)
    before = [m.content for m in graph.get_state(config).values["messages"]]
    thread = saver.thread_session_id("rewound")
    backend.call(store, "rewind_session", thread, 2, owner="ada")
    fresh = _chat_graph(SessionStoreSaver(backend.twin(store), owner="ada", runner=backend.runner))
    assert [m.content for m in fresh.get_state(config).values["messages"]] == before
    after = fresh.invoke({"messages": [HumanMessage("And tomorrow?")]}, config)
    assert [m.content for m in after["messages"][:12]] == before and len(after["messages"]) == 16

    other: Any = {"configurable": {"thread_id": "other"}}
    graph.invoke({"messages": [HumanMessage("Weather elsewhere?")]}, other)
    saver.copy_thread("rewound", "other")
    copied = _chat_graph(SessionStoreSaver(backend.twin(store), owner="ada", runner=backend.runner)).get_state(other)
    assert [m.content for m in copied.values["messages"]] == [m.content for m in after["messages"]]

    popped: Any = {"configurable": {"thread_id": "popped"}}
    graph.invoke({"messages": [HumanMessage("Weather?")]}, popped)
    graph.invoke({"messages": [HumanMessage("Weather again?")]}, popped)
    for _ in range(5):  # the second turn (its checkpoints hold it inline: it was shown after them), and one more
        backend.call(store, "pop_message", saver.thread_session_id("popped"), owner="ada")
    with pytest.raises(Conflict, match="no longer has"):
        _chat_graph(SessionStoreSaver(backend.twin(store), owner="ada", runner=backend.runner)).get_state(popped)


def test_two_processes_taking_turns_on_a_thread_read_each_others_messages(backend: Backend) -> None:
    """Two savers (two Lambda containers) take turns on one thread, each knowing only part of its
    conversation: each reads the messages the other's checkpoints refer to, and the conversation holds every
    message once, in order."""
    store = backend.make()
    graphs = [
        _chat_graph(SessionStoreSaver(s, owner="ada", runner=backend.runner)) for s in (store, backend.twin(store))
    ]
    config: Any = {"configurable": {"thread_id": "shared"}}
    for turn in range(6):
        done = graphs[turn % 2].invoke({"messages": [HumanMessage(f"Weather, turn {turn}?")]}, config)
        assert len(done["messages"]) == 4 * (turn + 1)
    asked = [m.content for m in done["messages"] if m.type == "human"]
    assert asked == [f"Weather, turn {t}?" for t in range(6)]
    saver = SessionStoreSaver(backend.twin(store), owner="ada", runner=backend.runner)
    conversation = backend.call(store, "list_messages", saver.thread_session_id("shared"), owner="ada").items
    assert [c.content["data"]["id"] for c in conversation] == [m.id for m in done["messages"]]


def _plain(value: Any) -> Any:
    """A write's or a channel's value as two checkpointers can compare it (ids and objects apart)."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, BaseMessage):
        return (value.type, value.content)
    return type(value).__name__


def _shapes(saver: Any, config: Any) -> list[tuple[Any, ...]]:
    """Every checkpoint of the thread, newest first: its step, source, messages and pending writes (as a
    sorted list: task ids differ between checkpointers)."""
    return [
        (
            t.metadata.get("step"),
            t.metadata.get("source"),
            _plain(t.checkpoint["channel_values"].get("messages", [])),
            sorted(((channel, repr(_plain(v))) for _, channel, v in t.pending_writes), key=repr),
        )
        for t in saver.list(config)
    ]


def test_a_tasks_writes_folded_into_the_next_checkpoint_read_back_as_its_parents_pending_writes(
    backend: Backend,
) -> None:
    """A task's writes stored in the record of the checkpoint that followed them (one write, not two) read
    back as every checkpointer gives them, LangGraph's own `InMemorySaver` included: the pending writes of
    the checkpoint they were put for, never of the one that holds them; and so after a copy into a thread
    that exists (each becomes a record of its own), after `delete_for_runs` of the run that holds them (the
    writes of a checkpoint kept stay), and after `prune`."""
    from langgraph.checkpoint.memory import InMemorySaver

    store = backend.make()
    saver = SessionStoreSaver(store, owner="ada", runner=backend.runner)
    reference: Any = InMemorySaver()
    trip: Any = {"configurable": {"thread_id": "trip"}}
    chat: Any = {"configurable": {"thread_id": "chat"}}
    for checkpointer in (saver, reference):
        travel: Any = travel_graph().compile(checkpointer=checkpointer)
        travel.invoke({"messages": [HumanMessage("Book me a flight to Lisbon")]}, {**trip, "run_id": _run(1)})
        travel.invoke(Command(resume="yes"), {**trip, "run_id": _run(2)})
        for turn in range(2):
            _chat_graph(checkpointer).invoke({"messages": [HumanMessage(f"Weather {turn}?")]}, chat)
    for config in (trip, chat):
        assert _shapes(saver, config) == _shapes(reference, config)
    log = backend.call(store, "list_messages", saver.log_session_id("chat", 0), limit=1000, owner="ada").items
    folded = [r for r in log if r.role.startswith("lg.c.") and r.content.get("pw")]
    assert len(folded) >= 6  # the writes of a turn's 4 steps, 2 turns (the exact count: the super-step test)
    assert all(w["cp"] == r.content["parent"] for r in folded for w in r.content["pw"])

    before = _shapes(saver, trip)
    saver.copy_thread("trip", "chat")  # into a thread that exists: appended to its log
    assert _shapes(saver, chat) == before + _shapes(reference, chat)
    runs = [t.metadata.get("run_id") for t in saver.list(trip)]
    saver.delete_for_runs([_run(2)])
    assert _shapes(saver, trip) == [s for s, run in zip(before, runs, strict=True) if run != _run(2)]
    assert any(writes for *_, writes in _shapes(saver, trip))
    chat_before = _shapes(saver, chat)
    saver.prune(["chat"], strategy="keep_latest")
    assert _shapes(saver, chat) == chat_before[:1]


def _run(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012}"


def test_an_async_run_folds_its_writes_too(backend: Backend) -> None:
    """`ainvoke` (aput_writes, aput on one event loop) folds a task's writes into the next checkpoint as the
    sync methods do, with the same pending writes as LangGraph's own `InMemorySaver`."""
    from langgraph.checkpoint.memory import InMemorySaver

    store = backend.make()
    saver = SessionStoreSaver(store, owner="ada", runner=backend.runner)
    reference = InMemorySaver()
    chat: Any = {"configurable": {"thread_id": "chat"}}
    for checkpointer in (saver, reference):
        for turn in range(2):
            backend.run(_chat_graph(checkpointer).ainvoke({"messages": [HumanMessage(f"Weather {turn}?")]}, chat))
    assert _shapes(saver, chat) == _shapes(reference, chat)
    log = backend.call(store, "list_messages", saver.log_session_id("chat", 0), limit=1000, owner="ada").items
    assert len([r for r in log if r.role.startswith("lg.c.") and r.content.get("pw")]) >= 6


def _child_of(thread: str, parent: str) -> tuple[Any, Any]:
    """The config a put of a child of `parent` is given, and a new checkpoint."""
    from langgraph.checkpoint.base import empty_checkpoint

    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": parent}}
    return config, empty_checkpoint()


def test_writes_taken_by_a_checkpoint_whose_put_fails_fail_with_it_and_nothing_is_written(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `put_writes` call whose writes a checkpoint took raises what that checkpoint's put raised, and the
    log holds neither (the call may be made again: its writes are then written on their own)."""
    import threading

    from store.errors import StoreUnavailable

    store = backend.make()
    saver = SessionStoreSaver(store, owner="ada", runner=backend.runner)
    parent = _checkpoint(saver, "t", None, 0)
    writes_config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": parent}}
    raised: list[BaseException] = []

    def put_writes() -> None:
        try:
            saver.put_writes(writes_config, [("messages", [AIMessage("hello", id="m1")])], "task-1")
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=put_writes)
    worker.start()
    deadline = time.monotonic() + 5
    while not saver._held._waiting and time.monotonic() < deadline:
        time.sleep(0.001)
    failure = StoreUnavailable("the store is down")
    perform = saver._perform_sync

    def failing(step: Any) -> Any:
        if step.method in ("append_messages", "save_full") and any("pw" in m["content"] for m in step.args[1]):
            raise failure
        return perform(step)

    monkeypatch.setattr(saver, "_perform_sync", failing)
    config, checkpoint = _child_of("t", parent)
    with pytest.raises(StoreUnavailable):
        saver.put(config, checkpoint, {"source": "loop", "step": 1, "parents": {}}, {})
    worker.join(5)
    assert raised == [failure]
    log = backend.call(store, "list_messages", saver.log_session_id("t", 0), owner="ada").items
    assert [r.content.get("id") for r in log] == [parent]
    monkeypatch.setattr(saver, "_perform_sync", perform)
    saver.put_writes(writes_config, [("messages", [AIMessage("hello", id="m1")])], "task-1")
    found = saver.get_tuple(writes_config)
    assert found is not None and [(c, [m.content for m in v]) for _, c, v in found.pending_writes] == [
        ("messages", ["hello"])
    ]


def test_a_new_reader_trusts_the_logs_tail_only_while_the_log_has_not_moved(dyn: Any) -> None:
    """The log's state says its tail as of a run's end. An interrupted run ends too: a new process reads the
    checkpoint and its pending writes (the interrupt) in 2 requests. A checkpoint stored after that (here an
    `update_state`; a run that crashed before its end is the same) moves the log past what the state says,
    and a new reader then reads the log: it gets that checkpoint, never the older one the state holds."""
    config: Any = {"configurable": {"thread_id": "trip"}}
    travel = travel_graph().compile(checkpointer=SessionStoreSaver(dyn.store, owner="ada"))
    travel.invoke({"messages": [HumanMessage("Book me a flight to Lisbon")]}, config)
    dyn.requests.clear()
    elsewhere = travel_graph().compile(checkpointer=SessionStoreSaver(dyn.twin(), owner="ada"))
    paused = elsewhere.get_state(config)
    assert dyn.requests.names == ["TransactGetItems", "Query"]
    assert paused.next == ("approve",) and paused.interrupts[0].value["question"] == "Book this flight?"
    assert [m.type for m in paused.values["messages"]] == ["human", "ai"]
    travel.update_state(config, {"messages": [HumanMessage("Make it an aisle seat")]})
    dyn.requests.clear()
    moved = travel_graph().compile(checkpointer=SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
    assert [m.content for m in moved.values["messages"]][-1] == "Make it an aisle seat"
    assert dyn.requests.names[:2] == ["TransactGetItems", "Query"] and len(dyn.requests.names) > 2
    assert elsewhere.get_state(config).values == moved.values  # a reader that knows the thread reads the log
    log = SessionStoreSaver(dyn.store, owner="ada").log_session_id("trip", 0)
    last = dyn.store.get_session(log, owner="ada").last_seq
    for bogus in ({"seq": last, "checkpoint": "nonsense", "writes": []}, {"seq": last}, ["not", "a", "tail"]):
        dyn.store.save_state(log, bogus, owner="ada")  # what the saver never wrote is not taken for a tail
        fresh = travel_graph().compile(checkpointer=SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
        assert fresh.values == moved.values


def test_a_graph_without_a_conversation_resumes_in_one_request(dyn: Any) -> None:
    """A graph with no `messages` channel: the log's tail is written at the step's checkpoint that triggers no
    node (the run's end), so a new process reads the latest checkpoint in one request (its conversation is
    empty), the same state as LangGraph's own `InMemorySaver` gives."""
    from langgraph.checkpoint.memory import InMemorySaver

    class Count(TypedDict, total=False):
        n: int

    def workflow(saver: Any) -> Any:
        builder: Any = StateGraph(Count)
        builder.add_node("add", lambda s: {"n": s.get("n", 0) + 1})
        builder.add_node("double", lambda s: {"n": s["n"] * 2})
        builder.add_edge(START, "add")
        builder.add_conditional_edges("add", lambda s: "double" if s["n"] < 3 else END)
        builder.add_edge("double", END)
        return builder.compile(checkpointer=saver)

    config: Any = {"configurable": {"thread_id": "count"}}
    reference = workflow(InMemorySaver())
    ours = workflow(SessionStoreSaver(dyn.store, owner="ada"))
    for start in (0, 5):
        assert ours.invoke({"n": start}, config) == reference.invoke({"n": start}, config)
    dyn.requests.clear()
    resumed = workflow(SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
    assert dyn.requests.names == ["TransactGetItems"]  # (an empty conversation: no messages to read)
    expected = reference.get_state(config)
    assert resumed.values == expected.values and resumed.next == expected.next == ()
    assert resumed.metadata == expected.metadata


def test_a_subgraph_interrupted_and_resumed_elsewhere_reads_as_with_langgraphs_own_saver(backend: Backend) -> None:
    """A subgraph's checkpoints and writes (their own namespace) folded and read as the root's are: a run
    interrupted inside the subgraph, resumed by another process, has the same history, state and pending
    interrupt as under LangGraph's `InMemorySaver`."""
    from langgraph.checkpoint.memory import InMemorySaver

    class Inner(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        checked: int

    def check(state: Inner) -> dict[str, Any]:
        answer = interrupt({"question": "Pay 120 EUR?"})
        return {"checked": 1, "messages": [AIMessage(f"payment: {answer}")]}

    inner: Any = StateGraph(Inner)
    inner.add_node("check", check)
    inner.add_edge(START, "check")
    inner.add_edge("check", END)

    def graph(saver: Any) -> Any:
        outer: Any = StateGraph(TravelState)
        outer.add_node("plan", lambda s: {"messages": [AIMessage("Booking LIS")]})
        outer.add_node("pay", inner.compile())
        outer.add_edge(START, "plan")
        outer.add_edge("plan", "pay")
        outer.add_edge("pay", END)
        return outer.compile(checkpointer=saver)

    def seen(g: Any, config: Any) -> Any:
        state = g.get_state(config, subgraphs=True)
        history = [(h.next, _plain(h.values.get("messages", []))) for h in g.get_state_history(config)]
        return state.next, _plain(state.values["messages"]), [i.value for i in state.interrupts], history

    store = backend.make()
    config: Any = {"configurable": {"thread_id": "pay"}}
    reference = graph(InMemorySaver())
    mine = graph(SessionStoreSaver(store, owner="ada", runner=backend.runner))
    for g in (reference, mine):
        g.invoke({"messages": [HumanMessage("Book and pay")]}, config)
    elsewhere = graph(SessionStoreSaver(backend.twin(store), owner="ada", runner=backend.runner))
    assert seen(elsewhere, config) == seen(reference, config)
    assert seen(elsewhere, config)[2] == [{"question": "Pay 120 EUR?"}]
    for g in (reference, elsewhere):
        g.invoke(Command(resume="yes"), config)
    assert seen(elsewhere, config) == seen(reference, config)
    assert _plain(elsewhere.get_state(config).values["messages"])[-1] == ("ai", "payment: yes")


def test_a_new_readers_first_read_takes_a_bounded_part_of_the_conversation(
    dyn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However long a thread's conversation, a resume's first read takes its last RESUME_LAST messages; the
    older ones the checkpoint refers to are read after it (here the bound is made smaller than the thread)."""
    import store.integrations.langgraph as saver_module

    config: Any = {"configurable": {"thread_id": "long"}}
    writer = SessionStoreSaver(dyn.store, owner="ada")
    for turn in range(2):
        _chat_graph(writer).invoke({"messages": [HumanMessage(f"Weather {turn}?")]}, config)
    expected = _plain(_chat_graph(writer).get_state(config).values["messages"])
    monkeypatch.setattr(saver_module, "RESUME_LAST", 3)
    dyn.requests.clear()
    resumed = _chat_graph(SessionStoreSaver(dyn.twin(), owner="ada")).get_state(config)
    assert _plain(resumed.values["messages"]) == expected and len(expected) == 8
    assert dyn.requests.names == ["TransactGetItems", "Query", "GetItem", "Query"]
