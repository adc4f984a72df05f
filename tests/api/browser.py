"""The console's browser: where Chromium is, how it is launched, how a test signs in and keeps screenshots."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from infra.browser import Machine, found
from infra.local.stack import LocalStack

CHROMIUM = found(Machine())  # where `make test` found or installed it (infra/browser.py); None: nowhere
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip


def shots(tmp_path: Path) -> Path:
    """Where screenshots go: $AGENT_STORE_SCREENSHOTS (`make screenshots`: the README's) or `tmp_path`."""
    where = Path(os.environ.get("AGENT_STORE_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def open_console(page: Any, stack: LocalStack, owner: str, fragment: str = "/") -> None:
    """The console, freshly loaded with a sign-in link for `owner` (a link is used at load only)."""
    page.goto("about:blank")
    page.goto(stack.sign_in_link(stack.token(owner)))
    page.wait_for_selector("table[aria-label=Sessions] tbody tr")
    if fragment != "/":
        page.evaluate(f"location.hash = {json.dumps('#' + fragment)}")
