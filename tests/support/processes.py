"""Processes a test run left behind."""

from __future__ import annotations

import os
from pathlib import Path


def survivors(mark: str) -> set[int]:
    """Live processes (this one excepted) with ``mark`` in their environment or command line."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            if stat[stat.rindex(b")") + 2 :].split()[0] == b"Z":
                continue
            if mark.encode() in (entry / "environ").read_bytes() + (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
        except OSError:
            continue
    return found
