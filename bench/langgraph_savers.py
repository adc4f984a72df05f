"""LangGraph checkpointers side by side: this store's `SessionStoreSaver` and `langgraph-checkpoint-aws`'s
`DynamoDBSaver` (with its S3 offload), through the same graph (an agent loop adding a message each super-step).
The method, beside its figures: bench/report_template.md, "LangGraph: SessionStoreSaver against DynamoDBSaver"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import boto3

from bench.meter import Meter, Tally
from bench.peers import Endpoint
from infra.local.aws import REGION

STEPS = 5  # loop iterations of the measured run
PER_RUN = 2  # a run also checkpoints its input (step -1) and its start (step 0)
PREFILL_CHUNK = 200
MESSAGE = "checked the fare calendar; the cheapest direct flight leaves at 07:40"  # ~70 characters


@dataclass(frozen=True)
class SaverUnderTest:
    name: str
    make: Callable[[Endpoint, Any], Any]  # (endpoint, boto3 session) -> a BaseCheckpointSaver


def ours(endpoint: Endpoint, session: Any) -> Any:
    from store import SessionStore
    from store.integrations.langgraph import SessionStoreSaver
    from store.session_store import s3_config

    store = SessionStore(
        endpoint.sessions_table,
        endpoint.messages_table,
        bucket=endpoint.bucket,
        client=session.client("dynamodb", endpoint_url=endpoint.url),
        s3_client=session.client("s3", endpoint_url=endpoint.url, config=s3_config(path_style=True)),
    )
    return SessionStoreSaver(store, owner="bench")


def dynamodb_saver(endpoint: Endpoint, session: Any) -> Any:
    from botocore.config import Config
    from langgraph_checkpoint_aws import DynamoDBSaver

    return DynamoDBSaver(
        table_name=endpoint.checkpoint_table,
        session=session,
        region_name=REGION,
        endpoint_url=endpoint.url,
        boto_config=Config(s3={"addressing_style": "path"}),
        s3_offload_config={"bucket_name": endpoint.bucket, "endpoint_url": endpoint.url},
    )


SAVERS = (
    SaverUnderTest("agent-session-store SessionStoreSaver", ours),
    SaverUnderTest("langgraph-checkpoint-aws DynamoDBSaver", dynamodb_saver),
)


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

    def __init__(self, endpoint: Endpoint, under_test: SaverUnderTest) -> None:
        self.session = boto3.Session(region_name=REGION)
        self.meter = Meter(self.session, endpoint.reader)
        self.saver = under_test.make(endpoint, self.session)
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


def _sample(tally: Tally, per: int = 1) -> dict[str, Any]:
    return {
        "requests": tally.request_count / per,
        "calls": tally.describe(),
        "bytes_sent": tally.bytes_sent / per,
        "bytes_received": tally.bytes_received / per,
        "wcu": tally.wcu / per,
        "rcu": tally.rcu / per,
        "largest_item": tally.largest_item,
    }


def measure(endpoint: Endpoint, lengths: list[int]) -> dict[str, Any]:
    """For each saver and history length: per super-step costs, a load of the latest state, a listing."""
    out: dict[str, Any] = {"steps": STEPS, "lengths": lengths, "savers": {}}
    for under_test in SAVERS:
        runner = Runner(endpoint, under_test)
        rows: dict[str, Any] = {}
        for length in lengths:
            runner.grow_to(length - STEPS - PER_RUN)
            step, _ = runner.measured(lambda r=runner: r.run(STEPS))  # type: ignore[misc]
            latest, state = runner.measured(lambda r=runner: r.graph.get_state(r.config))  # type: ignore[misc]
            listing, found = runner.measured(lambda r=runner: len(list(r.saver.list(r.config))))  # type: ignore[misc]
            if found != runner.checkpoints or state.values["left"] != 0:
                raise RuntimeError(f"{under_test.name}: {found} checkpoints listed, {runner.checkpoints} written")
            rows[str(length)] = {
                "checkpoints": found,
                "messages": len(state.values["messages"]),
                "super_step": _sample(step, STEPS + PER_RUN),
                "load_latest": _sample(latest),
                "list_history": _sample(listing),
            }
            print(f"  langgraph: {under_test.name} at {found} checkpoints", flush=True)
        out["savers"][under_test.name] = rows
    return out
