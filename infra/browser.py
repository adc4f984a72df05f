"""The browser the console's tests drive, made present before the suite runs (`make test` calls this first):

    python -m infra.browser        # prints where Chromium is, installing it if it must; exit 1 if it cannot

In this order: a Chromium already there (AGENT_STORE_CHROMIUM, `chromium` on the PATH, /usr/bin/chromium, or
one Playwright installed before); Debian's `chromium` package through apt-get, as root or through sudo that asks
no password; Playwright's own download (`playwright install chromium`, where its CDN is reachable). When none
works it says, in one line, what to install, and `make test` stops there instead of failing the browser tests
one by one minutes later."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ENV = "AGENT_STORE_CHROMIUM"
DEBIAN = "/usr/bin/chromium"
NOT_FOUND = (
    "make test: the console's browser tests need Chromium, which is not installed and could not be: "
    "install it (Debian/Ubuntu: sudo apt-get install -y chromium; elsewhere: .venv/bin/python -m playwright "
    "install chromium), or set AGENT_STORE_CHROMIUM to a Chromium's path, then run make test again"
)


def _run(command: Sequence[str]) -> bool:
    """Run `command`, its output kept from the terminal unless it fails; whether it succeeded."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired):
        return False
    if done.returncode:
        print(f"infra.browser: {' '.join(command)} failed: {done.stderr.strip()[-500:]}", file=sys.stderr)
    return done.returncode == 0


def playwright_chromium() -> str | None:
    """The Chromium Playwright downloaded (`playwright install chromium`), if it did."""
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            path = playwright.chromium.executable_path
    except Exception:
        return None
    return path if path and Path(path).exists() else None


@dataclass
class Machine:
    """What the installer looks at and does (the real machine's by default; a test's fakes otherwise)."""

    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    which: Callable[[str], str | None] = shutil.which
    exists: Callable[[str], bool] = os.path.exists
    is_root: Callable[[], bool] = lambda: os.geteuid() == 0
    run: Callable[[Sequence[str]], bool] = _run
    downloaded: Callable[[], str | None] = playwright_chromium


def found(machine: Machine) -> str | None:
    """A Chromium already on the machine, or None."""
    given = machine.environ.get(ENV)
    if given and machine.exists(given):
        return given
    on_path = machine.which("chromium")
    if on_path:
        return on_path
    return DEBIAN if machine.exists(DEBIAN) else machine.downloaded()


def _apt(machine: Machine) -> bool:
    """Debian's chromium through apt-get, as root or through a sudo that asks no password."""
    if machine.which("apt-get") is None:
        return False
    prefix: list[str] = []
    if not machine.is_root():
        if machine.which("sudo") is None or not machine.run(["sudo", "-n", "true"]):
            return False
        prefix = ["sudo", "-n"]
    env = ["env", "DEBIAN_FRONTEND=noninteractive"]
    return machine.run([*prefix, *env, "apt-get", "update", "-qq"]) and machine.run(
        [*prefix, *env, "apt-get", "install", "-y", "-qq", "chromium"]
    )


def ensure(machine: Machine | None = None) -> str | None:
    """Where Chromium is, after installing it if it was not there (None when it could not be)."""
    machine = machine or Machine()
    path = found(machine)
    if path is not None:
        return path
    if _apt(machine):
        path = found(machine)
        if path is not None:
            return path
    if machine.run([sys.executable, "-m", "playwright", "install", "chromium"]):
        return machine.downloaded()
    return None


def main() -> int:
    path = ensure()
    if path is None:
        print(NOT_FOUND, file=sys.stderr)
        return 1
    print(f"browser tests: Chromium at {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
