"""No user namespaces inside the cage: a seccomp filter that bubblewrap installs
(``--seccomp FD``) before it runs the bot.

``clone`` and ``unshare`` with ``CLONE_NEWUSER`` fail with EPERM; ``clone3``, whose flags
a filter cannot read, fails with ENOSYS (the C library then falls back to ``clone``);
syscalls of another ABI (x32, i386 on x86-64) fail with EPERM. Everything else is
allowed. A filter rather than bubblewrap's ``--disable-userns``, which needs the bot in
a user namespace of its own: a referee running as root runs bubblewrap without one
(the bot drops to ``bot_user`` with ``setpriv``), and one filter serves both paths.
"""

from __future__ import annotations

import errno
import platform
import struct

CLONE_NEWUSER = 0x10000000
# per machine: the audit arch and the numbers of clone, unshare, clone3
_ARCHES = {
    "x86_64": (0xC000003E, 56, 272, 435),
    "aarch64": (0xC00000B7, 220, 97, 435),
}
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program() -> bytes | None:
    """The filter as bubblewrap reads it (``struct sock_filter`` array); None on a
    machine it does not know (the limit is then reported as not enforced)."""
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit, clone, unshare, clone3 = arch
    x32 = 0xFFFFFFFF if platform.machine() != "x86_64" else _X32_BIT  # aarch64: never taken
    return b"".join(
        [
            _op(_LD_ABS, 4),  # 0: arch
            _op(_JEQ, audit, 0, 9),  # 1: another ABI -> 11
            _op(_LD_ABS, 0),  # 2: syscall number
            _op(_JGE, x32, 8, 0),  # 3: x32 -> 12
            _op(_JEQ, clone3, 5, 0),  # 4: -> 10
            _op(_JEQ, unshare, 1, 0),  # 5: -> 7
            _op(_JEQ, clone, 0, 2),  # 6: else -> 9
            _op(_LD_ABS, 16),  # 7: flags (the low half of the first argument)
            _op(_JSET, CLONE_NEWUSER, 2, 0),  # 8: -> 11
            _op(_RET, _ALLOW),  # 9
            _op(_RET, _ERRNO | errno.ENOSYS),  # 10
            _op(_RET, _ERRNO | errno.EPERM),  # 11
            _op(_RET, _ERRNO | errno.EPERM),  # 12
        ]
    )
