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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from bench.framework_turns import adk_turn, langchain_turn, langgraph_turn, openai_turn, strands_turn
from bench.meter import Meter, Tally
from infra.local.aws import FAKE_CREDENTIALS, REGION, create_tables, local_client, moto_server_process
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
