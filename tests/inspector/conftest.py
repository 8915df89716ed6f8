"""Browser fixtures for the inspector tests: headless Chromium driven by Playwright.

Chromium is Debian's package (``/usr/bin/chromium``, or ``$A2A_CHROMIUM``),
never a Playwright download. Without it (or without Playwright) the browser
tests are skipped, except under ``CI=true``, where that is a failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspector_support import CHROMIUM, Screenshots, browser_or_skip


#: Module scope, not session: Playwright's sync API keeps an event loop running in this
#: thread while it is open, and later tests that call asyncio.run (the SDK interop) would
#: find it there.
@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    sync_playwright = browser_or_skip()
    with sync_playwright() as api:
        yield api


@pytest.fixture(scope="module")
def browser(playwright: Any) -> Iterator[Any]:
    launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    yield launched
    launched.close()


@pytest.fixture(scope="module")
def expect(playwright: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=10_000)
    return playwright_expect


@pytest.fixture()
def screenshots(tmp_path: Path) -> Screenshots:
    return Screenshots(tmp_path)
