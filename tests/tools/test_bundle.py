"""The Lambda bundle's contents (building it downloads wheels; CI runs `make bundle` for that)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from infra.deploy import bundle


def pins(path: str) -> dict[str, str]:
    found = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", Path(path).read_text(encoding="utf-8"), re.MULTILINE)
    return {name.lower(): version for name, version in found}


def test_lambda_pins_match_the_lock() -> None:
    lock, lam = pins("requirements/lock.txt"), pins("requirements/lambda.txt")
    assert lam and all(lock.get(name) == version for name, version in lam.items()), {
        n: (v, lock.get(n)) for n, v in lam.items() if lock.get(n) != v
    }
    assert "boto3" not in lam and "botocore" not in lam  # the runtime provides them


def test_bundle_holds_the_library_and_handlers_but_not_the_local_stack(tmp_path: Path) -> None:
    bundle.copy_sources(tmp_path)
    top = {p.name for p in tmp_path.iterdir()}
    assert top == {"store", "functions"}
    assert (tmp_path / "functions" / "api" / "app.py").exists() and (tmp_path / "store" / "py.typed").exists()
    assert not list(tmp_path.rglob("devtoken.py")) and not list(tmp_path.rglob("__pycache__"))
    console = tmp_path / "functions" / "api" / "console"  # the console's static files ship with the function
    assert {p.name for p in console.iterdir()} == {"index.html", "console.js", "console.css"}


def test_deployed_code_never_imports_the_local_stack() -> None:
    """Development tokens live in infra/, which the deployed handlers cannot reach."""
    for path in [*Path("functions").rglob("*.py"), *Path("store").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n == "infra" or n.startswith("infra.") for n in names), path
