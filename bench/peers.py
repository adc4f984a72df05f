"""The stores bench/compare.py measures, behind one small interface: this library and the peers a user
would pick instead, each used through its own public API exactly as its documentation shows.

- ours: `SessionStore.append_messages` (one message) and `last_messages(50)`.
- langchain-community `DynamoDBChatMessageHistory`: `add_message`, `messages[-50:]`.
- llama-index `DynamoDBChatStore`: `add_message`, `get_messages(key)[-50:]` (run from an environment of its
  own, bench/isolated.py: it pins aioboto3 and an old botocore).
- Strands `S3SessionManager` (and `FileSessionManager`, a local reference without AWS): the session
  repository's `create_message` and `list_messages(limit=50, offset=n-50)`.

Each contender has its own boto3 session, so its `Meter` counts only its own requests. Peer packages are
imported when a contender is built, never at module import: they are in the `bench` extra only (LlamaIndex
in requirements/llama-index.txt).
"""

from __future__ import annotations

import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import boto3

from bench.harness import store_on
from bench.meter import Meter
from bench.workload import Turn
from infra.local.aws import REGION, LocalTables

PREFILL_CHUNK = 25


@dataclass(frozen=True)
class Endpoint:
    """The moto server every contender talks to, and the tables and bucket made for them."""

    url: str
    sessions_table: str
    messages_table: str
    bucket: str
    peer_table: str  # hash key "SessionId", as both LangChain's and LlamaIndex's docs create it
    reader: Any  # an unhooked DynamoDB client
    checkpoint_table: str = ""  # DynamoDBSaver's (PK, SK), as langgraph-checkpoint-aws documents it

    @property
    def tables(self) -> LocalTables:
        """Our tables and bucket, as the harness names them."""
        names = {"SESSIONS_TABLE": self.sessions_table, "MESSAGES_TABLE": self.messages_table}
        return LocalTables(names | {"ARTIFACTS_BUCKET": self.bucket})


class Contender(ABC):
    """One store under test holding one growing conversation."""

    name: str
    uses_aws = True

    def __init__(self, endpoint: Endpoint, conversation: str) -> None:
        self.endpoint = endpoint
        self.conversation = conversation
        self.session = boto3.Session(region_name=REGION)
        self.meter = Meter(self.session, endpoint.reader)
        self.length = 0

    def client(self, service: str, **kwargs: Any) -> Any:
        return self.session.client(service, endpoint_url=self.endpoint.url, **kwargs)  # type: ignore[call-overload]

    def prefill(self, turns: list[Turn]) -> None:
        """Add `turns` the fastest way the store's API allows (not measured); a failure propagates
        with `length` at the last message stored."""
        for start in range(0, len(turns), PREFILL_CHUNK):
            chunk = turns[start : start + PREFILL_CHUNK]
            try:
                if not self.add_many(chunk):
                    raise NotImplementedError
                self.length += len(chunk)
            except Exception:
                for turn in chunk:  # one by one: the store has no batch, or the batch failed (nothing written)
                    self.append(turn)

    def append(self, turn: Turn) -> None:
        """Append one message through the store's API."""
        self.add_one(turn)
        self.length += 1

    @abstractmethod
    def add_one(self, turn: Turn) -> None: ...

    def add_many(self, turns: list[Turn]) -> bool:
        """Add `turns` in one atomic call if the store has one (True), else do nothing (False)."""
        return False

    @abstractmethod
    def load_last(self, n: int) -> int:
        """Load the latest `n` messages; returns how many came back."""


class Ours(Contender):
    name = "agent-session-store"

    def __init__(self, endpoint: Endpoint, conversation: str, session_id: str | None = None) -> None:
        """A fresh store object on a new session, or on `session_id` (a cold store: sequence unknown)."""
        super().__init__(endpoint, conversation)
        self.store = store_on(endpoint.url, endpoint.tables, self.session)
        self.session_id = session_id or self.store.create_session("bench", title=conversation).id

    @staticmethod
    def message(turn: Turn) -> dict[str, Any]:
        return {"role": turn.role, "content": turn.strands()}

    def add_one(self, turn: Turn) -> None:
        self.store.append_messages(self.session_id, [self.message(turn)])

    def add_many(self, turns: list[Turn]) -> bool:
        self.store.append_messages(self.session_id, [self.message(t) for t in turns])
        return True

    def load_last(self, n: int) -> int:
        return len(self.store.last_messages(self.session_id, n))

    def raw_query_seconds(self, n: int) -> float:
        """Wall time of the bare Query behind `load_last` (newest `n` items of the session's partition),
        by an unhooked client: what moto itself takes, which grows with the table (a moto artefact)."""
        started = time.perf_counter()
        self.endpoint.reader.query(
            TableName=self.endpoint.messages_table,
            KeyConditionExpression="sid = :s",
            ExpressionAttributeValues={":s": {"S": self.session_id}},
            ScanIndexForward=False,
            Limit=n,
            ConsistentRead=True,
        )
        return time.perf_counter() - started


class LangChain(Contender):
    name = "langchain DynamoDBChatMessageHistory"

    def __init__(self, endpoint: Endpoint, conversation: str) -> None:
        super().__init__(endpoint, conversation)
        from langchain_community.chat_message_histories import DynamoDBChatMessageHistory

        self.history = DynamoDBChatMessageHistory(
            table_name=endpoint.peer_table,
            session_id=f"langchain-{conversation}",
            endpoint_url=endpoint.url,
            boto3_session=self.session,
        )

    @staticmethod
    def message(turn: Turn) -> Any:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        if turn.kind == "tool_call":
            return AIMessage(
                content="", tool_calls=[{"id": turn.tool_id, "name": turn.tool_name, "args": turn.tool_input}]
            )
        if turn.kind == "tool_result":
            return ToolMessage(content=turn.text, tool_call_id=turn.tool_id)
        return HumanMessage(content=turn.text) if turn.kind == "user" else AIMessage(content=turn.text)

    def add_one(self, turn: Turn) -> None:
        self.history.add_message(self.message(turn))

    def add_many(self, turns: list[Turn]) -> bool:
        self.history.add_messages([self.message(t) for t in turns])
        return True

    def load_last(self, n: int) -> int:
        return len(self.history.messages[-n:])


class LlamaIndex(Contender):
    name = "llama-index DynamoDBChatStore"

    def __init__(self, endpoint: Endpoint, conversation: str) -> None:
        super().__init__(endpoint, conversation)
        from llama_index.storage.chat_store.dynamodb import DynamoDBChatStore

        self.key = f"llama-{conversation}"
        self.chat_store = DynamoDBChatStore(
            table_name=endpoint.peer_table,
            region_name=REGION,
            botocore_session=self.session._session,
            resource_kwargs={"endpoint_url": endpoint.url},
        )

    @staticmethod
    def message(turn: Turn) -> Any:
        from llama_index.core.llms import ChatMessage, MessageRole

        if turn.kind == "tool_call":
            call = {
                "id": turn.tool_id,
                "type": "function",
                "function": {"name": turn.tool_name, "arguments": turn.tool_input},
            }
            return ChatMessage(role=MessageRole.ASSISTANT, content="", additional_kwargs={"tool_calls": [call]})
        if turn.kind == "tool_result":
            return ChatMessage(
                role=MessageRole.TOOL, content=turn.text, additional_kwargs={"tool_call_id": turn.tool_id}
            )
        role = MessageRole.USER if turn.kind == "user" else MessageRole.ASSISTANT
        return ChatMessage(role=role, content=turn.text)

    def add_one(self, turn: Turn) -> None:
        self.chat_store.add_message(self.key, self.message(turn))

    def add_many(self, turns: list[Turn]) -> bool:
        current = self.chat_store.get_messages(self.key)
        self.chat_store.set_messages(self.key, current + [self.message(t) for t in turns])
        return True

    def load_last(self, n: int) -> int:
        return len(self.chat_store.get_messages(self.key)[-n:])


class StrandsRepository(Contender):
    """A Strands session repository: messages as one object (or file) each under the agent's prefix."""

    agent_id = "agent"

    def __init__(self, endpoint: Endpoint, conversation: str) -> None:
        super().__init__(endpoint, conversation)
        self.session_id = f"strands-{conversation}"
        self.repository = self.make_repository()

    @abstractmethod
    def make_repository(self) -> Any: ...

    def add_one(self, turn: Turn) -> None:
        from strands.types.session import SessionMessage

        message: Any = {"role": turn.role, "content": turn.strands()}
        self.repository.create_message(
            self.session_id, self.agent_id, SessionMessage.from_message(message, self.length)
        )

    def load_last(self, n: int) -> int:
        messages = self.repository.list_messages(
            self.session_id, self.agent_id, limit=n, offset=max(0, self.length - n)
        )
        return len(messages)


class StrandsS3(StrandsRepository):
    name = "Strands S3SessionManager"

    def make_repository(self) -> Any:
        from botocore.config import Config
        from strands.session import S3SessionManager

        return S3SessionManager(
            session_id=self.session_id,
            bucket=self.endpoint.bucket,
            prefix="strands",
            boto_session=self.session,
            boto_client_config=Config(s3={"addressing_style": "path"}),
            endpoint_url=self.endpoint.url,
        )


class StrandsFile(StrandsRepository):
    name = "Strands FileSessionManager (local disk)"
    uses_aws = False

    def make_repository(self) -> Any:
        from strands.session import FileSessionManager

        self.directory = tempfile.TemporaryDirectory(prefix="bench-strands-")
        return FileSessionManager(session_id=self.session_id, storage_dir=self.directory.name)
