"""The local stack's `/mcp` used by MCP clients nobody here wrote, run by Node (tests/node, installed by `make
node-tools`): the MCP project's conformance suite (every server scenario; the ones that do not apply are
listed with why in tests/node/conformance-expected.yaml, and a listed one that passes fails the run) and the
official TypeScript SDK's client."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.local.stack import LocalStack, local_stack
from tests.api.token_proxy import token_proxy

pytestmark = pytest.mark.extended
NODE = Path(__file__).resolve().parent.parent / "node"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    if not (NODE / "node_modules" / ".bin" / "conformance").exists():
        pytest.fail("the Node clients are not installed: make node-tools")
    with local_stack(port=0, prefix="mcpnode") as running:
        yield running


def test_the_conformance_suite_passes_every_scenario_that_applies(stack: LocalStack) -> None:
    # the suite's CLI sends no token: a proxy on 127.0.0.1 adds one (the stack's /mcp answers 401 without)
    with token_proxy(stack.api_url, stack.token("conformance")) as url:
        run = subprocess.run(
            [
                str(NODE / "node_modules" / ".bin" / "conformance"),
                "server",
                "--url",
                f"{url}/mcp",
                "--suite",
                "all",
                "--expected-failures",
                "conformance-expected.yaml",
            ],
            cwd=NODE,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    summary = run.stdout[run.stdout.find("=== SUMMARY ===") :]
    assert run.returncode == 0, summary + run.stderr[-2000:]
    for scenario in ("server-initialize", "ping", "tools-list", "tools-call-error", "dns-rebinding-protection"):
        assert f"✓ {scenario}:" in summary, (scenario, summary)


def test_the_typescript_sdk_client_remembers_and_recalls(stack: LocalStack) -> None:
    token = stack.token("ts-agent")
    run = subprocess.run(
        [
            "node",
            "remember_and_recall.mjs",
            f"{stack.api_url}/mcp",
            token,
            "The user's favourite editor is Helix",
            "which editor does the user like",
        ],
        cwd=NODE,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert {"remember", "search_memories", "get_context", "search_messages"} <= set(got["tools"])
    assert got["kept"]["namespace"] == ["ts"]
    assert got["found"]["items"][0]["value"]["text"] == "The user's favourite editor is Helix"
    assert got["refused"]["isError"] is True and "session_not_found" in got["refused"]["text"]
    other = subprocess.run(
        ["node", "remember_and_recall.mjs", f"{stack.api_url}/mcp", stack.token("ts-other"), "x", "Helix editor"],
        cwd=NODE,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    found = json.loads(other.stdout.strip().splitlines()[-1])["found"]["items"]
    assert all("Helix" not in json.dumps(hit) for hit in found)  # another owner's memories are not theirs
