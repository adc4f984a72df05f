"""The adapters stay optional: the base package depends on no framework, and importing the library (its
integrations package included) loads none."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = {"strands-agents", "openai-agents", "google-adk", "langchain-community", "llama-index-core"}
EXTRAS = {"strands": "strands-agents", "openai-agents": "openai-agents", "adk": "google-adk"}


def test_base_dependencies_name_no_framework() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {Requirement(r).name for r in project["dependencies"]}
    assert base.isdisjoint(FRAMEWORKS)
    # the installed metadata agrees: every framework requirement is behind an extra
    for line in metadata.requires("agent-session-store") or []:
        requirement = Requirement(line)
        if requirement.name in FRAMEWORKS:
            assert requirement.marker is not None and "extra" in str(requirement.marker), line


def test_each_adapter_has_its_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, package in EXTRAS.items():
        assert {Requirement(r).name for r in extras[extra]} == {package}


def test_importing_the_library_loads_no_framework() -> None:
    code = (
        "import sys, store, store.integrations, store.integrations._calls;"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('strands', 'agents', 'langchain_community', "
        "'llama_index') or m.startswith('google.adk')];"
        "print(loaded)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"
