"""The wheel ships the library and nothing generic beside it: `store` (with its data) and the dist-info;
the Lambda handlers (`functions`) and the repository's tooling (`infra`) stay out, so they cannot collide
with modules of those names in a user's own Lambda project. `agent-store` is the library's CLI."""

from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    uv = Path(sys.executable).with_name("uv")
    # sdist first, the wheel from it: what a release builds, untouched by build/ leftovers in the tree
    subprocess.run([str(uv), "build", "-q", "-o", str(out), str(ROOT)], check=True, timeout=300)
    (built,) = out.glob("agent_session_store-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_the_library_only(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    top = {name.split("/")[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"store"}
    assert "store/py.typed" in names
    assert "store/tools/cli/__init__.py" in names and "store/tools/cli/commands.py" in names
    assert "store/integrations/langgraph.py" in names
    assert not any(n.endswith((".pyc", ".yaml")) or "/tests/" in n for n in names)


def test_the_installed_command_is_the_librarys(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    parsed = configparser.ConfigParser()
    parsed.read_string(wheel.read(entry_points).decode())
    assert dict(parsed["console_scripts"]) == {"agent-store": "store.tools.cli:main"}


def test_the_cli_runs_without_the_repository(tmp_path: Path) -> None:
    """From a directory with no checkout on the path: --version and help work; nothing imports infra."""
    code = (
        "import sys; from store.tools.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
        "assert not any(m == 'infra' or m.startswith(('infra.', 'functions')) for m in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("agent-store ")
