"""The README's code blocks run as written, in order, against `make run` (the local stack, started as `make
run` starts it), in a new shell set up as the README says (`source .venv/bin/activate`, then the `export` lines
`make run` printed): shell blocks in bash, Python blocks one after another in one interpreter, as a reader
pasting them into a session would. A block is left out only with a `<!-- not run ... -->` line before it
saying why."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(?P<before>[^\n]*)\n```(?P<lang>\w+)\n(?P<code>.*?)\n```", re.S)
SKIPPED = "<!-- not run"
# runs Python blocks one at a time in one namespace, as a reader's interpreter session does
DRIVER = textwrap.dedent(
    """
    import json, sys, traceback
    namespace = {"__name__": "__main__"}
    for line in sys.stdin:
        code = json.loads(line)
        try:
            exec(compile(code, "<README block>", "exec"), namespace)
            print(json.dumps({"ok": True}), flush=True)
        except BaseException:
            print(json.dumps({"ok": False, "error": traceback.format_exc()}), flush=True)
    """
)


def blocks() -> list[tuple[str, str, bool]]:
    """(language, code, run) for every fenced block of the README, in order."""
    text = (ROOT / "README.md").read_text()
    return [(m["lang"], m["code"], not m["before"].startswith(SKIPPED)) for m in BLOCK.finditer(text)]


@pytest.fixture(scope="module")
def exports() -> Iterator[str]:
    """`make run`'s own process (`python -m infra.cli local`), on free ports; the `export` lines it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "infra.cli", "local", "--port", "0", "--aws-port", "0", "--no-browser"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    printed: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "Press Ctrl-C" not in "".join(printed[-1:]):
        printed.append(proc.stdout.readline())
    lines = [line.strip().split("   #")[0] for line in printed if line.strip().startswith("export ")]
    try:
        assert any(line.startswith("export TOKEN=") for line in lines), "".join(printed)
        yield "\n".join(lines)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_the_readme_says_which_blocks_it_does_not_run_and_why() -> None:
    found = blocks()
    assert len(found) >= 12
    skipped = [code.split()[:2] for _, code, run in found if not run]
    # the stack itself, a desktop host's MCP config (printed by a block that runs), and a deployment
    assert skipped == [["make", "run"], ['{"mcpServers":', '{"agent-store":'], ["make", "bundle"]]


def test_every_block_runs_as_written_against_make_run(exports: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AGENT_STORE_"))}
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")  # a checkout of its own, whose files the blocks may write
    setup = f"cd {tmp_path}\nsource .venv/bin/activate\n{exports}\n"
    # the Python blocks' interpreter: a new shell's, set up the same way
    python = subprocess.Popen(
        ["bash", "-c", f"{setup}exec python -u -c {shlex.quote(DRIVER)}"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert python.stdin is not None and python.stdout is not None
    outputs: list[str] = []
    try:
        for lang, code, run in blocks():
            if not run:
                continue
            if lang == "python":
                python.stdin.write(json.dumps(code) + "\n")
                python.stdin.flush()
                answer = _answer(python.stdout)
                assert answer["ok"], f"{code[:200]}\n{answer['error']}"
            else:
                assert lang == "sh", lang
                done = subprocess.run(
                    ["bash", "-c", f"set -euo pipefail\n{setup}{code}"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert done.returncode == 0, f"{code[:300]}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
                outputs.append(done.stdout)
    finally:
        python.stdin.close()
        python.wait(timeout=60)
    # what the blocks did: the curl block's artifact came back, the CLI read what the Python blocks wrote
    assert any(out.rstrip().endswith("buy milk") for out in outputs)
    cli = outputs[-1]
    assert "trip-1" in cli and "Flights to Lisbon?" in cli and "invoke_agent" in cli


def _answer(stdout: IO[str]) -> dict[str, object]:
    """The driver's next JSON line (its blocks may print lines of their own first). Lines are read by a thread
    of their own: a block that prints just before its answer sends both in one write, and `select` on the pipe
    would then wait for data already read into the reader's buffer."""
    lines = _readers.get(id(stdout))
    if lines is None:
        lines = _readers[id(stdout)] = queue.Queue()
        threading.Thread(target=_pump, args=(stdout, lines), daemon=True).start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            continue
        if line is None:
            raise AssertionError("the README's interpreter stopped")
        if line.startswith('{"ok"'):
            found: dict[str, object] = json.loads(line)
            return found
    raise AssertionError("a README block ran for over 2 minutes")


_readers: dict[int, queue.Queue[str | None]] = {}


def _pump(stdout: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stdout:
        lines.put(line)
    lines.put(None)
