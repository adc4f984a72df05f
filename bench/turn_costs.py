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

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.framework_backends import FRAMEWORKS
from bench.framework_turns import adk_turn, langchain_turn, langgraph_turn, openai_turn, strands_turn
from bench.harness import our_tables, store_on
from bench.meter import Meter, Tally, metered
from infra.local.aws import local_client, moto_server_process
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
LANGGRAPH_TURNS = (2, 200)  # about 10 and 1,000 checkpoints at LangGraph's default durability (5 a turn)
SESSION_TURNS = (10, 100)
NO_WINDOW = "none (the framework keeps none)"


def pairs(url: str, framework: str, turns: int, window: str = NO_WINDOW, **options: Any) -> list[PairCost]:
    """Each of `framework`'s AWS backends (bench/framework_backends.py) on a metered session of its own: the last
    of `turns` turns, and a resume."""
    out = []
    prefix = f"pairs-{framework.lower().replace(' ', '')}-{turns}" + ("" if options.get("windowed", True) else "-all")
    probe = functools.partial(Meter, reader=local_client(endpoint_url=url))
    for backend in FRAMEWORKS[framework](url, prefix, probe, **options)[1:]:
        for _ in range(turns - 1):
            backend.turn()
        with backend.probe.measure() as turn:
            backend.turn()
        with backend.probe.measure() as resume:
            resumed = backend.resume()
        if framework == "LangGraph":  # the resumed state, and the checkpoints the thread holds
            messages = len(resumed.values["messages"])
            if backend.name.startswith("ours") and messages != 4 * turns:
                raise RuntimeError(f"{backend.name}: resumed {messages} messages after {turns} turns")
            window = f"none; {backend.stored()} checkpoints stored, {messages} messages resumed (of {4 * turns})"
        out.append(PairCost(framework, backend.name, turns, window, turn, resume))
        print(out[-1].row(), flush=True)
    return out


def strands_pairs(url: str) -> list[PairCost]:
    """Strands at its defaults beside strands-dynamodb-storage, with Strands' default window (40 messages) and
    without one."""
    return [
        cost
        for windowed in (True, False)
        for turns in PAIR_TURNS
        for cost in pairs(url, "Strands", turns, "40 messages (default)" if windowed else "none", windowed=windowed)
    ]


def langgraph_pairs(url: str) -> list[PairCost]:
    """LangGraph at its defaults (`invoke`'s durability, "async") beside langgraph-checkpoint-aws."""
    return [cost for turns in LANGGRAPH_TURNS for cost in pairs(url, "LangGraph", turns)]


def openai_pairs(url: str) -> list[PairCost]:
    """The OpenAI Agents SDK's Runner with a session, beside openai-agents-session's DynamoDBSession."""
    return [cost for turns in SESSION_TURNS for cost in pairs(url, "OpenAI Agents", turns)]


def adk_pairs(url: str) -> list[PairCost]:
    """ADK's Runner beside adk-dynamodb-session's DynamoDBSessionService."""
    return [cost for turns in SESSION_TURNS for cost in pairs(url, "ADK", turns)]


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
