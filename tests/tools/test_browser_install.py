"""`make test` brings the console's browser itself (infra/browser.py), so that the README's test command passes on
a new machine: what it finds, what it installs and how, and the one line it stops with when it cannot."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from infra import browser
from infra.browser import DEBIAN, NOT_FOUND, Machine, ensure

ROOT = Path(__file__).resolve().parents[2]


class Fake:
    """A machine with no Chromium until a command that installs one succeeds."""

    def __init__(self, *, root: bool, tools: set[str], sudo_works: bool = False, download_works: bool = False) -> None:
        self.root, self.tools, self.sudo_works, self.download_works = root, tools, sudo_works, download_works
        self.files: set[str] = set()
        self.ran: list[list[str]] = []
        self.pulled: str | None = None

    def run(self, command: Sequence[str]) -> bool:
        self.ran.append(list(command))
        if command[:3] == ["sudo", "-n", "true"]:
            return self.sudo_works
        if "install" in command and "chromium" in command and "apt-get" in command:
            self.files.add(DEBIAN)
        if command[1:] == ["-m", "playwright", "install", "chromium"]:
            if self.download_works:
                self.pulled = "/root/.cache/ms-playwright/chromium/chrome"
            return self.download_works
        return True

    def machine(self) -> Machine:
        return Machine(
            environ={},
            which=lambda name: f"/usr/bin/{name}" if name in self.tools else None,
            exists=lambda path: path in self.files,
            is_root=lambda: self.root,
            run=self.run,
            downloaded=lambda: self.pulled,
        )


def test_a_chromium_already_there_is_used_and_nothing_is_installed() -> None:
    fake = Fake(root=True, tools={"chromium", "apt-get"})
    assert ensure(fake.machine()) == "/usr/bin/chromium" and fake.ran == []
    given = Fake(root=False, tools=set())
    given.files.add("/opt/chrome/chrome")
    machine = given.machine()
    machine.environ = {browser.ENV: "/opt/chrome/chrome"}
    assert ensure(machine) == "/opt/chrome/chrome" and given.ran == []


def test_as_root_debians_chromium_is_installed_with_apt_get() -> None:
    fake = Fake(root=True, tools={"apt-get"})
    assert ensure(fake.machine()) == DEBIAN
    assert [c[c.index("apt-get") :] for c in fake.ran] == [
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "chromium"],
    ]
    assert not any(c[0] == "sudo" for c in fake.ran)


def test_otherwise_through_a_sudo_that_asks_no_password() -> None:
    fake = Fake(root=False, tools={"apt-get", "sudo"}, sudo_works=True)
    assert ensure(fake.machine()) == DEBIAN
    installs = [c for c in fake.ran if "apt-get" in c]
    assert installs and all(c[:2] == ["sudo", "-n"] for c in installs)


def test_without_apt_or_sudo_playwrights_download_is_tried() -> None:
    fake = Fake(root=False, tools={"apt-get", "sudo"}, sudo_works=False, download_works=True)
    assert ensure(fake.machine()) == "/root/.cache/ms-playwright/chromium/chrome"
    assert not any("apt-get" in c for c in fake.ran)
    assert fake.ran[-1][1:] == ["-m", "playwright", "install", "chromium"]


def test_when_nothing_works_it_stops_with_one_line_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = Fake(root=False, tools=set(), download_works=False)
    assert ensure(fake.machine()) is None
    monkeypatch.setattr(browser, "ensure", lambda machine=None: None)
    assert browser.main() == 1
    said = capsys.readouterr().err.strip().splitlines()
    assert said == [NOT_FOUND] and "apt-get install -y chromium" in said[0]


def test_make_test_brings_the_browser_before_the_suite_and_ci_installs_nothing_first() -> None:
    """`make -n unit` (what `make test` runs beside mypy) calls infra.browser before pytest; .ci/run calls `make
    test` with no install of its own ahead of it."""
    planned = subprocess.run(
        ["make", "-n", "-B", "unit", f"PYTHON={sys.executable}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "-m infra.browser" in planned and "-m pytest" in planned
    assert planned.index("-m infra.browser") < planned.index("-m pytest")
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.startswith("#")]
    before = commands[: commands.index("make test")]
    assert before and not any("install" in line or "apt" in line for line in before)
