"""The guard of one managed bot: no bot process outlives the referee.

``process.ManagedBot`` starts ``python -I -S guard.py --grace S --setup JSON -- ARGV...``
in a session and process group of its own, with a pipe as stdin whose write end only the
referee holds; the referee writes ``stop`` to it only to stop the bot. The guard forks
the bot in the same process group (so ``killpg`` of the guard's pid reaches everything).
Before ``exec`` the child applies the setup of ``sandbox.Cage.prepare``: it joins the
bot's cgroups, opens the seccomp filter for bubblewrap, sets its resource limits, its
folder and, without bubblewrap, its user; the descriptors of ``keep`` (the lock of the
bot's uid) stay the guard's until it exits, the bot never gets them; stdin is ``/dev/null`` and stdout and stderr a pipe the guard copies into the bot's
log (its own stdout) up to ``log_max`` bytes, then one marker line, the rest dropped. The
guard then waits for the first of:

- ``stop`` or EOF on stdin: the referee stopped the bot, or died however it died (even
  by SIGKILL, the kernel closes the pipe; EOF without ``stop`` is logged) -> SIGTERM
  to the group (in a cage to every process but bubblewrap's outer one, whose death
  would kill the cage before the bot's trap runs), SIGKILL after the grace, and a stop
  line in the log (and, the referee being gone, the guard removes the bot's private
  disk and folder and its cgroup itself);
- SIGHUP, the guard's parent-death signal (``PR_SET_PDEATHSIG``, Linux, a second
  line), when the parent is really gone -> the same;
- SIGTERM: somebody signalled the whole group -> wait the grace, then SIGKILL;
- the bot stopped (``SIGSTOP``, a tracer) for half a second -> SIGKILL, so that the
  referee restarts it;
- the bot's exit -> SIGKILL what is left of the group and of the cgroup (the bot's
  children, daemons that left the group) and exit as the bot did: with its code, or
  killed by its signal, so that the referee's ``returncode`` keeps meaning the bot's.

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
SECCOMP_FD = 9  # where bubblewrap finds the seccomp filter (``--seccomp 9``)
_POLL_S = 0.05  # how often the bot is polled where no pidfd can be had
_WATCH_S = 0.5  # how often the guard looks whether its bot is stopped
_PR_SET_PDEATHSIG = 1
_MNT_DETACH = 2


def main(argv: list[str]) -> NoReturn:
    """Run the bot of ``argv`` (``--grace S [--setup JSON] -- COMMAND...``) under guard until it ends."""
    grace, setup, command = _parse(argv)
    for fd in setup.get("keep") or ():  # held by the guard alone (the bot's uid lock), never the bot's
        os.set_inheritable(fd, False)
    parent = os.getppid()
    out_r, out_w = os.pipe()
    # first: what follows runs while the bot starts (an EOF or a death is not lost meanwhile)
    bot = _spawn(command, setup, out_w)
    os.close(out_w)
    relay = _Relay(out_r, int(setup.get("log_max") or 0))
    wake = _catch_signals()
    _die_with_parent(signal.SIGHUP)
    pidfd = _pidfd(bot)
    stopped_since = 0.0
    while True:
        fds = [0, wake] + ([pidfd] if pidfd is not None else []) + ([out_r] if relay.open else [])
        ready = select.select(fds, [], [], _WATCH_S if pidfd is not None else _POLL_S)[0]
        if out_r in ready:
            relay.pump()
        code = _reap(bot)
        if code is not None:
            _finish(code, time.monotonic(), relay, setup)
        if 0 in ready:
            asked = os.read(0, 512)
            if not asked:
                _say("the referee is gone: stopping the bot")
                setup["orphaned"] = True
            if not asked or STOP in asked:
                _shutdown(bot, pidfd, grace, True, relay, setup)
        if wake in ready:
            signals = os.read(wake, 64)
            if signal.SIGTERM in signals:
                _shutdown(bot, pidfd, grace, False, relay, setup)
            if signal.SIGHUP in signals and os.getppid() != parent:
                _say("the referee is gone: stopping the bot")
                setup["orphaned"] = True
                _shutdown(bot, pidfd, grace, True, relay, setup)
        now = time.monotonic()
        stopped_since = (stopped_since or now) if _is_stopped(bot) else 0.0
        if stopped_since and now - stopped_since >= _WATCH_S:  # not a passing ptrace stop
            _say("the bot is stopped (SIGSTOP or a tracer): killed, so that the referee restarts it")
            _kill_members(_procs(setup))
            stopped_since = 0.0


def _parse(argv: list[str]) -> tuple[float, dict, list[str]]:  # type: ignore[type-arg]
    """``--grace S [--setup JSON] -- COMMAND...`` -> (S, setup, COMMAND)."""
    setup: dict = {}  # type: ignore[type-arg]
    if len(argv) >= 6 and argv[2] == "--setup":
        import json

        setup = json.loads(argv[3])
        argv = argv[:2] + argv[4:]
    if len(argv) < 4 or argv[0] != "--grace" or argv[2] != "--":
        _say("usage: guard.py --grace SECONDS [--setup JSON] -- COMMAND...")
        os._exit(2)
    return float(argv[1]), setup, argv[3:]


def _spawn(command: list[str], setup: dict, out: int) -> int:  # type: ignore[type-arg]
    """Fork the bot: its cgroup, limits, user and folder from ``setup``, stdout and
    stderr into the pipe ``out``, stdin ``/dev/null``; exit 127 when it cannot start."""
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: nothing here may return to the guard's loop
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        for folder in setup.get("cgroups") or ():
            with open(os.path.join(folder, "cgroup.procs"), "w") as fh:
                fh.write(str(os.getpid()))
        if setup.get("seccomp"):  # bubblewrap reads the filter from this descriptor
            fd = os.open(setup["seccomp"], os.O_RDONLY)
            if fd != SECCOMP_FD:
                os.dup2(fd, SECCOMP_FD)
                os.close(fd)
            os.set_inheritable(SECCOMP_FD, True)
        import resource

        for name, value in (setup.get("rlimits") or {}).items():
            limit = getattr(resource, "RLIMIT_" + name)
            hard = resource.getrlimit(limit)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (value, value))
        if setup.get("cwd"):
            os.chdir(setup["cwd"])
        if setup.get("user"):
            uid, gid = setup["user"]
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)  # ignored by Python or caught by the guard: default for the bot
        os.execvp(command[0], command)
    except BaseException as exc:  # the child must exit, whatever went wrong
        reason = getattr(exc, "strerror", None) or exc
        os.write(2, f"[guard] cannot start {command[0]!r}: {reason}\n".encode(errors="replace"))
    os._exit(127)


class _Relay:
    """Copies the bot's output into its log (the guard's stdout) up to ``limit`` bytes
    of the file, then writes one marker line and drops the rest."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.open = True
        try:
            size = os.fstat(1).st_size
        except OSError:
            size = 0
        self.left = limit - size if limit > 0 else -1
        self.limit = limit
        self.capped = limit > 0 and self.left <= 0
        os.set_blocking(fd, False)

    def pump(self, rounds: int = 16) -> None:
        """Copy what the pipe holds now (a bounded number of reads per call)."""
        for _ in range(rounds):
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.open = False
                return
            self._write(data)

    def drain(self, deadline: float) -> None:
        """Copy the rest once the bot is gone (until EOF or ``deadline``)."""
        while self.open and time.monotonic() < deadline:
            select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            self.pump()

    def _write(self, data: bytes) -> None:
        if self.left >= 0 and not self.capped and len(data) > self.left:
            data = data[: self.left]
            self.capped = True
        elif self.capped:
            return
        if self.left >= 0:
            self.left -= len(data)
        try:
            os.write(1, data)
            if self.capped:
                mb = self.limit / (1024 * 1024)
                os.write(1, f"\n--- log cap of {mb:g} MB reached: the rest of the bot's output is dropped\n".encode())
        except OSError:
            self.capped = True  # a full disk: drop the rest, never block the bot


def _is_stopped(pid: int) -> bool:
    """Whether the bot's process is stopped (state T or t)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] in (b"T", b"t")


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


def _shutdown(bot: int, pidfd: int | None, grace: float, terminate: bool, relay: _Relay, setup: dict) -> NoReturn:  # type: ignore[type-arg]
    """Stop the group: SIGTERM (unless the group already got it), SIGKILL after ``grace``;
    the stop line in the log."""
    started = time.monotonic()
    deadline = started + grace
    if terminate and setup.get("caged"):
        # bubblewrap's outer process is spared: its death would kill the cage at once
        _signal_members(signal.SIGTERM, spare=bot, cgroup=_procs(setup))
    elif terminate:
        os.killpg(0, signal.SIGTERM)  # the guard too: its handler only wakes the loop
    code = _wait_exit(bot, pidfd, deadline, relay)
    ms = (time.monotonic() - started) * 1000
    if code is None:
        os.kill(bot, signal.SIGKILL)
        code = os.waitstatus_to_exitcode(os.waitpid(bot, 0)[1])
        ended = f"killed (SIGKILL): still running {grace:g} s after SIGTERM"
    else:
        ended = f"{_ended(code)} after {ms:.0f} ms"
    relay.drain(time.monotonic() + 0.2)  # the bot's last words before the stop line
    print(f"--- stop (SIGTERM), {ended}", flush=True)
    _finish(code, deadline, relay, setup)


def _ended(code: int) -> str:
    """``exited 0``, ``killed by SIGTERM``; bubblewrap reports a signal as 128 + its number."""
    if code > 128 and code - 128 in signal.valid_signals():
        code = 128 - code
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exited {code}"


def _signal_members(sig: int, spare: int, cgroup: str | None) -> None:
    """Send ``sig`` to every process of the guard's group and of the bot's cgroup but ``spare``."""
    for pid in _members(cgroup):
        if pid != spare:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)


def _procs(setup: dict) -> str | None:  # type: ignore[type-arg]
    """The cgroup folder that lists the bot's processes, if it has one."""
    folders = setup.get("cgroups") or [None]
    return folders[0]  # type: ignore[no-any-return]


def _wait_exit(bot: int, pidfd: int | None, deadline: float, relay: _Relay) -> int | None:
    """The bot's exit code once it exits before ``deadline``, else None."""
    while True:
        code = _reap(bot)
        left = deadline - time.monotonic()
        if code is not None or left <= 0:
            return code
        fds = ([pidfd] if pidfd is not None else []) + ([relay.fd] if relay.open else [])
        if relay.fd in select.select(fds, [], [], left if pidfd is not None else min(left, _POLL_S))[0]:
            relay.pump()


def _finish(code: int, deadline: float, relay: _Relay, setup: dict) -> NoReturn:  # type: ignore[type-arg]
    """The bot has exited: give the rest of its group until ``deadline``, SIGKILL what
    is left (in its cgroup too: daemons that left the group), and exit as the bot did."""
    while _group_members() and time.monotonic() < deadline:
        relay.pump()
        time.sleep(_POLL_S)
    killed = _kill_members(_procs(setup))
    if killed:
        _say(f"killed {killed} leftover process(es) of the bot")
    relay.drain(time.monotonic() + 1.0)
    if setup.get("orphaned"):
        _clean_up(setup)
    _exit_like(code)


def _clean_up(setup: dict) -> None:  # type: ignore[type-arg]
    """The referee is gone and cannot: remove the bot's private folder (its disk first)
    and cgroup."""
    import shutil

    if setup.get("private"):
        if setup.get("disk"):
            unmount(setup["private"])
        shutil.rmtree(setup["private"], ignore_errors=True)
    for _ in range(50):
        if not _cgroup_members(_procs(setup)):
            break
        time.sleep(0.01)
    for folder in setup.get("cgroups") or ():
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def unmount(path: str) -> None:
    """Detach the mount at ``path`` (best effort; its files go once nothing uses them)."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).umount2(path.encode(), _MNT_DETACH)


def _kill_members(cgroup: str | None = None) -> int:
    """SIGKILL every process of the guard's group (and of the bot's cgroup); how many."""
    killed = 0
    for _ in range(5):  # a member may fork while it is being killed
        members = _members(cgroup)
        if not members:
            break
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.01)
    return killed


def _members(cgroup: str | None) -> set[int]:
    """Every process of the guard's group and of the bot's cgroup."""
    return set(_group_members()) | set(_cgroup_members(cgroup))


def _cgroup_members(cgroup: str | None) -> list[int]:
    """Processes in the bot's cgroup (none without one)."""
    if not cgroup:
        return []
    try:
        with open(os.path.join(cgroup, "cgroup.procs")) as fh:
            return [int(p) for p in fh.read().split() if int(p) != os.getpid()]
    except OSError:
        return []


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
