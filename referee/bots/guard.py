"""The guard of one managed bot: no bot process outlives the referee.

``process.ManagedBot`` starts ``python -I -S guard.py --grace S -- ARGV...`` in a
session and process group of its own, with a pipe as stdin whose write end only the
referee holds; the referee writes ``stop`` to it only to stop the bot. The guard starts
the bot in the same process group (so ``killpg`` of the guard's pid reaches everything),
with stdin ``/dev/null`` and the guard's stdout and stderr (the bot's log), then waits
for the first of:

- ``stop`` or EOF on stdin: the referee stopped the bot, or died however it died (even
  by SIGKILL, the kernel closes the pipe; EOF without ``stop`` is logged) -> SIGTERM
  to the group, SIGKILL after the grace;
- SIGHUP, the guard's parent-death signal (``PR_SET_PDEATHSIG``, Linux, a second
  line), when the parent is really gone -> the same;
- SIGTERM: somebody signalled the whole group -> wait the grace, then SIGKILL;
- the bot's exit -> SIGKILL what is left of the group (the bot's children) and exit
  as the bot did: with its code, or killed by its signal, so that the referee's
  ``returncode`` keeps meaning the bot's.

Leftovers are found by scanning ``/proc`` for the group (a process cannot ``killpg``
its own group and live to report the bot's code). Standard library only and no import
of ``referee``: run as a script with ``-I -S`` it adds about 10 ms to a bot's start.
Its own messages go to the bot's log, prefixed ``[guard]``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

TYPE_CHECKING = False  # not ``from typing``: importing typing costs the guard's start ~4 ms
if TYPE_CHECKING:
    from typing import NoReturn

STOP = b"stop"  # what the referee writes to the guard's stdin to stop the bot
_POLL_S = 0.05  # how often the bot is polled where no pidfd can be had
_PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> NoReturn:
    """Run the bot of ``argv`` (``--grace S -- COMMAND...``) under guard until it ends."""
    grace, command = _parse(argv)
    parent = os.getppid()
    try:  # first: what follows runs while the bot starts (an EOF or a death is not lost meanwhile)
        bot = os.posix_spawnp(
            command[0],
            command,
            os.environ,
            file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)],
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),  # ignored by Python, default for the bot
        )
    except OSError as exc:
        _say(f"cannot start {command[0]!r}: {exc.strerror or exc}")
        os._exit(127)
    wake = _catch_signals()
    _die_with_parent(signal.SIGHUP)
    pidfd = _pidfd(bot)
    while True:
        fds = [0, wake] + ([pidfd] if pidfd is not None else [])
        ready = select.select(fds, [], [], None if pidfd is not None else _POLL_S)[0]
        code = _reap(bot)
        if code is not None:
            _finish(code, time.monotonic())
        if 0 in ready:
            asked = os.read(0, 512)
            if not asked:
                _say("the referee is gone: stopping the bot")
            if not asked or STOP in asked:
                _shutdown(bot, pidfd, grace, terminate=True)
        if wake in ready:
            signals = os.read(wake, 64)
            if signal.SIGTERM in signals:
                _shutdown(bot, pidfd, grace, terminate=False)
            if signal.SIGHUP in signals and os.getppid() != parent:
                _say("the referee is gone: stopping the bot")
                _shutdown(bot, pidfd, grace, terminate=True)


def _parse(argv: list[str]) -> tuple[float, list[str]]:
    """``--grace S -- COMMAND...`` -> (S, COMMAND)."""
    if len(argv) < 4 or argv[0] != "--grace" or argv[2] != "--":
        _say("usage: guard.py --grace SECONDS -- COMMAND...")
        os._exit(2)
    return float(argv[1]), argv[3:]


def _catch_signals() -> int:
    """Make SIGTERM and SIGHUP wake the main loop: the read end of a pipe that
    receives the number of each signal caught."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)
    return r


def _die_with_parent(sig: int) -> None:
    """Ask Linux to send ``sig`` when the parent dies (best effort, elsewhere nothing)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits, where the OS has them."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _reap(bot: int) -> int | None:
    """The bot's exit code (negative: killed by that signal) once it has exited, else None."""
    pid, status = os.waitpid(bot, os.WNOHANG)
    return os.waitstatus_to_exitcode(status) if pid else None


def _shutdown(bot: int, pidfd: int | None, grace: float, terminate: bool) -> NoReturn:
    """Stop the group: SIGTERM (unless the group already got it), SIGKILL after ``grace``."""
    deadline = time.monotonic() + grace
    if terminate:
        os.killpg(0, signal.SIGTERM)  # the guard too: its handler only wakes the loop
    code = _wait_exit(bot, pidfd, deadline)
    if code is None:
        _say(f"the bot did not stop within {grace:g} s of SIGTERM: SIGKILL")
        os.kill(bot, signal.SIGKILL)
        code = os.waitstatus_to_exitcode(os.waitpid(bot, 0)[1])
    _finish(code, deadline)


def _wait_exit(bot: int, pidfd: int | None, deadline: float) -> int | None:
    """The bot's exit code once it exits before ``deadline``, else None."""
    while True:
        code = _reap(bot)
        left = deadline - time.monotonic()
        if code is not None or left <= 0:
            return code
        select.select([pidfd] if pidfd is not None else [], [], [], left if pidfd is not None else min(left, _POLL_S))


def _finish(code: int, deadline: float) -> NoReturn:
    """The bot has exited: give the rest of its group until ``deadline``, SIGKILL what
    is left, and exit as the bot did."""
    while _group_members() and time.monotonic() < deadline:
        time.sleep(_POLL_S)
    killed = 0
    for _ in range(5):  # a member may fork while it is being killed
        members = _group_members()
        if not members:
            break
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.01)
    if killed:
        _say(f"killed {killed} leftover process(es) of the bot")
    _exit_like(code)


def _group_members() -> list[int]:
    """Live processes of the guard's process group, the guard excepted (Linux /proc)."""
    me, group = os.getpid(), os.getpgrp()
    members = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        state, _ppid, pgrp = stat[stat.rindex(b")") + 2 :].split()[:3]
        if int(pgrp) == group and state != b"Z":
            members.append(int(name))
    return members


def _exit_like(code: int) -> NoReturn:
    """Exit with ``code``, or die of signal ``-code`` (without a core file)."""
    sys.stderr.flush()
    if code < 0:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP are default already
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code  # a signal that does not kill: exit as a shell would report it
    os._exit(code)


def _say(message: str) -> None:
    """One line of the guard's own in the bot's log."""
    print(f"[guard] {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
