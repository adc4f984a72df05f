"""LangGraph's own store tests (tests/test_store.py of the installed langgraph-checkpoint's sdist, fetched from
PyPI at test time, never copied into this repository) run against this store's `MemoryStore`, on the memory
backend and on DynamoDB (moto with the vector emulator), differentially: the same file runs against LangGraph's
`InMemoryStore` first, and ours must pass every test it passes but the differences named below, each a
design choice written in docs/integrations.md."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "langgraph-checkpoint"
# test name -> why this store answers differently from LangGraph's InMemoryStore
DIFFERENCES = {
    "test_embed_with_path": "InMemoryStore keeps one vector per embedded field and ranks an item by its best one; "
    "this store keeps one vector per memory, of its fields' texts joined (a DynamoDB vector index holds one vector "
    "attribute per item; a vector per field would multiply the writes of every put), so an item matching on one "
    "field scores lower than one made of that field alone",
}


@dataclass(frozen=True)
class Outcome:
    passed: set[str]
    failed: set[str]


@pytest.fixture(scope="module")
def their_tests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory holding LangGraph's store tests (of the installed version) under our conftest."""
    where = tmp_path_factory.mktemp("langgraph-store-tests")
    pinned = f"{PACKAGE}=={version(PACKAGE)}"
    download = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", pinned]
    subprocess.run([*download, "-d", str(where)], check=True, timeout=300)
    (sdist,) = where.glob("*.tar.gz")
    tests = where / "tests"
    tests.mkdir()
    with tarfile.open(sdist) as archive:
        for name in ("test_store.py", "embed_test_utils.py"):
            member = next(m for m in archive.getmembers() if m.name.endswith(f"/tests/{name}"))
            source = archive.extractfile(member)
            assert source is not None
            (tests / name).write_bytes(source.read())
    (tests / "__init__.py").write_text("")
    shutil.copy(ROOT / "tests" / "integrations" / "langgraph_store_under_test.py", where / "conftest.py")
    (where / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    return where


def run(where: Path, backend: str) -> Outcome:
    report = where / f"{backend}.xml"
    env = {**os.environ, "AGENT_STORE_BACKEND": backend, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", "tests/test_store.py"],
        cwd=where,
        env=env,
        timeout=600,
        capture_output=True,
    )
    passed, failed = set(), set()
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("name", "")  # with its parameters: each case counts
        bad = any(child.tag in ("failure", "error") for child in case)
        skipped = any(child.tag == "skipped" for child in case)
        if bad:
            failed.add(name)
        elif not skipped:
            passed.add(name)
    return Outcome(passed - failed, failed)


@pytest.mark.extended
@pytest.mark.parametrize("backend", ["memory", "dynamodb"])
def test_langgraphs_own_store_tests_pass_on_this_store(their_tests: Path, backend: str) -> None:
    reference = run(their_tests, "reference")
    assert not reference.failed and len(reference.passed) > 100  # their file's cases, green on their store
    ours = run(their_tests, backend)
    differing = {case.split("[")[0] for case in ours.failed}
    assert differing == set(DIFFERENCES), f"differs from InMemoryStore on {sorted(differing ^ set(DIFFERENCES))}"
    assert ours.passed == {case for case in reference.passed if case.split("[")[0] not in DIFFERENCES}
