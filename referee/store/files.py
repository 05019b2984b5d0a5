"""Atomic writes: a file of the output folder is either its old bytes or its new ones,
never a torn mix (written beside it, then renamed over it). A write that fails (a full
disk) leaves no temporary file behind and is an ``OutputError`` naming the file."""

from __future__ import annotations

import abc
import contextlib
import errno
import os
from pathlib import Path
from typing import Self

from referee.errors import OutputError, RefereeError


def write_error(path: Path, exc: OSError) -> OutputError:
    """The one-line error of a failed write to ``path``: a full disk says so."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return OutputError(f"{path}: the disk is full ({exc.strerror})", disk_full=True)
    return OutputError(f"{path}: cannot write: {exc.strerror or exc}")


def atomic_write(path: Path, data: str | bytes, *, mode: int = 0o644, sync: bool = False) -> None:
    """Replace ``path`` with ``data`` (text is UTF-8) in one rename; with ``sync`` the bytes
    are on disk before the rename (a secret seed must survive a crash). A failure is an
    ``OutputError`` naming ``path``; the old file stays as it was."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(path.name + ".tmp")
    try:
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
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_error(path, exc) from exc


class ClosedOnExit(abc.ABC):
    """``with`` support for a writer of the output folder: closed on leaving; when an error
    is already in flight, a second error from closing is dropped (the first is the one to
    report, e.g. the full disk that made both)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Flush and close (the writer's own)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            self.close()
            return
        with contextlib.suppress(RefereeError):
            self.close()
