"""What persisting one agent turn adds to its latency, through each framework's own loop (bench/framework_turns.py's
scripted turn), with this store's adapter at its defaults and with each framework's DynamoDB backend of choice.

    .venv/bin/python -m bench.turn_latency [--rtt-ms 8] [--turns 10] [--rounds 20] [--record]

One moto server in a process of its own answers every request `--rtt-ms` after it arrives (a network round
trip; concurrent requests wait side by side), one request at a time, and says how long moto itself worked on
each (infra/local/aws.py `timed`). For each framework three variants run the same conversation: the framework's
own in-memory session (no request: the baseline), ours, and its peer (bench/turn_costs.py's: strands-dynamodb-
storage, openai-agents-session, adk-dynamodb-session, langgraph-checkpoint-aws's DynamoDBSaver, langchain-
community's DynamoDBChatMessageHistory). Each variant's session is brought to `--turns` turns, then `--rounds`
turns are timed, the variants taking turns (one round: each variant's next turn), so that whatever else the
machine does falls on all of them alike. Per variant:

- requests: a turn's requests;
- added: the median turn's wall time less the baseline's median, moto's own work included;
- added on DynamoDB: the same with moto's own work on each request taken out (what a DynamoDB answering each
  request in one round trip would give): moto is slower than DynamoDB by amounts that differ with the operation
  (its transactions parse every expression in Python, 5 to 15 ms; a PutItem is 1 ms), which is no one's latency
  but moto's (docs/decisions.md, "Turn latency").

It keeps its numbers in bench/results.json ("turn_latency") and renders bench/results.md again."""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bench.framework_turns import (
    CITY,
    adk_runner_turn,
    langchain_turn,
    langgraph_graph,
    openai_runner,
    strands_agent,
)
from bench.harness import our_tables, peer_table, store_on
from bench.report import record
from bench.turn_costs import _Awaitable, adk_peer
from infra.local.aws import REGION, SERVED_HEADER, local_session, moto_server_process
from store import SessionStore

QUESTION = f"What is the weather in {CITY}?"
BASELINE = "the framework's in-memory session"


@dataclass
class Variant:
    """One way a framework keeps its session: a turn of it, and what moto reported of each request it sent."""

    name: str
    turn: Callable[[], Any]
    served: list[float] = field(default_factory=list)
    samples: list[tuple[float, float, int]] = field(default_factory=list)  # (wall ms, moto ms, requests)

    def timed(self) -> None:
        self.served.clear()
        started = time.perf_counter()
        self.turn()
        self.samples.append(((time.perf_counter() - started) * 1000, sum(self.served), len(self.served)))


def timed_session(served: list[float], session: Any = None) -> Any:
    """A boto3 session for the local AWS (or `session`) whose answers' moto times go into `served` (a client
    made of it before this is not timed)."""
    session = session or local_session()

    def after(http_response: Any, **_: Any) -> None:
        served.append(float(http_response.headers.get(SERVED_HEADER, 0.0)))

    session.events.register("after-call", after)
    return session


def strands(url: str) -> list[Variant]:
    from strands.session import SnapshotSessionManager
    from strands_dynamodb_storage import DynamoDBStorage

    from store.integrations.strands import session_manager

    ours = Variant("ours, session_manager()", lambda: None)
    theirs = Variant("strands-dynamodb-storage, SnapshotSessionManager", lambda: None)
    store = store_on(url, our_tables(url, "lat-strands"), timed_session(ours.served))
    peer_client = timed_session(theirs.served).client("dynamodb", endpoint_url=url)
    storage = DynamoDBStorage(peer_table(url, "lat-strands-peer", "pk", "sk"), client=peer_client)
    managers = [None, session_manager("s", store, owner="bench"), SnapshotSessionManager("s", storage=storage)]
    variants = [Variant(BASELINE, lambda: None), ours, theirs]
    for variant, manager in zip(variants, managers, strict=True):
        variant.turn = functools.partial(strands_agent(manager), QUESTION)
    return variants


def openai(url: str) -> list[Variant]:
    from agents import SQLiteSession
    from openai_agents_session import DynamoDBSession

    from store.integrations.openai_agents import OpenAIAgentsSession

    run = openai_runner()
    ours = Variant("ours, OpenAIAgentsSession", lambda: None)
    theirs = Variant("openai-agents-session, DynamoDBSession", lambda: None)
    store = store_on(url, our_tables(url, "lat-openai"), timed_session(ours.served))
    peer_client: Any = _Awaitable(timed_session(theirs.served).client("dynamodb", endpoint_url=url))
    sessions = [
        SQLiteSession("s"),
        OpenAIAgentsSession("s", store, owner="bench"),
        DynamoDBSession("s", peer_client, peer_table(url, "lat-openai-peer", "session_id")),
    ]
    variants = [Variant(BASELINE, lambda: None), ours, theirs]
    for variant, session in zip(variants, sessions, strict=True):
        variant.turn = functools.partial(run, session)
    return variants


def adk(url: str) -> list[Variant]:
    from google.adk.sessions import InMemorySessionService

    from store.integrations.adk import StoreSessionService

    ours = Variant("ours, StoreSessionService()", lambda: None)
    theirs = Variant("adk-dynamodb-session, DynamoDBSessionService", lambda: None)
    store = store_on(url, our_tables(url, "lat-adk"), timed_session(ours.served))
    make_peer, _, _ = adk_peer(url, lambda session: timed_session(theirs.served, session))
    services = [InMemorySessionService(), StoreSessionService(store), make_peer()]
    variants = [Variant(BASELINE, lambda: None), ours, theirs]
    for variant, service in zip(variants, services, strict=True):
        variant.turn = adk_runner_turn(service, name="lat", owner="bench")
    return variants


def langgraph(url: str) -> list[Variant]:
    from botocore.config import Config
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_checkpoint_aws import DynamoDBSaver

    from store.integrations.langgraph import SessionStoreSaver

    ours = Variant("ours, SessionStoreSaver", lambda: None)
    theirs = Variant("langgraph-checkpoint-aws, DynamoDBSaver", lambda: None)
    tables = our_tables(url, "lat-langgraph")
    store = store_on(url, tables, timed_session(ours.served))
    peer = DynamoDBSaver(
        table_name=peer_table(url, "lat-langgraph-peer", "PK", "SK"),
        session=timed_session(theirs.served),
        region_name=REGION,
        endpoint_url=url,
        boto_config=Config(s3={"addressing_style": "path"}),
        s3_offload_config={"bucket_name": tables.bucket or "", "endpoint_url": url},
    )
    savers = [InMemorySaver(), SessionStoreSaver(store, owner="bench"), peer]
    variants = [Variant(BASELINE, lambda: None), ours, theirs]
    config: Any = {"configurable": {"thread_id": "lat"}}

    def turn(graph: Any) -> Any:  # a new message each turn (one reused keeps its id: it would replace)
        return graph.invoke({"messages": [HumanMessage(QUESTION)]}, config)

    for variant, saver in zip(variants, savers, strict=True):
        variant.turn = functools.partial(turn, langgraph_graph(saver))
    return variants


def langchain(url: str) -> list[Variant]:
    from langchain_community.chat_message_histories import DynamoDBChatMessageHistory
    from langchain_core.chat_history import InMemoryChatMessageHistory

    ours = Variant("ours, SessionStoreChatMessageHistory", lambda: None)
    theirs = Variant("langchain-community, DynamoDBChatMessageHistory", lambda: None)
    store: SessionStore = store_on(url, our_tables(url, "lat-langchain"), timed_session(ours.served))
    table = "lat-langchain-peer"
    peer_table(url, table, "SessionId")  # as LangChain's docs create it
    peer_session = timed_session(theirs.served)
    memory = InMemoryChatMessageHistory()
    histories: list[Callable[[str], Any] | None] = [
        lambda sid: memory,
        None,  # ours: langchain_turn's own, SessionStoreChatMessageHistory
        lambda sid: DynamoDBChatMessageHistory(
            table_name=table, session_id=sid, endpoint_url=url, boto3_session=peer_session
        ),
    ]
    variants = [Variant(BASELINE, lambda: None), ours, theirs]
    for variant, history in zip(variants, histories, strict=True):
        variant.turn = langchain_turn(store, name="lat", owner="bench", history=history)
    return variants


FRAMEWORKS: dict[str, Callable[[str], list[Variant]]] = {
    "Strands": strands,
    "OpenAI Agents": openai,
    "ADK": adk,
    "LangGraph": langgraph,
    "LangChain": langchain,
}


def measure(url: str, turns: int, rounds: int, frameworks: list[str]) -> list[dict[str, Any]]:
    """Each framework's variants brought to `turns` turns, then timed for `rounds` rounds, interleaved."""
    rows = []
    for framework in frameworks:
        variants = FRAMEWORKS[framework](url)
        for _ in range(turns - 1):
            for variant in variants:
                variant.turn()
        for _ in range(rounds):
            for variant in variants:
                variant.timed()
        base = statistics.median(wall for wall, _, _ in variants[0].samples)
        for variant in variants[1:]:
            rows.append(
                {
                    "framework": framework,
                    "backend": variant.name,
                    "requests": round(statistics.median(n for _, _, n in variant.samples)),
                    "added ms": round(statistics.median(w for w, _, _ in variant.samples) - base, 1),
                    "added ms on DynamoDB": round(statistics.median(w - m for w, m, _ in variant.samples) - base, 1),
                    "moto ms": round(statistics.median(m for _, m, _ in variant.samples), 1),
                }
            )
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=8.0)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--frameworks", nargs="*", choices=sorted(FRAMEWORKS), default=list(FRAMEWORKS))
    parser.add_argument("--record", action="store_true", help="keep the numbers in bench/results.json (and .md)")
    args = parser.parse_args()
    with moto_server_process(args.rtt_ms / 1000, timed=True) as url:
        rows = measure(url, args.turns, args.rounds, args.frameworks)
    if args.record:
        when = datetime.now(UTC).date().isoformat()
        record(
            "turn_latency",
            {"date": when, "rtt ms": args.rtt_ms, "turns": args.turns, "rounds": args.rounds, "rows": rows},
        )


if __name__ == "__main__":
    main()
