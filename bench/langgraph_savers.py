"""LangGraph checkpointers side by side: this store's `SessionStoreSaver` and `langgraph-checkpoint-aws`'s
`DynamoDBSaver` (with its S3 offload), through the same graph (an agent loop adding a message each super-step).
The method, beside its figures: bench/report_template.md, "LangGraph: SessionStoreSaver against DynamoDBSaver"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import boto3

from bench.framework_backends import dynamodb_saver
from bench.harness import store_on
from bench.meter import Meter, Tally
from bench.peers import Endpoint
from infra.local.aws import REGION
from store.integrations.langgraph import SessionStoreSaver

STEPS = 5  # loop iterations of the measured run
PER_RUN = 2  # a run also checkpoints its input (step -1) and its start (step 0)
PREFILL_CHUNK = 200
MESSAGE = "checked the fare calendar; the cheapest direct flight leaves at 07:40"  # ~70 characters


SAVERS: dict[str, Callable[[Endpoint, Any], Any]] = {  # (endpoint, boto3 session) -> a checkpointer
    "agent-session-store SessionStoreSaver": lambda e, session: SessionStoreSaver(
        store_on(e.url, e.tables, session), owner="bench"
    ),
    "langgraph-checkpoint-aws DynamoDBSaver": lambda e, session: dynamodb_saver(
        e.url, e.checkpoint_table, e.bucket, session
    ),
}


def agent_loop(saver: Any) -> Any:
    """A graph whose every super-step adds one assistant message, `loops` times per run."""
    from langchain_core.messages import AIMessage, AnyMessage
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from typing_extensions import TypedDict

    State = TypedDict("State", {"messages": Annotated[list[AnyMessage], add_messages], "left": int})  # noqa: UP013

    def work(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(content=MESSAGE)], "left": state["left"] - 1}

    builder: Any = StateGraph(State)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_conditional_edges("work", lambda s: "work" if s["left"] > 0 else END, ["work", END])
    return builder.compile(checkpointer=saver)


class Runner:
    """One saver's thread, grown and measured."""

    def __init__(self, endpoint: Endpoint, make: Callable[[Endpoint, Any], Any]) -> None:
        self.session = boto3.Session(region_name=REGION)
        self.meter = Meter(self.session, endpoint.reader)
        self.saver = make(endpoint, self.session)
        self.graph = agent_loop(self.saver)
        self.config: Any = {"configurable": {"thread_id": "bench-thread"}}
        self.checkpoints = 0

    def run(self, loops: int) -> None:
        """One run of `loops` (at least 1) steps: `loops + PER_RUN` checkpoints."""
        from langchain_core.messages import HumanMessage

        config = {**self.config, "recursion_limit": loops + 10}
        self.graph.invoke({"messages": [HumanMessage("go on")], "left": loops}, config)
        self.checkpoints += loops + PER_RUN

    def grow_to(self, target: int) -> None:
        """Runs (not measured) until the thread holds at least `target` checkpoints."""
        while self.checkpoints < target:
            self.run(max(1, min(PREFILL_CHUNK, target - self.checkpoints - PER_RUN)))

    def measured(self, action: Callable[[], Any]) -> tuple[Tally, Any]:
        with self.meter.measure() as tally:
            result = action()
        return tally, result


def measure(endpoint: Endpoint, lengths: list[int]) -> dict[str, Any]:
    """For each saver and history length: per super-step costs, a load of the latest state, a listing."""
    out: dict[str, Any] = {"steps": STEPS, "lengths": lengths, "savers": {}}
    for name, make in SAVERS.items():
        runner = Runner(endpoint, make)
        rows: dict[str, Any] = {}
        for length in lengths:
            runner.grow_to(length - STEPS - PER_RUN)
            step, _ = runner.measured(lambda r=runner: r.run(STEPS))  # type: ignore[misc]
            latest, state = runner.measured(lambda r=runner: r.graph.get_state(r.config))  # type: ignore[misc]
            listing, found = runner.measured(lambda r=runner: len(list(r.saver.list(r.config))))  # type: ignore[misc]
            if found != runner.checkpoints or state.values["left"] != 0:
                raise RuntimeError(f"{name}: {found} checkpoints listed, {runner.checkpoints} written")
            rows[str(length)] = {
                "checkpoints": found,
                "messages": len(state.values["messages"]),
                "super_step": step.sample(per=STEPS + PER_RUN),
                "load_latest": latest.sample(),
                "list_history": listing.sample(),
            }
            print(f"  langgraph: {name} at {found} checkpoints", flush=True)
        out["savers"][name] = rows
    return out
