"""What a caged bot sees of the host's folders: read-only views with inodes of its own.

Two bots that bind one host folder share its files' inodes, and with them every lock on
them (``flock``, ``fcntl`` record and OFD locks, which the kernel keeps per inode and a
seccomp filter can tell apart only by their command) and every file-change notice: a
channel between two bots, even on read-only files (a read lock, ``F_GETLK`` on a
read-only descriptor). So, as root, the referee mounts for each bot a read-only overlay
of each folder it sees (no upper layer: the folder and an empty folder as its two lower
layers) and binds the overlay, not the folder, into the cage. An overlay's inodes are
its own: a lock one bot takes on ``/usr/lib/...`` or on a shared package file is not seen
by another, while locks on the bot's own files (SQLite, Java's ``FileLock``, on its home,
``/tmp`` or ``/dev/shm``) work as ever. Device nodes (``/dev/null``...) come from a view
of ``/dev`` the same way.

Each folder is opened once (``O_PATH``) and the overlay names that descriptor
(``/proc/self/fd/N``): what is mounted is the folder that was opened and checked, not
what its path names later. The views live on the bot's private disk and go with it
(its lazy unmount detaches them too).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from referee.bots.cage import netns

_MS_RDONLY, _MS_NOSUID, _MS_NODEV = 1, 2, 4
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")  # the nodes bubblewrap's --dev gives a bot


def open_folder(path: str) -> int:
    """An ``O_PATH`` descriptor of the folder ``path`` (links on the way followed: the organiser's)."""
    return os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)


class Views:
    """The overlays of one bot, below ``root`` (a folder of its private disk)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[str, str] = {}
        root.mkdir(mode=0o700)
        (root / "empty").mkdir(mode=0o755)

    def of(self, folder: str, fd: int | None = None, devices: bool = False) -> str | None:
        """The view of the host's ``folder`` (through ``fd`` when given, the descriptor
        that was checked), mounted the first time; None when no overlay can be mounted."""
        if folder in self.made:
            return self.made[folder]
        opened = open_folder(folder) if fd is None else fd
        empty = os.open(self.root / "empty", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        where = self.root / str(len(self.made))
        try:
            where.mkdir(mode=0o755)
            flags = _MS_RDONLY | _MS_NOSUID | (0 if devices else _MS_NODEV)
            # descriptors, not paths: a path could hold a ',' or ':' (the option's separators)
            options = f"lowerdir=/proc/self/fd/{opened}:/proc/self/fd/{empty}".encode()
            mounted = netns.libc().mount(b"overlay", str(where).encode(), b"overlay", flags, options) == 0
        finally:
            os.close(empty)
            if fd is None:
                os.close(opened)
        if not mounted:
            with contextlib.suppress(OSError):
                where.rmdir()
            return None
        self.made[folder] = str(where)
        return str(where)
