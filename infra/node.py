"""The Node.js clients the extended tests run (tests/node: the MCP conformance suite, the TypeScript SDK):
Node and npm found, or installed with apt-get (as root or through sudo); then `npm ci` from the committed
lock. One line saying what to install when neither works, before any test starts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ROOT / "tests" / "node"


def _apt(*packages: str) -> bool:
    prefix = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if prefix is None or not shutil.which("apt-get"):
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
        if subprocess.run(prefix + command, env=env, check=False).returncode != 0:
            return False
    return True


def ensure() -> int:
    """0 when tests/node/node_modules holds the locked packages and `node` runs; 1 (one line) otherwise."""
    if not (shutil.which("node") and shutil.which("npm")) and not _apt("nodejs", "npm"):
        print("the MCP client tests need Node.js 20 and npm: apt-get install -y nodejs npm", file=sys.stderr)
        return 1
    marker = PACKAGES / "node_modules" / ".package-lock.json"
    lock = PACKAGES / "package-lock.json"
    if marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return 0
    done = subprocess.run(["npm", "ci", "--silent", "--no-audit", "--no-fund"], cwd=PACKAGES, check=False)
    if done.returncode != 0:
        print("npm ci failed in tests/node: the npm registry must be reachable", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(ensure())
