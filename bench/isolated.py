"""Bench contenders that live in a Python environment of their own.

LlamaIndex's DynamoDB chat store pins aioboto3, whose last release pins botocore 1.40.61: it cannot be
installed beside this project's lock (current botocore, which `langchain-aws` and
`langgraph-checkpoint-aws` need). So it is measured from `.venv-llama-index` (requirements/llama-index.txt,
built by `make bench-envs`): a worker process there (`python -m bench.isolated`, this repository on
PYTHONPATH) builds the contender from bench/peers.py and measures each operation with its own Meter, and
the bench in this environment drives it through JSON lines on the worker's stdin and stdout. The numbers
are the worker's own: requests, bytes and capacity counted on its boto3 session, wall time without the
pipe's round trip.
"""

from __future__ import annotations

import json
import os
import subprocess  # nosec B404: runs this repository's own worker in a venv of its own
import sys
import time
import weakref
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from bench.meter import Tally
from bench.peers import Contender, Endpoint
from bench.workload import Turn

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENTS = {"llama-index": ROOT / ".venv-llama-index"}


class PeerFailed(RuntimeError):
    """An operation failed in the worker (its exception's type and message)."""


class RemoteMeter:
    """The `Meter` interface bench/compare.py times with, filled from the worker's own measurement."""

    def __init__(self) -> None:
        self.tally = Tally()
        self.overhead = 0.0
        self.last_body: Any = None
        self._started = 0.0

    @contextmanager
    def measure(self) -> Iterator[Tally]:
        self.tally = Tally()
        self.overhead = 0.0
        self._started = time.perf_counter()
        yield self.tally

    def record(self, answer: dict[str, Any]) -> None:
        """Take the worker's tally; the time beyond the worker's own is overhead (the pipe)."""
        measured = answer["tally"]
        self.tally.requests = Counter(measured["requests"])
        for name in ("bytes_sent", "bytes_received", "wcu", "rcu", "largest_item"):
            setattr(self.tally, name, measured[name])
        self.overhead = time.perf_counter() - self._started - answer["seconds"]


class Isolated(Contender):
    """A contender of bench/peers.py (`peer`, by class name) run by a worker in `environment`."""

    peer = ""
    environment = ""

    def __init__(self, endpoint: Endpoint, conversation: str) -> None:
        self.endpoint = endpoint
        self.conversation = conversation
        self.length = 0
        self.meter = RemoteMeter()  # type: ignore[assignment]
        python = ENVIRONMENTS[self.environment] / "bin" / "python"
        if not python.exists():
            raise PeerFailed(f"{self.name} needs its own environment: run `make bench-envs` ({python} is missing)")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
        self._worker = subprocess.Popen(  # nosec B603: a fixed interpreter and module, no shell
            [str(python), "-m", "bench.isolated"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
            env=env,
        )
        weakref.finalize(self, _stop, self._worker)
        where = {f.name: getattr(endpoint, f.name) for f in fields(endpoint) if f.name != "reader"}
        self._ask({"op": "new", "peer": self.peer, "endpoint": where, "conversation": conversation})

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        worker = self._worker
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(json.dumps(request) + "\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        if not line:
            raise PeerFailed(f"{self.name}: the worker exited ({worker.poll()})")
        answer: dict[str, Any] = json.loads(line)
        self.length = answer.get("length", self.length)
        if "error" in answer:
            raise PeerFailed(answer["error"])
        return answer

    def prefill(self, turns: list[Turn]) -> None:
        self._ask({"op": "prefill", "turns": [asdict(t) for t in turns]})

    def append(self, turn: Turn) -> None:
        self.meter.record(self._ask({"op": "append", "turn": asdict(turn)}))  # type: ignore[attr-defined]

    def add_one(self, turn: Turn) -> None:
        self.append(turn)

    def load_last(self, n: int) -> int:
        answer = self._ask({"op": "load_last", "n": n})
        self.meter.record(answer)  # type: ignore[attr-defined]
        return int(answer["result"])


def _stop(worker: subprocess.Popen[str]) -> None:
    if worker.poll() is None:
        worker.terminate()
        worker.wait(timeout=10)


def isolated_versions() -> dict[str, str]:
    """Versions of the packages measured from their own environments (and of their boto3 and botocore)."""
    wanted = {"llama-index": ("llama-index-storage-chat-store-dynamodb", "aioboto3", "boto3", "botocore")}
    versions: dict[str, str] = {}
    for environment, packages in wanted.items():
        python = ENVIRONMENTS[environment] / "bin" / "python"
        code = "import sys, importlib.metadata as m; print(' '.join(m.version(p) for p in sys.argv[1:]))"
        try:
            done = subprocess.run(  # nosec B603: a fixed interpreter, our own code string
                [str(python), "-c", code, *packages], capture_output=True, text=True, check=True
            )
            found = done.stdout.split()
        except (OSError, subprocess.CalledProcessError):
            found = ["not installed"] * len(packages)
        versions |= {f"{p} ({environment} env)": v for p, v in zip(packages, found, strict=True)}
    return versions


class LlamaIndexIsolated(Isolated):
    name = "llama-index DynamoDBChatStore"
    peer = "LlamaIndex"
    environment = "llama-index"


# ---------------------------------------------------------------- the worker (in the other environment)


def _serve() -> None:
    """Answer the bench's requests on stdin, one JSON line each, until stdin closes."""
    import boto3

    from bench import peers
    from infra.local.aws import REGION

    contender: Contender | None = None
    for line in sys.stdin:
        request = json.loads(line)
        answer: dict[str, Any] = {}
        try:
            if request["op"] == "new":
                where = request["endpoint"]
                reader = boto3.client(
                    "dynamodb",
                    endpoint_url=where["url"],
                    region_name=REGION,
                    aws_access_key_id="testing",
                    aws_secret_access_key="testing",
                )
                contender = getattr(peers, request["peer"])(Endpoint(**where, reader=reader), request["conversation"])
            elif contender is None:
                raise PeerFailed("no contender yet")
            elif request["op"] == "prefill":
                contender.prefill([Turn(**t) for t in request["turns"]])
            else:
                with contender.meter.measure() as tally:
                    started = time.perf_counter()
                    if request["op"] == "append":
                        contender.append(Turn(**request["turn"]))
                    else:
                        answer["result"] = contender.load_last(int(request["n"]))
                    seconds = time.perf_counter() - started - contender.meter.overhead
                answer["tally"] = {**asdict(tally), "requests": dict(tally.requests)}
                answer["seconds"] = seconds
        except Exception as exc:  # reported to the bench, which records the failure
            answer["error"] = f"{type(exc).__name__}: {exc}"[:300]
        answer["length"] = contender.length if contender is not None else 0
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        os.environ.setdefault(name, value)
    _serve()
