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

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.framework_turns import adk_turn, langchain_turn, langgraph_turn, openai_turn, strands_turn
from bench.harness import our_tables, peer_table, store_on
from bench.meter import Tally, metered
from infra.local.aws import REGION, moto_server_process
from store import SessionStore

DOC = Path(__file__).resolve().parent.parent / "docs" / "integrations.md"


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
        session, self.meter = metered(url)
        self.url = url
        self.store = store_on(url, our_tables(url, prefix), session)

    def turn(self, adapter: str, mode: str, run: Callable[[], Any]) -> TurnCost:
        """Run an unmeasured first turn, then measure the second."""
        run()
        with self.meter.measure() as tally:
            run()
        return _cost(adapter, mode, tally)


def _cost(adapter: str, mode: str, tally: Tally) -> TurnCost:
    return TurnCost(adapter, mode, tally.request_count, tally.describe(), tally.wcu, tally.rcu)


# ---------------------------------------------------------------- Strands


# ---------------------------------------------------------------- all of them


def measure(url: str) -> list[TurnCost]:
    """One metered store per adapter and mode on the moto server at `url`."""
    plans: list[tuple[str, str, Callable[[SessionStore], Callable[[], Any]]]] = [
        ("Strands", "per turn (default)", lambda s: strands_turn(s, batched=True)),
        ("Strands", 'durability="message"', lambda s: strands_turn(s, batched=False)),
        ("OpenAI Agents", "per call", openai_turn),
        ("ADK", "per turn (default)", lambda s: adk_turn(s, batched=True)),
        ("ADK", 'durability="event"', lambda s: adk_turn(s, batched=False)),
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


# ---------------------------------------------------------------- side by side with the frameworks' AWS backends


@dataclass(frozen=True)
class PairCost:
    """One backend's steady turn after `turns` turns, and what a new agent's resume of that session costs."""

    framework: str
    backend: str
    turns: int
    window: str
    turn: Tally
    resume: Tally

    def row(self) -> str:
        t, r = self.turn, self.resume
        return (
            f"| {self.framework} | {self.backend} | {self.turns} | {self.window} | {t.request_count} | {t.describe()} "
            f"| {t.wcu:g} | {t.rcu:g} | {r.request_count} | {r.rcu:g} |"
        )


PAIR_HEADER = (
    "| Framework | Backend | Turns | Window | Requests | Calls | WCU | RCU | Resume requests | Resume RCU |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)
PAIR_TURNS = (10, 100)


def strands_backends(url: str, prefix: str) -> dict[str, Callable[[Any], Callable[[str], Any]]]:
    """Each Strands backend under test: (a metered boto3 session) -> (session id -> a new session manager)."""
    from strands.session import SnapshotSessionManager
    from strands_dynamodb_storage import DynamoDBStorage

    from store.integrations.strands import SessionStoreStorage, session_manager

    tables = our_tables(url, prefix)

    def ours(session: Any) -> SessionStore:
        return store_on(url, tables, session)

    their_table = peer_table(url, f"{prefix}-strands-storage", "pk", "sk")  # as its README provisions it

    def per_turn(session: Any) -> Callable[[str], Any]:
        store = ours(session)
        return lambda sid: session_manager(sid, store, owner="bench")

    def per_message(session: Any) -> Callable[[str], Any]:
        store = ours(session)
        return lambda sid: session_manager(sid, store, owner="bench", durability="message")

    def snapshot(session: Any) -> Callable[[str], Any]:
        storage = SessionStoreStorage(ours(session), owner="bench")
        return lambda sid: SnapshotSessionManager(sid, storage=storage)

    def peer(session: Any) -> Callable[[str], Any]:
        storage = DynamoDBStorage(their_table, client=session.client("dynamodb", endpoint_url=url))
        return lambda sid: SnapshotSessionManager(sid, storage=storage)

    return {
        "ours, session_manager() (default: per turn)": per_turn,
        'ours, session_manager(durability="message")': per_message,
        "ours, SnapshotSessionManager over SessionStoreStorage": snapshot,
        "strands-dynamodb-storage 0.2.0, SnapshotSessionManager": peer,
    }


def strands_pairs(url: str) -> list[PairCost]:
    """Strands at its defaults beside strands-dynamodb-storage: the last of `turns` turns and a resume, with
    Strands' default window (40 messages) and without one."""
    from bench.framework_turns import CITY, strands_agent

    out = []
    for windowed in (True, False):
        for turns in PAIR_TURNS:
            backends = strands_backends(url, f"pairs-{turns}-{int(windowed)}")
            for n, (name, make) in enumerate(backends.items()):
                session, meter = metered(url)
                manager = make(session)
                sid = f"s{n}"
                agent = strands_agent(manager(sid), windowed=windowed)
                for _ in range(turns - 1):
                    agent(f"What is the weather in {CITY}?")
                with meter.measure() as turn:
                    agent(f"What is the weather in {CITY}?")
                with meter.measure() as resume:
                    strands_agent(manager(sid), windowed=windowed)
                window = "40 messages (default)" if windowed else "none"
                out.append(PairCost("Strands", name, turns, window, turn, resume))
                print(out[-1].row(), flush=True)
    return out


LANGGRAPH_TURNS = (2, 200)  # about 10 and 1,000 checkpoints at LangGraph's default durability (5 a turn)


@dataclass
class Checkpointer:
    """A LangGraph checkpointer under test, and what a turn runs inside (a deferred saver's flush)."""

    saver: Any
    around: Callable[[], Any] = nullcontext
    stored: Callable[[Any], int] = lambda config: 0  # checkpoints the thread holds


def langgraph_backends(url: str, prefix: str) -> dict[str, Callable[[Any], Checkpointer]]:
    """Each LangGraph checkpointer under test: (a metered boto3 session) -> a new checkpointer."""
    from botocore.config import Config
    from langgraph_checkpoint_aws import DynamoDBSaver
    from langgraph_checkpoint_aws.checkpoint.deferred_saver import DeferredCheckpointSaver

    from store.integrations.langgraph import SessionStoreSaver

    tables = our_tables(url, prefix)
    their_table = peer_table(url, f"{prefix}-checkpoints", "PK", "SK")  # as langgraph-checkpoint-aws documents it

    def counted(saver: Any) -> Callable[[Any], int]:
        return lambda config: sum(1 for _ in saver.list(config))

    def ours(session: Any) -> Checkpointer:
        saver = SessionStoreSaver(store_on(url, tables, session), owner="bench")
        return Checkpointer(saver, stored=counted(saver))

    def theirs(session: Any) -> Any:
        return DynamoDBSaver(
            table_name=their_table,
            session=session,
            region_name=REGION,
            endpoint_url=url,
            boto_config=Config(s3={"addressing_style": "path"}),
            s3_offload_config={"bucket_name": tables.bucket or "", "endpoint_url": url},
        )

    def dynamodb_saver(session: Any) -> Checkpointer:
        saver = theirs(session)
        return Checkpointer(saver, stored=counted(saver))

    def deferred(session: Any) -> Checkpointer:
        saver = DeferredCheckpointSaver(theirs(session))
        return Checkpointer(saver, around=saver.flush_on_exit, stored=counted(saver.saver))

    return {
        "ours, SessionStoreSaver": ours,
        "langgraph-checkpoint-aws DynamoDBSaver": dynamodb_saver,
        "langgraph-checkpoint-aws DeferredCheckpointSaver(DynamoDBSaver), flush_on_exit": deferred,
    }


def langgraph_pairs(url: str) -> list[PairCost]:
    """LangGraph at its defaults (`invoke`'s durability, "async") beside langgraph-checkpoint-aws: the last of
    `turns` turns of the scripted tool-calling graph, and a resume (a new checkpointer's `get_state`)."""
    from langchain_core.messages import HumanMessage

    from bench.framework_turns import CITY, langgraph_graph

    out = []
    for turns in LANGGRAPH_TURNS:
        backends = langgraph_backends(url, f"lg-pairs-{turns}")
        for name, make in backends.items():
            session, meter = metered(url)
            checkpointer = make(session)
            graph = langgraph_graph(checkpointer.saver)
            config: Any = {"configurable": {"thread_id": f"thread-{turns}"}}

            def turn(graph: Any = graph, checkpointer: Checkpointer = checkpointer, config: Any = config) -> Any:
                with checkpointer.around():  # a new message each turn (one reused keeps its id: it would replace)
                    return graph.invoke({"messages": [HumanMessage(f"What is the weather in {CITY}?")]}, config)

            for _ in range(turns - 1):
                turn()
            with meter.measure() as measured:
                turn()
            fresh = make(session)
            with meter.measure() as resume:
                state = langgraph_graph(fresh.saver).get_state(config)
            resumed = len(state.values["messages"])
            if name.startswith("ours") and resumed != 4 * turns:
                raise RuntimeError(f"{name}: resumed {resumed} messages after {turns} turns")
            stored = checkpointer.stored(config)
            note = f"none; {stored} checkpoints stored, {resumed} messages resumed (of {4 * turns})"
            out.append(PairCost("LangGraph", name, turns, note, measured, resume))
            print(out[-1].row(), flush=True)
    return out


SESSION_TURNS = (10, 100)


@dataclass
class SessionBackend:
    """A session backend under test: a turn on it, and a resume (what a new process reads first)."""

    turn: Callable[[], Any]
    resume: Callable[[], Any]
    meter: Any = None  # the Meter its requests go through, when not the session's it was made with


def _session_pairs(
    url: str, framework: str, backends: Callable[[str, int], dict[str, Callable[[Any, str], SessionBackend]]]
) -> list[PairCost]:
    """Each backend's last of `turns` turns and a resume, for SESSION_TURNS; `backends(prefix, turns)` names each
    backend's factory (metered boto3 session, session id) -> SessionBackend."""
    out = []
    for turns in SESSION_TURNS:
        for n, (name, make) in enumerate(backends(f"{framework.lower().replace(' ', '')}-{turns}", turns).items()):
            session, meter = metered(url)
            backend = make(session, f"s{n}-{turns}")
            meter = backend.meter or meter
            for _ in range(turns - 1):
                backend.turn()
            with meter.measure() as turn:
                backend.turn()
            with meter.measure() as resume:
                backend.resume()
            out.append(PairCost(framework, name, turns, "none (the framework keeps none)", turn, resume))
            print(out[-1].row(), flush=True)
    return out


class _Awaitable:
    """A boto3 client's calls as coroutines: what openai-agents-session takes (an aiobotocore client), with the
    same requests, on the metered boto3 session."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        return call


def openai_pairs(url: str) -> list[PairCost]:
    """The OpenAI Agents SDK's Runner with a session, beside openai-agents-session's DynamoDBSession; a resume is
    a new session object's `get_items()` (what the Runner reads first)."""
    import asyncio

    from openai_agents_session import DynamoDBSession

    from bench.framework_turns import openai_runner
    from store.integrations.openai_agents import OpenAIAgentsSession

    run = openai_runner()

    def backends(prefix: str, turns: int) -> dict[str, Callable[[Any, str], SessionBackend]]:
        tables = our_tables(url, prefix)
        their_table = peer_table(url, f"{prefix}-agent-sessions", "session_id")  # as its README creates it

        def on(make: Callable[[], Any]) -> SessionBackend:
            first = make()
            return SessionBackend(lambda: run(first), lambda: asyncio.run(make().get_items()))

        def ours(session: Any, sid: str) -> SessionBackend:
            store = store_on(url, tables, session)
            return on(lambda: OpenAIAgentsSession(sid, store, owner="bench"))

        def theirs(session: Any, sid: str) -> SessionBackend:
            client: Any = _Awaitable(session.client("dynamodb", endpoint_url=url))
            return on(lambda: DynamoDBSession(sid, client, their_table))

        return {"ours, OpenAIAgentsSession": ours, "openai-agents-session 0.1.0, DynamoDBSession": theirs}

    return _session_pairs(url, "OpenAI Agents", backends)


def adk_peer(url: str, hook: Callable[[Any], Any] = lambda session: None) -> tuple[Callable[[], Any], Any, Any]:
    """adk-dynamodb-session's DynamoDBSessionService on the moto server at `url` (PynamoDB: its table is named by
    ADK_DYNAMODB_SESSION_TABLE_NAME when it is imported, its clients come from botocore's default session): a
    factory of services, and the metered boto3 session and meter its requests go through (`hook` is given that
    session before any client is made of it: a client copies its session's event handlers when it is made)."""
    import os

    import pynamodb.connection.base

    os.environ["ADK_DYNAMODB_SESSION_TABLE_NAME"] = "adk-pairs-sessions"
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    from adk_dynamodb_session import ADKEntityModel, DynamoDBSessionService

    ADKEntityModel.Meta.host = url
    ADKEntityModel.Meta.region = REGION
    peer_session, peer_meter = metered(url)
    hook(peer_session)
    setattr(pynamodb.connection.base, "get_session", lambda: peer_session._session)  # noqa: B010
    if not ADKEntityModel.exists():
        DynamoDBSessionService().create_table_if_not_exists(
            billing_mode="PAY_PER_REQUEST", ignore_update_ttl_errors=True
        )
    return DynamoDBSessionService, peer_session, peer_meter


def adk_pairs(url: str) -> list[PairCost]:
    """ADK's Runner beside adk-dynamodb-session's DynamoDBSessionService (`adk_peer`); a resume is a new
    service's `get_session`."""
    import asyncio

    from bench.framework_turns import adk_runner_turn
    from store.integrations.adk import StoreSessionService

    peer_service, _, peer_meter = adk_peer(url)

    def on(make: Callable[[], Any], sid: str, meter: Any = None, shared: bool = False) -> SessionBackend:
        turn = adk_runner_turn(make(), name=sid, owner="bench", shared=shared)
        ids = {"app_name": "bench", "user_id": "bench", "session_id": sid}
        return SessionBackend(turn, lambda: asyncio.run(make().get_session(**ids)), meter)

    def backends(prefix: str, turns: int) -> dict[str, Callable[[Any, str], SessionBackend]]:
        tables = our_tables(url, prefix)

        def ours(session: Any, sid: str, shared: bool = False, **options: Any) -> SessionBackend:
            store = store_on(url, tables, session)
            return on(lambda: StoreSessionService(store, **options), sid, shared=shared)

        def theirs(session: Any, sid: str, shared: bool = False) -> SessionBackend:  # counted on peer_session's meter
            return on(peer_service, sid, peer_meter, shared=shared)

        return {
            "ours, StoreSessionService() (default: per turn)": ours,
            'ours, StoreSessionService(durability="event")': lambda s, sid: ours(s, sid, durability="event"),
            "adk-dynamodb-session 0.0.5, DynamoDBSessionService": theirs,
            "ours, StoreSessionService(), the tool sets user: state": lambda s, sid: ours(s, sid, shared=True),
            "adk-dynamodb-session 0.0.5, the tool sets user: state": lambda s, sid: theirs(s, sid, shared=True),
        }

    return _session_pairs(url, "ADK", backends)


PAIRS: dict[str, Callable[[str], list[PairCost]]] = {
    "strands": strands_pairs,
    "langgraph": langgraph_pairs,
    "adk": adk_pairs,
    "openai": openai_pairs,
}


@contextmanager
def server() -> Iterator[str]:
    with moto_server_process() as url:
        yield url


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pairs",
        nargs="*",
        choices=sorted(PAIRS),
        help="each framework beside its AWS backend (issue 38); name frameworks to run only those",
    )
    args = parser.parse_args()
    with server() as url:
        if args.pairs is not None:
            pairs = [cost for name in (args.pairs or PAIRS) for cost in PAIRS[name](url)]
            print("\n".join([PAIR_HEADER, *(c.row() for c in pairs)]))
        else:
            print(table(measure(url)))


if __name__ == "__main__":
    main()
