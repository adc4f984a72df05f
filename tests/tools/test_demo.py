"""`make demo` works as the README says: the demo runs on an embedded AWS and shows the resume."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_and_resumes() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "infra.local.demo"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "created from template.yaml" in out
    assert "load checkpoint -> step 2" in out
    assert "load_full -> 2 messages, state v1" in out
    assert "-> seq 4" in out and "It is 18°C and clear in Paris." in out
    line = next(ln for ln in out.splitlines() if "append user message" in ln)
    assert line.endswith("requests: 1 TransactWriteItems")
    assert "items after delete: {'demo-SessionsTable': 0, 'demo-MessagesTable': 0}" in out
    assert "objects after delete: 0" in out
    assert "put_artifact reports/paris.md -> version 1" in out and "trace events: 2 in runs ['run-1']" in out
    spilled = next(ln for ln in out.splitlines() if "spilled to S3" in ln)
    assert "PutObject" in spilled
