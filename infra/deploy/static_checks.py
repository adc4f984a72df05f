"""Static checks: bandit on the deployed code, checkov on template.yaml, pip-audit on the lock.

    python -m infra.deploy.static_checks [bandit] [checkov] [audit]     (make security; no argument = all)

checkov runs in a tool environment of its own (`uv tool run`): its dependency set conflicts with the
project's pinned boto3. Every check the template skips is justified beside the resource in
template.yaml (Metadata: checkov: skip). pip-audit needs a vulnerability database (PyPI's JSON API or
OSV); where neither is reachable it says so and fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CHECKOV = "checkov==3.3.30"


def bandit() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "bandit"), "-q", "-r", "store", "functions"], cwd=ROOT, capture_output=True, text=True, check=False
    )


def checkov() -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "uv"), "tool", "run", "--from", CHECKOV, "checkov", "-f", "template.yaml"]
    command += ["--framework", "cloudformation", "--compact", "--quiet"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=600)


def audit() -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "pip-audit"), "-r", "requirements/lock.txt", "--no-deps", "--disable-pip"]
    command += ["--progress-spinner", "off", "--strict"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=600)


CHECKS = {"bandit": bandit, "checkov": checkov, "audit": audit}


def main() -> int:
    wanted = sys.argv[1:] or list(CHECKS)
    failed = []
    for name in wanted:
        result = CHECKS[name]()
        sys.stdout.write(result.stdout[-4000:] + result.stderr[-2000:])
        print(f"{name}: {'OK' if result.returncode == 0 else 'FAILED'}", flush=True)
        if result.returncode:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
