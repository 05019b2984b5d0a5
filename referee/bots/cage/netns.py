"""Reaching a managed bot in a network of its own (bubblewrap's ``--unshare-net``).

The bot listens on ``{port}`` on the loopback of its own network namespace, which
nothing else shares. The referee reaches it by creating the TCP socket there: for the
instant of ``socket()`` the calling thread enters the bot's namespace (``setns``, the
descriptor of ``/proc/<pid>/ns/net`` opened once per start) and returns to its own; the
socket stays in the bot's namespace and connects to its loopback. No process and no hop
is added, so a request costs what it costs on the host's loopback; only connecting does
more (keep-alive makes that rare). ``setns`` needs ``CAP_SYS_ADMIN``: the referee must
run as root (``usable``), else the bot keeps the host's network and the run says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import socket
import threading
from pathlib import Path

_CLONE_NEWNET = 0x40000000
_lock = threading.Lock()


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library, loaded once."""
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def _own() -> int:
    """This process's own network namespace (a descriptor kept open)."""
    return os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)


def usable() -> bool:
    """Whether the referee can enter a bot's namespace (root, on Linux)."""
    return os.geteuid() == 0 and Path("/proc/self/ns/net").exists()


def find(root: int, depth: int = 3) -> int | None:
    """A descriptor of the first network namespace below process ``root`` (its
    descendants, ``depth`` levels) that is not the referee's; None while there is none."""
    own = os.fstat(_own()).st_ino
    level = [root]
    for _ in range(depth):
        below: list[str] = []
        for pid in level:
            with contextlib.suppress(OSError):
                below += Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for pid_text in below:
            with contextlib.suppress(OSError):
                fd = os.open(f"/proc/{pid_text}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
                if os.fstat(fd).st_ino != own:
                    return fd
                os.close(fd)
        level = [int(p) for p in below]
    return None


def socket_in(netns: int) -> socket.socket:
    """A non-blocking TCP socket created inside the namespace ``netns``."""
    c = libc()
    home = _own()
    with _lock:
        if c.setns(netns, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "cannot enter the bot's network")
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            if c.setns(home, _CLONE_NEWNET) != 0:  # never go on in a bot's network
                os.abort()
    sock.setblocking(False)
    return sock


async def connect(netns: int | None, port: int) -> socket.socket:
    """A socket connected to ``127.0.0.1:port`` in the namespace ``netns`` (None: the referee's own)."""
    if netns is None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
    else:
        sock = socket_in(netns)
    try:
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    except BaseException:
        sock.close()
        raise
    return sock
