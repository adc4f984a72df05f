"""Running a framework's own test files against this store's adapters, unchanged, from a scratch directory:
fetched at test time (a package's sdist from PyPI, of the installed version; or a snapshot of its repository
on this machine), never copied into this repository.

A conftest of ours (one of tests/integrations/theirs_*.py) is put beside their files: it swaps their
reference implementation for our adapter on the backend named by AGENT_STORE_BACKEND, or leaves it alone for
`reference`. Each file runs once per backend in a process of its own; a run's outcome is read from its JUnit
report, each parametrized case on its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PYTEST_INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


@dataclass(frozen=True)
class Outcome:
    passed: set[str]
    failed: set[str]

    def of(self, param: str) -> Outcome:
        """The cases parametrized last by `param` (`test_x[memory]`), named without it (`test_x`)."""
        end = f"[{param}]"
        return Outcome(
            {c.removesuffix(end) for c in self.passed if c.endswith(end)},
            {c.removesuffix(end) for c in self.failed if c.endswith(end)},
        )

    def __or__(self, other: Outcome) -> Outcome:
        """The cases either passed (a case either failed, unless the other passed it)."""
        passed = self.passed | other.passed
        return Outcome(passed, (self.failed | other.failed) - passed)


def sdist(package: str, where: Path) -> Path:
    """The sdist of the installed version of `package`, downloaded from PyPI into `where`."""
    pinned = f"{package}=={version(package)}"
    download = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", pinned]
    subprocess.run([*download, "-d", str(where)], check=True, timeout=300)
    (archive,) = where.glob("*.tar.gz")
    return archive


def extract(archive: Path, members: Mapping[str, str], into: Path) -> None:
    """Copy the archive's files whose path ends with each key of `members` to `into` / its value."""
    with tarfile.open(archive) as opened:
        names = opened.getnames()
        for suffix, target in members.items():
            (name,) = [n for n in names if n.endswith("/" + suffix)]
            source = opened.extractfile(name)
            assert source is not None
            _write(into / target, source.read())


def under(archive: Path, folder: str) -> list[str]:
    """The Python files of the archive under `folder` (a path inside the package, such as "tests/fixtures/")."""
    with tarfile.open(archive) as opened:
        return [n.partition("/")[2] for n in opened.getnames() if f"/{folder}" in n and n.endswith(".py")]


def from_git(git_dir: Path, commit: str, members: Mapping[str, str], into: Path) -> None:
    """Copy files of a repository snapshot (a git directory) at `commit` to `into` / their targets."""
    for path, target in members.items():
        shown = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], check=True, capture_output=True, timeout=60
        )
        _write(into / target, shown.stdout)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def prepare(where: Path, ours: Mapping[str, str], packages: Iterable[str] = ()) -> None:
    """Put our files (a file of tests/integrations -> where it goes: a conftest.py, or the module their
    tests take their backends from) and the store factory beside their files, with the pytest settings their
    async tests need; `packages` are made packages (an empty __init__.py)."""
    for name, target in ours.items():
        shutil.copy(HERE / name, where / target)
    shutil.copy(HERE / "theirs_stores.py", where / "theirs_stores.py")
    (where / "pytest.ini").write_text(PYTEST_INI)
    for package in packages:
        init = where / package / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        if not init.exists():
            init.write_text("")


def run(where: Path, backend: str, *files: str) -> Outcome:
    """Their `files` run against `backend` (a process of its own): the cases that passed and that failed."""
    report = where / f"{backend}-{abs(hash(files))}.xml"
    env = {**os.environ, "AGENT_STORE_BACKEND": backend, "PYTHONPATH": os.pathsep.join((str(where), str(ROOT)))}
    env.pop("PYTEST_XDIST_WORKER", None)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *files],
        cwd=where,
        env=env,
        timeout=900,
        capture_output=True,
    )
    passed, failed = set(), set()
    for case in ET.parse(report).getroot().iter("testcase"):
        holder = case.get("classname", "").rpartition(".")[2]  # a test class, or the module of a function
        name = f"{holder}::{case.get('name', '')}" if holder[:1].isupper() else case.get("name", "")
        bad = any(child.tag in ("failure", "error") for child in case)
        skipped = any(child.tag == "skipped" for child in case)
        if bad:
            failed.add(name)
        elif not skipped:
            passed.add(name)
    return Outcome(passed - failed, failed)


def base(case: str) -> str:
    """A case's test (class and function), without its parameters."""
    return case.split("[")[0]


def assert_passes_as_theirs(
    reference: Outcome, ours: Outcome, differences: Mapping[str, str], *, at_least: int
) -> None:
    """Ours passes every case their reference passes, but those named in `differences` (a test, each of its
    cases; or one case, with its parameters), each with the reason it differs, which must indeed fail on ours:
    a difference that no longer holds is taken out."""
    assert len(reference.passed) >= at_least, f"their reference passed {len(reference.passed)} cases"
    expected = {c for c in reference.passed if c not in differences and base(c) not in differences}
    missing = sorted(expected - ours.passed)
    assert not missing, f"passes on their reference, not on this store: {missing}"
    held = ours.failed | {base(c) for c in ours.failed}
    stale = sorted(d for d in differences if d not in held)
    assert not stale, f"recorded as differences but passing now: {stale}"


ADK_REPO_ENV = "AGENT_STORE_ADK_REPO"  # a clone of google/adk-python (a work tree or a bare repository)
MIRRORS_ENV = "AGENT_STORE_MIRRORS"  # a directory of repository snapshots (the search tool's `fetch`)
ADK_SESSION_TESTS = "tests/unittests/sessions/test_session_service.py"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _show(git_dir: Path, path: str) -> str | None:
    shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], capture_output=True, text=True)
    return None if shown.returncode else shown.stdout


def adk_candidates() -> list[Path]:
    """The git directories that may hold ADK's tests: AGENT_STORE_ADK_REPO's, then the snapshots under
    AGENT_STORE_MIRRORS (/work/.mirror by default) of google/adk-python or a fork."""
    places = [Path(os.environ[ADK_REPO_ENV])] if os.environ.get(ADK_REPO_ENV) else []
    places += sorted(Path(os.environ.get(MIRRORS_ENV, "/work/.mirror")).glob("*adk-python*/repo"))
    return [p / ".git" if (p / ".git").is_dir() else p for p in places]


def how_to_get_adk_tests(installed: str) -> str:
    return (
        f"ADK's sdist holds no tests: its own session and memory tests are read from a clone of google/adk-python "
        f"at the installed version's tag (git clone --depth 1 --branch v{installed} "
        f"https://github.com/google/adk-python DIR, then {ADK_REPO_ENV}=DIR)"
    )


def adk_snapshot() -> tuple[Path, str] | str:
    """(git directory, version) of the newest clone or snapshot of ADK's repository whose version is not past
    the installed one and whose session tests take the shared `session_service` fixture; or, when none fits,
    why (each one found and what it lacks) and how to get one."""
    installed = version("google-adk")
    fits: list[tuple[tuple[int, ...], Path, str]] = []
    unfit: list[str] = []
    for git_dir in adk_candidates():
        shown = _show(git_dir, "src/google/adk/version.py")
        if shown is None:
            unfit.append(f"{git_dir} is not a repository of ADK")
            continue
        at_text = ".".join(map(str, _version(shown.rpartition("__version__")[2])))
        tests = _show(git_dir, ADK_SESSION_TESTS) or ""
        if _version(at_text) > _version(installed):
            unfit.append(f"{git_dir} is at {at_text}, newer than the installed {installed}")
        elif "_conformance" not in tests:
            unfit.append(f"{git_dir} is at {at_text}, whose session tests predate their shared conformance fixture")
        else:
            fits.append((_version(at_text), git_dir, at_text))
    if fits:
        _, git_dir, at_text = max(fits)
        return git_dir, at_text
    found = "; ".join(unfit) if unfit else "none was found"
    return f"{how_to_get_adk_tests(installed)}. Not used: {found}"
