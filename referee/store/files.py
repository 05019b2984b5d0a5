"""Atomic writes: a file of the output folder is either its old bytes or its new ones,
never a torn mix (written beside it, then renamed over it)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o644, sync: bool = False) -> None:
    """Replace ``path`` with ``data`` (text is UTF-8) in one rename; with ``sync`` the bytes
    are on disk before the rename (a secret seed must survive a crash). ``OSError``
    propagates: the caller names what failed."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
