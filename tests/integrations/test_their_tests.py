"""Where the frameworks' own tests come from when their sdist holds none (ADK): the clone or snapshot of its
repository that is used, and when none fits, a skip that says what was found, why it does not fit, and how to
get one (tests/integrations/their_tests.py's `adk_snapshot`)."""

from __future__ import annotations

import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.integrations import their_tests
from tests.integrations.their_tests import ADK_REPO_ENV, ADK_SESSION_TESTS, MIRRORS_ENV, adk_snapshot

INSTALLED = version("google-adk")


def repository(where: Path, at: str, conformance: bool) -> Path:
    """A git repository with ADK's version file at `at` and its session tests (taking the shared fixture or not)."""
    files = {
        "src/google/adk/version.py": f'__version__ = "{at}"\n',
        ADK_SESSION_TESTS: "from . import _conformance\n" if conformance else "def test_old(): pass\n",
    }
    for path, text in files.items():
        (where / path).parent.mkdir(parents=True, exist_ok=True)
        (where / path).write_text(text)
    git = ["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "snapshot"], check=True)
    return where


def newer(at: str) -> str:
    major, *_ = at.split(".")
    return f"{int(major) + 1}.0.0"


def test_a_clone_at_the_installed_version_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = repository(tmp_path / "adk", INSTALLED, conformance=True)
    monkeypatch.setenv(ADK_REPO_ENV, str(clone))
    monkeypatch.setenv(MIRRORS_ENV, str(tmp_path / "none"))
    assert adk_snapshot() == (clone / ".git", ".".join(str(int(p)) for p in INSTALLED.split(".")[:3]))


def test_without_a_fitting_one_the_skip_says_what_was_found_and_how_to_get_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirrors = tmp_path / "mirrors"
    ahead = repository(mirrors / "google+adk-python" / "repo", newer(INSTALLED), conformance=True)
    old = repository(mirrors / "someone+adk-python" / "repo", "1.4.2", conformance=False)
    monkeypatch.delenv(ADK_REPO_ENV, raising=False)
    monkeypatch.setenv(MIRRORS_ENV, str(mirrors))
    said = adk_snapshot()
    assert isinstance(said, str)
    assert f"{ahead}/.git is at {newer(INSTALLED)}, newer than the installed {INSTALLED}" in said
    assert f"{old}/.git is at 1.4.2, whose session tests predate" in said
    assert f"--branch v{INSTALLED} https://github.com/google/adk-python" in said and ADK_REPO_ENV in said
    monkeypatch.setenv(MIRRORS_ENV, str(tmp_path / "empty"))
    assert adk_snapshot() == f"{their_tests.how_to_get_adk_tests(INSTALLED)}. Not used: none was found"


def test_the_readme_says_where_adks_tests_come_from_at_the_installed_version() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert f"--branch v{INSTALLED} https://github.com/google/adk-python" in readme and ADK_REPO_ENV in readme
