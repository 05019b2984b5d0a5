"""A uid of its own for every managed bot (a referee running as root).

The uids come from ``FIRST_UID`` on, ``SLOTS`` of them: inside the range that systemd's
table of uids (``UIDS-GIDS.md``) leaves unused, 1879048192-2147352575, past the
container ranges (524288-1879048191) and below 2^31 (tools that read a uid as a signed
int). A candidate is skipped when an account or group of the machine has it (``pwd``
and ``grp``, so NSS sources too), when ``/etc/subuid`` or ``/etc/subgid`` hand it out,
or when a process of the machine runs as it. The gid is the same number.

A uid is held by an exclusive ``flock`` on ``LOCK_DIR/<uid>`` (root's, mode 0700): one
lock per uid and per host, so concurrent referee runs on one machine, and the bots of
every Dask worker of that machine, never share one. The referee holds the lock while the
bot may run and hands a copy to the bot's guard, which keeps it until the last process
of the bot is gone (the lock outlives a referee killed by -9 for the grace); the kernel
drops it when both are closed.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path

FIRST_UID = 1_900_000_000
SLOTS = 65_536
LOCK_DIR = Path("/run/referee-uids")
_SUBORDINATE = ("/etc/subuid", "/etc/subgid")


def own_uids() -> bool:
    """Whether started bots get a uid of their own here (the referee runs as root)."""
    return os.geteuid() == 0


@dataclass
class BotUid:
    """A uid held for one bot: ``fd`` is the lock (an open ``LOCK_DIR/<uid>``)."""

    uid: int
    fd: int

    def release(self) -> None:
        """Drop the referee's hold on the uid (the guard's copy may hold it a little longer)."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


class NoUidLeft(OSError):
    """Every uid of the range is taken or in use."""


def claim(lock_dir: Path = LOCK_DIR) -> BotUid:
    """The first free uid of the range, locked for this process (``NoUidLeft`` when none is)."""
    folder = _lock_folder(lock_dir)
    busy = _running_uids() | _subordinate_ranges()
    for uid in range(FIRST_UID, FIRST_UID + SLOTS):
        if uid in busy or _known(uid):
            continue
        fd = os.open(f"{uid}", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        os.close(folder)
        return BotUid(uid, fd)
    os.close(folder)
    raise NoUidLeft(f"no free uid left in {FIRST_UID}-{FIRST_UID + SLOTS - 1}")


def _lock_folder(lock_dir: Path) -> int:
    """A descriptor of the lock folder, made root's and 0700 if missing; refused when it
    is a link or anybody else's (another user could hold or fake the locks)."""
    with contextlib.suppress(FileExistsError):
        lock_dir.mkdir(mode=0o700, parents=True)
    fd = os.open(lock_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    if st.st_uid != 0 or stat.S_IMODE(st.st_mode) & 0o077:
        os.close(fd)
        raise PermissionError(f"{lock_dir} must be root's and mode 0700 (it holds the bots' uid locks)")
    return fd


def _known(uid: int) -> bool:
    """Whether an account or a group of the machine has this number."""
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        pass
    try:
        grp.getgrgid(uid)
        return True
    except KeyError:
        return False


def _running_uids() -> set[int]:
    """The uids of the processes running now (``/proc/<pid>`` is owned by its process's euid)."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    found.add(entry.stat(follow_symlinks=False).st_uid)
    return found


def _subordinate_ranges() -> set[int]:
    """Uids of the range that ``/etc/subuid`` or ``/etc/subgid`` hand out (user namespaces of users)."""
    taken: set[int] = set()
    last = FIRST_UID + SLOTS
    for path in _SUBORDINATE:
        with contextlib.suppress(OSError, ValueError):
            for line in Path(path).read_text().splitlines():
                parts = line.strip().split(":")
                if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                    start, count = int(parts[1]), int(parts[2])
                    taken.update(range(max(start, FIRST_UID), min(start + count, last)))
    return taken
