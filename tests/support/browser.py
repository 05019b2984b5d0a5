"""The system Chromium for the page tests (``make test`` installs it; no ``playwright install``)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    """Fail without ``/usr/bin/chromium``, or skip when ``REFEREE_SKIP_BROWSER=1``."""
    if CHROMIUM.exists():
        return
    if os.environ.get("REFEREE_SKIP_BROWSER") == "1":
        pytest.skip("REFEREE_SKIP_BROWSER=1 and no /usr/bin/chromium")
    pytest.fail(
        "/usr/bin/chromium is missing: `make test` installs it (Debian package chromium); "
        "set REFEREE_SKIP_BROWSER=1 to skip this test"
    )


@contextlib.contextmanager
def launched() -> Iterator[Any]:
    """The system Chromium driven by Playwright, closed on exit (``require_chromium`` first)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def wait_step(page: Any, k: int) -> None:
    """Wait until the replay viewer in ``page`` shows step ``k`` (0: the deal)."""
    page.wait_for_function(f"document.getElementById('board').dataset.step === '{k}'")
