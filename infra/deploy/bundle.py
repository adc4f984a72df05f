"""Build the functions' deployment bundle: build/lambda/ (what template.yaml's CodeUri points at) and
build/agent-session-store-lambda.zip, for Lambda's python3.12 runtime on arm64.

The wheels are installed for that target with uv (`--python-platform aarch64-manylinux2014
--python-version 3.12 --only-binary :all:`), so this machine's Python need not be 3.12. Only store/ and
functions/ are copied: the local stack's development-token code (infra/) is never deployed.
Run: python -m infra.deploy.bundle   (make bundle). It prints the bundle's sizes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
TARGET = BUILD / "lambda"
ZIP = BUILD / "agent-session-store-lambda.zip"
PACKAGES = ("store", "functions")
PLATFORM = "aarch64-manylinux2014"
PYTHON_VERSION = "3.12"
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024


def install_wheels(target: Path) -> None:
    uv = Path(sys.executable).with_name("uv")
    subprocess.run(
        [
            str(uv),
            "pip",
            "install",
            "--quiet",
            "--target",
            str(target),
            "--python-platform",
            PLATFORM,
            "--python-version",
            PYTHON_VERSION,
            "--only-binary",
            ":all:",
            "--no-deps",
            "-r",
            str(ROOT / "requirements" / "lambda.txt"),
        ],
        check=True,
    )


def copy_sources(target: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def zip_tree(source: Path, archive: Path) -> None:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for path in sorted(source.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(source).as_posix())


def size_of(tree: Path) -> int:
    return sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())


def build() -> tuple[int, int]:
    """Build the bundle from scratch; returns (unzipped bytes, zipped bytes)."""
    shutil.rmtree(TARGET, ignore_errors=True)
    TARGET.mkdir(parents=True)
    install_wheels(TARGET)
    copy_sources(TARGET)
    zip_tree(TARGET, ZIP)
    return size_of(TARGET), ZIP.stat().st_size


def main() -> int:
    unzipped, zipped = build()
    mb = 1024 * 1024
    where = f"{TARGET.relative_to(ROOT)}/ {unzipped / mb:.1f} MB unzipped"
    print(f"bundle: {where}; {ZIP.relative_to(ROOT)} {zipped / mb:.1f} MB zipped")
    print(f"target: python{PYTHON_VERSION} on arm64 ({PLATFORM}); Lambda's limit is 250 MB unzipped")
    return 0 if unzipped < LAMBDA_UNZIPPED_LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
