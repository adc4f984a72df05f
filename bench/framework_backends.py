"""Each framework's ways of keeping a session, as contenders: the framework's own in-memory session (the
baseline), this store's adapter in its modes, and the framework's DynamoDB backend of choice (its table made as
its documentation says), each running bench/framework_turns.py's scripted turn on a boto3 session of its own.
What a benchmark hooks on that session is its `probe`: bench/turn_costs.py counts, bench/turn_latency.py times."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.framework_turns import CITY, adk_runner_turn, langchain_turn, langgraph_graph, openai_runner, strands_agent
from bench.harness import our_tables, peer_table, store_on
from infra.local.aws import REGION, local_session

QUESTION = f"What is the weather in {CITY}?"
BASELINE = "the framework's in-memory session"
OWNER = "bench"
Probe = Callable[[Any], Any]  # (a new boto3 session) -> what the benchmark hooked on it
Turns = tuple[Callable[[], Any], ...]  # (the next turn, a resume[, the checkpoints stored])
Build = Callable[[Any, str], Turns]  # (boto3 session, session id) -> its turns


@dataclass
class Backend:
    """One way of keeping a session: its next turn, a resume (what a new process reads first), and what the
    benchmark hooked on the boto3 session its requests go through."""

    name: str
    probe: Any
    turn: Callable[[], Any]
    resume: Callable[[], Any]
    stored: Callable[[], int] = lambda: 0  # checkpoints the thread holds (LangGraph)


def _each(prefix: str, probe: Probe, builds: dict[str, Build]) -> list[Backend]:
    """A Backend of each build, each on a new boto3 session hooked by `probe` and a session id of its own."""
    out = []
    for n, (name, build) in enumerate(builds.items()):
        session = local_session()
        hooked = probe(session)
        out.append(Backend(name, hooked, *build(session, f"s{n}-{prefix}")))
    return out


def strands(url: str, prefix: str, probe: Probe, windowed: bool = True) -> list[Backend]:
    """Strands' Agent kept by nothing, by `session_manager()` per turn and per message, and by its
    SnapshotSessionManager over this store and over strands-dynamodb-storage."""
    from strands.session import SnapshotSessionManager
    from strands_dynamodb_storage import DynamoDBStorage

    from store.integrations.strands import SessionStoreStorage, session_manager

    tables = our_tables(url, prefix)
    table = peer_table(url, f"{prefix}-strands-storage", "pk", "sk")  # as its README provisions it

    def agent(manager: Callable[[], Any]) -> Turns:
        running = strands_agent(manager(), windowed=windowed)
        return lambda: running(QUESTION), lambda: strands_agent(manager(), windowed=windowed)

    def ours(**options: Any) -> Build:
        def build(session: Any, sid: str) -> Turns:
            store = store_on(url, tables, session)
            return agent(lambda: session_manager(sid, store, owner=OWNER, **options))

        return build

    def snapshot(storage_of: Callable[[Any], Any]) -> Build:
        def build(session: Any, sid: str) -> Turns:
            storage = storage_of(session)
            return agent(lambda: SnapshotSessionManager(sid, storage=storage))

        return build

    return _each(
        prefix,
        probe,
        {
            BASELINE: lambda session, sid: agent(lambda: None),
            "ours, session_manager() (default: per turn)": ours(),
            'ours, session_manager(durability="message")': ours(durability="message"),
            "ours, SnapshotSessionManager over SessionStoreStorage": snapshot(
                lambda session: SessionStoreStorage(store_on(url, tables, session), owner=OWNER)
            ),
            "strands-dynamodb-storage 0.2.0, SnapshotSessionManager": snapshot(
                lambda session: DynamoDBStorage(table, client=session.client("dynamodb", endpoint_url=url))
            ),
        },
    )


class _Awaitable:
    """A boto3 client's calls as coroutines: what openai-agents-session takes (an aiobotocore client), with the
    same requests, on the probed boto3 session."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        return call


def openai(url: str, prefix: str, probe: Probe) -> list[Backend]:
    """The OpenAI Agents SDK's Runner with an SQLiteSession, this store's session, and openai-agents-session's
    DynamoDBSession; a resume is a new session object's `get_items()` (what the Runner reads first)."""
    from agents import SQLiteSession
    from openai_agents_session import DynamoDBSession

    from store.integrations.openai_agents import OpenAIAgentsSession

    run = openai_runner()
    tables = our_tables(url, prefix)
    table = peer_table(url, f"{prefix}-agent-sessions", "session_id")  # as its README creates it

    def on(make: Callable[[], Any]) -> Turns:
        first = make()
        return lambda: run(first), lambda: asyncio.run(make().get_items())

    def ours(session: Any, sid: str) -> Turns:
        store = store_on(url, tables, session)
        return on(lambda: OpenAIAgentsSession(sid, store, owner=OWNER))

    def theirs(session: Any, sid: str) -> Turns:
        client: Any = _Awaitable(session.client("dynamodb", endpoint_url=url))
        return on(lambda: DynamoDBSession(sid, client, table))

    return _each(
        prefix,
        probe,
        {
            BASELINE: lambda session, sid: on(lambda: SQLiteSession(sid)),
            "ours, OpenAIAgentsSession": ours,
            "openai-agents-session 0.1.0, DynamoDBSession": theirs,
        },
    )


_ADK_PEERS: dict[str, tuple[Callable[[], Any], Any]] = {}


def adk_peer(url: str, probe: Probe) -> tuple[Callable[[], Any], Any]:
    """adk-dynamodb-session's DynamoDBSessionService on the moto server at `url`, once a process (PynamoDB: its
    table is named by ADK_DYNAMODB_SESSION_TABLE_NAME when it is imported, its clients come from botocore's
    default session): a factory of services, and what `probe` hooked on the boto3 session its requests go
    through (given before any client is made of it: a client copies its session's event handlers)."""
    import pynamodb.connection.base

    if url in _ADK_PEERS:
        return _ADK_PEERS[url]
    os.environ["ADK_DYNAMODB_SESSION_TABLE_NAME"] = "adk-pairs-sessions"
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    from adk_dynamodb_session import ADKEntityModel, DynamoDBSessionService

    ADKEntityModel.Meta.host = url
    ADKEntityModel.Meta.region = REGION
    session = local_session()
    hooked = probe(session)
    setattr(pynamodb.connection.base, "get_session", lambda: session._session)  # noqa: B010
    if not ADKEntityModel.exists():
        DynamoDBSessionService().create_table_if_not_exists(
            billing_mode="PAY_PER_REQUEST", ignore_update_ttl_errors=True
        )
    _ADK_PEERS[url] = DynamoDBSessionService, hooked
    return _ADK_PEERS[url]


def adk(url: str, prefix: str, probe: Probe) -> list[Backend]:
    """ADK's Runner with its InMemorySessionService, this store's StoreSessionService per turn and per event,
    and adk-dynamodb-session's DynamoDBSessionService (`adk_peer`), also with a tool that sets `user:` state;
    a resume is a new service's `get_session`."""
    from google.adk.sessions import InMemorySessionService

    from store.integrations.adk import StoreSessionService

    tables = our_tables(url, prefix)
    peer, peer_probe = adk_peer(url, probe)

    def on(make: Callable[[], Any], sid: str, shared: bool = False) -> Turns:
        turn = adk_runner_turn(make(), name=sid, owner=OWNER, shared=shared)
        ids = {"app_name": "bench", "user_id": OWNER, "session_id": sid}
        return turn, lambda: asyncio.run(make().get_session(**ids))

    def ours(shared: bool = False, **options: Any) -> Build:
        def build(session: Any, sid: str) -> Turns:
            store = store_on(url, tables, session)
            return on(lambda: StoreSessionService(store, **options), sid, shared)

        return build

    def theirs(shared: bool = False) -> Build:
        return lambda session, sid: on(peer, sid, shared)

    backends = _each(
        prefix,
        probe,
        {
            BASELINE: lambda session, sid: on(InMemorySessionService, sid),
            "ours, StoreSessionService() (default: per turn)": ours(),
            'ours, StoreSessionService(durability="event")': ours(durability="event"),
            "adk-dynamodb-session 0.0.5, DynamoDBSessionService": theirs(),
            "ours, StoreSessionService(), the tool sets user: state": ours(shared=True),
            "adk-dynamodb-session 0.0.5, the tool sets user: state": theirs(shared=True),
        },
    )
    for backend in backends:  # its requests go through PynamoDB's session
        if backend.name.startswith("adk-dynamodb-session"):
            backend.probe = peer_probe
    return backends


def dynamodb_saver(url: str, table: str, bucket: str, session: Any) -> Any:
    """langgraph-checkpoint-aws's DynamoDBSaver on `table`, offloading large checkpoints to `bucket`."""
    from botocore.config import Config
    from langgraph_checkpoint_aws import DynamoDBSaver

    return DynamoDBSaver(
        table_name=table,
        session=session,
        region_name=REGION,
        endpoint_url=url,
        boto_config=Config(s3={"addressing_style": "path"}),
        s3_offload_config={"bucket_name": bucket, "endpoint_url": url},
    )


def langgraph(url: str, prefix: str, probe: Probe) -> list[Backend]:
    """A LangGraph graph checkpointed by its InMemorySaver, this store's SessionStoreSaver, langgraph-checkpoint-
    aws's DynamoDBSaver and its DeferredCheckpointSaver (flushed on exit); a resume is a new checkpointer's
    `get_state` (the state resumed)."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_checkpoint_aws.checkpoint.deferred_saver import DeferredCheckpointSaver

    from store.integrations.langgraph import SessionStoreSaver

    tables = our_tables(url, prefix)
    table = peer_table(url, f"{prefix}-checkpoints", "PK", "SK")  # as langgraph-checkpoint-aws documents it
    saver_on = functools.partial(dynamodb_saver, url, table, tables.bucket or "")

    def on(make: Callable[[], Any], deferred: bool = False) -> Build:
        def build(session: Any, sid: str) -> Turns:
            config: Any = {"configurable": {"thread_id": sid}}
            saver = make() if not deferred else DeferredCheckpointSaver(make())
            graph = langgraph_graph(saver)

            def turn() -> Any:  # a new message each turn (one reused keeps its id: it would replace)
                with saver.flush_on_exit() if deferred else contextlib.nullcontext():
                    return graph.invoke({"messages": [HumanMessage(QUESTION)]}, config)

            def resume() -> Any:  # the state, its messages resumed
                return langgraph_graph(make()).get_state(config)

            return turn, resume, lambda: sum(1 for _ in (saver.saver if deferred else saver).list(config))

        return build

    def with_session(make: Callable[[Any], Any], deferred: bool = False) -> Build:
        return lambda session, sid: on(lambda: make(session), deferred)(session, sid)

    return _each(
        prefix,
        probe,
        {
            BASELINE: on(InMemorySaver),
            "ours, SessionStoreSaver": with_session(lambda s: SessionStoreSaver(store_on(url, tables, s), owner=OWNER)),
            "langgraph-checkpoint-aws DynamoDBSaver": with_session(saver_on),
            "langgraph-checkpoint-aws DeferredCheckpointSaver(DynamoDBSaver), flush_on_exit": with_session(
                saver_on, deferred=True
            ),
        },
    )


def langchain(url: str, prefix: str, probe: Probe) -> list[Backend]:
    """LangChain's RunnableWithMessageHistory over an in-memory history, this store's and langchain-community's
    DynamoDBChatMessageHistory (a table as LangChain's docs create it); a resume reads the history's messages."""
    from langchain_community.chat_message_histories import DynamoDBChatMessageHistory
    from langchain_core.chat_history import InMemoryChatMessageHistory

    from store.integrations.langchain import SessionStoreChatMessageHistory

    tables = our_tables(url, prefix)
    table = peer_table(url, f"{prefix}-langchain", "SessionId")
    memory = InMemoryChatMessageHistory()

    def on(history_of: Callable[[Any], Callable[[str], Any]]) -> Build:
        def build(session: Any, sid: str) -> Turns:
            history = history_of(session)
            return langchain_turn(None, name=sid, history=history), lambda: history(sid).messages

        return build

    def ours(session: Any) -> Callable[[str], Any]:
        store = store_on(url, tables, session)
        return lambda sid: SessionStoreChatMessageHistory(sid, store, owner=OWNER)

    def theirs(session: Any) -> Callable[[str], Any]:
        return lambda sid: DynamoDBChatMessageHistory(
            table_name=table, session_id=sid, endpoint_url=url, boto3_session=session
        )

    return _each(
        prefix,
        probe,
        {
            BASELINE: on(lambda session: lambda sid: memory),
            "ours, SessionStoreChatMessageHistory": on(ours),
            "langchain-community, DynamoDBChatMessageHistory": on(theirs),
        },
    )


FRAMEWORKS: dict[str, Callable[[str, str, Probe], list[Backend]]] = {
    "Strands": strands,
    "OpenAI Agents": openai,
    "ADK": adk,
    "LangGraph": langgraph,
    "LangChain": langchain,
}
