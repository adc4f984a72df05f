"""Fixtures of the API tests that drive a real browser (Debian's Chromium through Playwright)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from infra.browser import NOT_FOUND
from tests.api.browser import ARGS, CHROMIUM


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, NOT_FOUND  # `make test` installs it first (python -m infra.browser)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == [], errors  # no script error on any page
