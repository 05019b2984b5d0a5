"""The system Chromium for the page tests (``make test`` installs it; no ``playwright install``)."""

from __future__ import annotations

import os
from pathlib import Path

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
