"""`make run` honours every variable that configures a deployed function's store (store/env_settings.py's
VARIABLES: `SessionStore.from_env` and the stack read them through the same function), one test per variable,
each through the stack as a user reaches it (HTTP, the printed environment, the functions it runs)."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

import pytest

from functions import runtime
from infra.local import demo_model
from infra.local.stack import LocalStack, local_stack
from store import SessionStore
from store.core.lexical import LEXICAL_DIMENSIONS
from store.env_settings import VARIABLES
from tests.api.test_local_stack import http

_stacks = itertools.count()  # moto's state is the process's: each stack names its tables anew
TESTED = {"MEMORY_EMBEDDER", "EXTRACTION_MODEL", "EXTRACTION_API_KEY", "EXTRACTION_STRATEGIES"}


def test_each_settings_variable_has_its_test_here() -> None:
    """A variable added to store/env_settings.py is added here with a test of the stack honouring it."""
    assert set(VARIABLES) == TESTED


@contextmanager
def stack_with(**variables: str) -> Iterator[LocalStack]:
    with pytest.MonkeyPatch.context() as env:
        for name in VARIABLES:
            env.delenv(name, raising=False)
        for name, value in variables.items():
            env.setenv(name, value)
        with local_stack(port=0, aws_port=0, cascade=False, prefix=f"envs{next(_stacks)}") as running:
            yield running


def index_dimensions(stack: LocalStack) -> int:
    (index,) = stack.dynamodb.describe_table(TableName=stack.tables.memories)["Table"]["VectorIndexes"]
    dimensions: int = index["Dimensions"]
    return dimensions


def session_with(stack: LocalStack, token: str, text: str) -> str:
    status, _, body = http("POST", f"{stack.api_url}/sessions", token=token, body={"title": "settings"})
    assert status == 201
    sid: str = json.loads(body)["id"]
    turn = {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]}
    assert http("POST", f"{stack.api_url}/sessions/{sid}/messages", token=token, body=turn)[0] == 201
    return sid


@pytest.mark.parametrize(("name", "dimensions"), [("wordllama", 256), ("none", None)])
def test_memory_embedder_chooses_the_stacks_model_and_its_index(name: str, dimensions: int | None) -> None:
    """MEMORY_EMBEDDER=wordllama: the stack embeds with wordllama (its index 256 + the word buckets wide, a
    memory found by meaning over HTTP) and prints it for `from_env`; =none: no embedder, searches by words."""
    with stack_with(MEMORY_EMBEDDER=name) as stack:
        served = runtime.installed_store()
        assert served is not None
        token = stack.token("eve")
        put = {
            "namespace": ["travel"],
            "key": "seat",
            "value": {"text": "I always ask for a window seat on long flights"},
        }
        assert http("POST", f"{stack.api_url}/memories", token=token, body=put)[0] == 200
        asked = quote("where do I like to sit")
        search = f"{stack.api_url}/memories/search?prefix={quote(json.dumps(['travel']))}&q={asked}"
        status, _, body = http("GET", search, token=token)
        assert status == 200
        assert stack.environment()["MEMORY_EMBEDDER"] == name
        with pytest.MonkeyPatch.context() as env:
            for variable, value in stack.environment().items():
                env.setenv(variable, value)
            library = SessionStore.from_env()
        if dimensions is None:
            assert served.settings.embedder is None and library.settings.embedder is None
            assert json.loads(body)["mode"] == "keyword"
        else:
            assert served.settings.embedder is not None and served.settings.embedder.dimensions == dimensions
            assert index_dimensions(stack) == dimensions + LEXICAL_DIMENSIONS
            assert json.loads(body)["mode"] == "hybrid"
            assert [h["key"] for h in json.loads(body)["items"]] == ["seat"]  # no word in common: by meaning
            assert library.settings.embedder is not None
            assert library.settings.embedder.model_id == served.settings.embedder.model_id


def test_extraction_strategies_choose_what_the_stacks_runs_extract() -> None:
    """EXTRACTION_STRATEGIES=facts with the stand-in model: a run asked over HTTP extracts facts only (the stack
    ran facts and preferences, whatever the variable said)."""
    with stack_with(EXTRACTION_MODEL="demo", EXTRACTION_STRATEGIES="facts") as stack:
        token = stack.token("fay")
        sid = session_with(stack, token, "My sister lives in Oslo. I prefer aisle seats.")
        status, _, body = http("POST", f"{stack.api_url}/sessions/{sid}/memory-runs", token=token, body={})
        assert status == 200
        assert [run["strategy"] for run in json.loads(body)["items"]] == ["facts"]
        assert stack.environment()["EXTRACTION_STRATEGIES"] == "facts"


class _Recording(demo_model._Handler):
    """The stand-in model, noting the Authorization header of each request."""

    seen: list[str | None] = []

    def do_POST(self) -> None:
        self.seen.append(self.headers.get("Authorization"))
        super().do_POST()


@contextmanager
def recording_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recording)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"openai:http://127.0.0.1:{server.server_address[1]}/v1#{demo_model.MODEL}"
    finally:
        server.shutdown()
        server.server_close()


def test_extraction_model_and_its_api_key_are_the_stacks_model() -> None:
    """EXTRACTION_MODEL names an OpenAI-compatible endpoint and EXTRACTION_API_KEY its key: the stack's runs ask
    that endpoint, with that key; the memories it answers are the owner's."""
    _Recording.seen.clear()
    with recording_endpoint() as spec, stack_with(EXTRACTION_MODEL=spec, EXTRACTION_API_KEY="sk-local-1") as stack:
        token = stack.token("gil")
        sid = session_with(stack, token, "My brother lives in Porto.")
        status, _, body = http("POST", f"{stack.api_url}/sessions/{sid}/memory-runs", token=token, body={})
        assert status == 200
        runs: list[dict[str, Any]] = json.loads(body)["items"]
        assert {run["status"] for run in runs} == {"succeeded"}
        assert _Recording.seen and set(_Recording.seen) == {"Bearer sk-local-1"}
        status, _, body = http(
            "GET", f"{stack.api_url}/memories/search?prefix={quote(json.dumps(['facts']))}", token=token
        )
        assert [m["value"]["text"] for m in json.loads(body)["items"]] == ["The user's brother lives in Porto."]


def test_a_variable_no_setting_takes_stops_make_run_in_one_line() -> None:
    """`MEMORY_EMBEDDER=bogus make run`: one line naming the variable and what it takes, exit 1, no traceback."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MEMORY_EMBEDDER": "bogus"}
    done = subprocess.run(
        [sys.executable, "-m", "infra.cli", "local", "--port", "0", "--aws-port", "0", "--no-browser"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("agent-store local: MEMORY_EMBEDDER must be e5-small, wordllama") and "'bogus'" in line
