"""Cold-start cost: import time of each Lambda handler module and of the library, against `import boto3`.

Each module is imported in a fresh interpreter with `python -X importtime`, as Lambda's INIT phase
does, `rounds` times, modules interleaved round by round so that load on the machine falls on all of
them alike; the figure is the median. The time of one import is the sum of the cumulative times of the
top-level imports the statement caused (the interpreter's own start-up imports, listed by an empty
`-c pass` run, are left out). Handlers are imported with the environment Lambda gives them (function
name set, so Powertools' Tracer initialises X-Ray as it does there).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import report, scale_report
from bench.isolated import ENVIRONMENTS

MODULES = (
    "boto3",
    "store",
    "functions.api.app",
    "functions.mcp.app",
    "functions.cascade.app",
    "langchain_community.chat_message_histories.dynamodb",
    "llama_index.storage.chat_store.dynamodb",
    "strands.session",
)
BASELINE = "boto3"
# modules that cannot be installed beside this project's lock, imported in their own environment
ELSEWHERE = {"llama_index.storage.chat_store.dynamodb": "llama-index"}
# the variables the Lambda runtime sets that the imported code reads: the X-Ray SDK, for one, takes its
# in-Lambda path (sampling decided by Lambda, no X-Ray client made at import) only where LAMBDA_TASK_ROOT is set
LAMBDA_ENV = {
    "LAMBDA_TASK_ROOT": str(Path(__file__).resolve().parents[1]),
    "AWS_EXECUTION_ENV": "AWS_Lambda_python3.11",
    "AWS_LAMBDA_FUNCTION_NAME": "agent-store-api",
    "AWS_REGION": "us-east-1",
    "AWS_DEFAULT_REGION": "us-east-1",
    "POWERTOOLS_SERVICE_NAME": "agent-session-store",
    "POWERTOOLS_METRICS_NAMESPACE": "AgentSessionStore",
    "POWERTOOLS_TRACE_DISABLED": "false",  # the template traces (Tracing: Active); a test run's setting is not
    "SESSIONS_TABLE": "agent-store-sessions",
    "MESSAGES_TABLE": "agent-store-messages",
    "ARTIFACTS_BUCKET": "agent-store-artifacts",
}


def interpreter(module: str) -> str:
    """The Python that imports `module`: this one, or that of the module's own environment."""
    if module not in ELSEWHERE:
        return sys.executable
    return str(ENVIRONMENTS[ELSEWHERE[module]] / "bin" / "python")


def _importtime(code: str, python: str = sys.executable) -> list[tuple[int, float, str, float]]:
    """(depth, cumulative ms, module, self ms) of every import `python -X importtime -c code` made."""
    env = os.environ | LAMBDA_ENV | {"PYTHONWARNINGS": "ignore"}
    done = subprocess.run(  # nosec B603: a fixed interpreter, our own code string
        [python, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True, check=True
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, name = line.split("|")
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2  # two spaces per level of nesting
        rows.append((depth, int(cumulative) / 1000, name.strip(), int(own.split(":")[1]) / 1000))
    return rows


def import_ms(module: str, startup: set[str]) -> float:
    """Milliseconds `import module` takes in a fresh interpreter (start-up imports excluded)."""
    rows = _importtime(f"import {module}", interpreter(module))
    return sum(ms for depth, ms, name, _ in rows if depth == 0 and name not in startup)


def measure(rounds: int = 11, modules: tuple[str, ...] = MODULES) -> dict[str, Any]:
    """Median import time per module over `rounds` fresh processes, and its ratio to `import boto3`."""
    started = {python: {name for _, _, name, _ in _importtime("pass", python)} for python in map(interpreter, modules)}
    samples: dict[str, list[float]] = {m: [] for m in modules}
    for _ in range(rounds):
        for module in modules:
            samples[module].append(import_ms(module, started[interpreter(module)]))
    startup = started[sys.executable]
    medians = {m: statistics.median(v) for m, v in samples.items()}
    return {
        "rounds": rounds,
        "baseline": BASELINE,
        "modules": {
            m: {
                "median_ms": medians[m],
                "min_ms": min(samples[m]),
                "max_ms": max(samples[m]),
                "ratio": medians[m] / medians[BASELINE],
            }
            for m in modules
        },
        "breakdown": breakdown("functions.api.app", startup),
        "first_requests": first_requests(rounds),
    }


# Import the API handler, then serve the requests of a first turn (create a session, append, read it back)
# over the memory backend: what the handler's own code does lazily on its first requests (Powertools builds
# its validation models at the first request of each route) shows here, the network's share does not.
FIRST_TURN = """
import json, time
started = time.perf_counter()
import functions.api.app as api
imported = time.perf_counter()
from functions.runtime import use_store
from infra.local.apigw import LambdaContext, http_event
from store import SessionStore
from store.memory import MemoryBackend

use_store(SessionStore(backend=MemoryBackend()))
def call(method, path, body=None, query=""):
    data = None if body is None else json.dumps(body).encode()
    event = http_event(method, path, query=query, headers={"content-type": "application/json"}, body=data,
                       claims={"sub": "bench"})
    assert api.lambda_handler(event, LambdaContext())["statusCode"] < 300
def turn(n):
    began = time.perf_counter()
    call("POST", "/sessions", {"session_id": f"s{n}"})
    call("POST", f"/sessions/s{n}/messages", {"messages": [{"role": "user", "content": "hi"}]})
    call("GET", f"/sessions/s{n}/messages", query="limit=10")
    return (time.perf_counter() - began) * 1000
first = turn(1)
print(json.dumps({"import_ms": (imported - started) * 1000, "first_turn_ms": first, "next_turn_ms": turn(2)}))
"""


def first_requests(rounds: int) -> dict[str, float]:
    """Median over `rounds` fresh interpreters of: the handler's import, its first turn of three requests
    (memory backend) and the next turn, in ms. A handler that merely moved import work to its first request
    shows it in `first_turn_ms - next_turn_ms`."""
    env = os.environ | LAMBDA_ENV | {"PYTHONWARNINGS": "ignore", "POWERTOOLS_METRICS_DISABLED": "true"}
    runs = []
    for _ in range(rounds):
        done = subprocess.run(  # nosec B603: this interpreter, our own code string
            [sys.executable, "-c", FIRST_TURN], env=env, capture_output=True, text=True, check=True
        )
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def breakdown(module: str, startup: set[str]) -> list[tuple[str, float]]:
    """Where one import of `module` spends its time: the modules' own import times summed by top-level
    package (so a dependency shared by two packages is counted once, where it is loaded), in ms."""
    totals: dict[str, float] = {}
    for _, _, name, own in _importtime(f"import {module}"):
        if name not in startup:
            package = name.split(".")[0]
            totals[package] = totals.get(package, 0.0) + own
    return sorted(totals.items(), key=lambda r: -r[1])[:12]


def main() -> None:
    """Measure the import times again and re-render the reports that show them (bench/results.md and
    bench/scale.md), leaving every other measurement of the last `make bench` as it was."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--rounds", type=int, default=11, help="fresh processes per module")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    imports = measure(args.rounds)
    for name, render in (("results.json", report.write_report), ("scale.json", scale_report.write_report)):
        path = args.out / name
        if path.exists():
            results = json.loads(path.read_text())
            results["imports"] = imports
            report.write_results(results, path)
            render(results, args.out)
    api = imports["modules"]["functions.api.app"]
    print(f"functions.api.app: {api['median_ms']:.0f} ms, {api['ratio']:.2f}x import boto3")


if __name__ == "__main__":
    main()
