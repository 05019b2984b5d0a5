"""The seccomp filter that bubblewrap installs (``--seccomp FD``) before it runs the bot:
no user namespaces, and no kernel object two bots could share.

- ``clone`` and ``unshare`` with ``CLONE_NEWUSER`` fail with EPERM; ``clone3``, whose
  flags a filter cannot read, fails with ENOSYS (the C library then falls back to
  ``clone``).
- The kernel keyring (``add_key``, ``request_key``, ``keyctl``) answers ENOSYS, as a
  kernel without keys: keys are kept per uid and outlive a process, so two bots could
  pass data through them and leave keys behind.
- io_uring (``io_uring_setup``, ``_enter``, ``_register``) answers ENOSYS: its work runs
  in kernel threads that a filter does not see; runtimes such as libuv fall back.
- File-change notification answers as a kernel without it: ``inotify_init``,
  ``inotify_init1``, ``inotify_add_watch`` and ``fanotify_init`` ENOSYS, ``fcntl(F_NOTIFY)``
  EINVAL. A watch on a file that two bots read would tell one of the other's opens and
  reads; libraries that watch files fall back to polling.
- Syscalls of another ABI (x32, i386 on x86-64) fail with EPERM.

Everything else is allowed. Locks on shared files are left to the views (``views.py``:
each bot's files have inodes of their own, so its locks are its own). A filter rather
than bubblewrap's ``--disable-userns``, which needs the bot in a user namespace of its
own: a referee running as root runs bubblewrap without one (the bot drops to its own
uid with ``setpriv``), and one filter serves both paths.
"""

from __future__ import annotations

import errno
import platform
import struct
from typing import NamedTuple

CLONE_NEWUSER = 0x10000000
F_NOTIFY = 1026


class _Arch(NamedTuple):
    """A machine's audit arch and syscall numbers."""

    audit: int
    clone: int
    unshare: int
    fcntl: int
    # clone3, add_key, request_key, keyctl, io_uring_setup, io_uring_enter,
    # io_uring_register, [inotify_init,] inotify_init1, inotify_add_watch, fanotify_init
    enosys: tuple[int, ...]


_ARCHES = {
    "x86_64": _Arch(0xC000003E, 56, 272, 72, (435, 248, 249, 250, 425, 426, 427, 253, 294, 254, 300)),
    "aarch64": _Arch(0xC00000B7, 220, 97, 25, (435, 217, 218, 219, 425, 426, 427, 26, 27, 262)),
}
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (the low half of an argument)


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _fail(e: int) -> bytes:
    return _op(_RET, _ERRNO | e)


def _with_arg(nr: int, offset: int, test: int, value: int, e: int) -> list[bytes]:
    """Syscall ``nr``: fail with ``e`` when its argument at ``offset`` passes ``test`` against ``value``."""
    return [
        _op(_JEQ, nr, 0, 4),  # another syscall: past this block, the number still loaded
        _op(_LD_ABS, offset),
        _op(test, value, 0, 1),
        _fail(e),
        _op(_RET, _ALLOW),
    ]


def program() -> bytes | None:
    """The filter as bubblewrap reads it (``struct sock_filter`` array); None on a
    machine it does not know (its limits are then reported as not enforced)."""
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    body: list[bytes] = []
    if platform.machine() == "x86_64":
        body += [_op(_JGE, _X32_BIT, 0, 1), _fail(errno.EPERM)]
    for nr in arch.enosys:
        body += [_op(_JEQ, nr, 0, 1), _fail(errno.ENOSYS)]
    for nr in (arch.clone, arch.unshare):
        body += _with_arg(nr, _ARG0, _JSET, CLONE_NEWUSER, errno.EPERM)
    body += _with_arg(arch.fcntl, _ARG1, _JEQ, F_NOTIFY, errno.EINVAL)
    head = [_op(_LD_ABS, _ARCH), _op(_JEQ, arch.audit, 1, 0), _fail(errno.EPERM), _op(_LD_ABS, _NR)]
    return b"".join([*head, *body, _op(_RET, _ALLOW)])
