"""What the API handler's cold start leaves out: checked in a fresh interpreter with Lambda's environment,
as bench/startup.py measures it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.startup import LAMBDA_ENV

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import functions.api.app
from aws_xray_sdk.core import patcher
print(json.dumps({
    "openapi_models": "aws_lambda_powertools.event_handler.openapi.models" in sys.modules,
    "patched": sorted(patcher._PATCHED_MODULES),
    "sampling_client": "aws_xray_sdk.core.sampling.connector" in sys.modules,
    "mcp_sdk": "mcp" in sys.modules or "starlette" in sys.modules,
}))
"""


def probe() -> dict[str, object]:
    env = os.environ | LAMBDA_ENV | {"PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=120
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_handler_import_skips_what_only_other_paths_need() -> None:
    found = probe()
    # Powertools' OpenAPI models (~170 ms) are loaded by /openapi.json alone
    assert found["openapi_models"] is False
    assert found["mcp_sdk"] is False  # the MCP SDK is the MCP function's (functions/mcp), not the API's
    # X-Ray patches the one library the functions call AWS through, not every one it finds installed
    assert found["patched"] == ["botocore"]
    # inside Lambda the SDK leaves sampling to Lambda: no X-Ray client is made at import
    assert found["sampling_client"] is False
