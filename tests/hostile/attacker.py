"""A cheating contestant: plays the twin's moves (``twin.py``) and tries one attack for real.

    python tests/hostile/attacker.py --attack ATTACK --seeds FILE --mark MARK --search DIR --port PORT

The attack starts at the first ``act`` (every bot of the run is up by then), in a thread,
so the bot keeps answering; ``--attack A,B`` tries several at once, each in a thread of its
own (fewer seats for one run). What it got goes to stdout (its log), one ``ATTACK ...`` line
each; ``tests/test_cage.py`` reads them. To stay harmless on a shared machine without the
cage, its victims are only processes whose environment holds ``REFEREE_TEST_MARK=MARK``
(the test gives it to every bot of the run) and files under ``--search``:

- ``secrets``: the environment it was given; every ``REFEREE_BOT_TOKEN`` and
  ``ORGANISER_SECRET`` in ``/proc/*/environ`` (rivals', its guard's, the referee's);
- ``journal``: opens for writing every ``matches.jsonl`` under ``--search`` and every one
  open in an ancestor process (``/proc/<pid>/fd``), and appends a forged line;
- ``kill``: SIGKILLs every marked rival it can see and listens on its port;
- ``stop``: SIGSTOPs every marked rival it can see;
- ``daemon``: a ``setsid`` child and a double-forked grandchild that sleep for minutes
  (their command line holds MARK);
- ``flood``: writes 3 MB to stdout;
- ``fork``: forks up to 1,000 sleeping children;
- ``memory``: allocates 4 GB;
- ``reach``: connects to every port of 127.0.0.1 but its own and to ``--targets`` (the
  test's stand-ins for the referee's and a Dask scheduler's ports), lists what
  ``/proc/net/tcp`` shows listening; with ``--ports targets`` only the targets (without
  the cage: the host's other ports are other tests' and other users');
- ``collude``: meets a partner (another bot with the same attack) over an abstract unix
  socket and over ``--collude-port`` on loopback: the first to bind waits, the second
  connects;
- ``disk``: writes 8 MiB files into ``$TMPDIR`` (up to 400 MiB); ``files``: 20,000 empty
  files into ``$HOME``; ``shared``: touches 600 MiB of ``MAP_SHARED`` anonymous memory;
  ``tmpfs``: writes 600 MiB into ``/tmp`` (a tmpfs in the cage): each says how far it got;
- ``userns``: ``unshare -Ur true``; ``spin``: three processes spin for 1.5 s, and it
  says how many cores they used together.

Channels between two bots and the neighbours of a bot (issue 34):

- ``keyring``: adds 50 keys to its user keyring, then (after 1.5 s) counts the keys of a
  partner (another ``keyring`` bot: the same MARK, another pid) it can see in
  ``/proc/keys``, then invalidates its own;
- ``locksend`` takes a ``flock``, an fcntl read lock and an OFD read lock on each shared
  file (the interpreter, ``/usr/bin/env``, ``/etc/passwd``, ``/dev/null``, this script,
  the ``sample_bots`` package) and holds them 5 s; ``lockrecv`` looks for them
  (``LOCK_NB``, ``F_GETLK``, ``F_OFD_GETLK``) and then locks files of its own (SQLite in
  its home, ``fcntl`` in ``/tmp``), which must work;
- ``notify``: ``inotify_init1`` and ``fcntl(F_NOTIFY)`` on its folder; ``iouring``:
  ``io_uring_setup``; ``shm``: a ``multiprocessing.Lock()``, then 600 MiB into ``/dev/shm``;
- ``neighbour`` (run without a cage): reads the environment of every process of the
  other bots of its run (found by their cgroups), attaches
  to it with ``ptrace``, signals it (signal 0), writes into every bot's private folder
  (``/tmp/referee-bot-*``), and takes every inotify instance its uid may have (none
  with ``--spare-inotify``: without the cage its uid is the referee's, root's).
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import fcntl
import glob
import mmap
import os
import platform
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from twin import fallback_action, load_seeds

from sample_bots._server import serve

SLEEP = "import time, sys; time.sleep(120)"
WAITED = {"reach", "collude", "disk", "files", "shared", "tmpfs", "userns", "spin"}  # answered once done
WAITED |= {"keyring", "locksend", "lockrecv", "notify", "iouring", "shm", "neighbour"}
# syscall numbers: add_key, keyctl, inotify_init1, io_uring_setup, ptrace
SYSCALLS = {"x86_64": (248, 250, 294, 425, 101), "aarch64": (217, 219, 26, 425, 117)}[platform.machine()]
F_OFD_GETLK, F_OFD_SETLK, F_NOTIFY, DN_ACCESS = 36, 37, 1026, 1
libc = ctypes.CDLL(None, use_errno=True)


def syscall(nr: int, *args: Any) -> str:
    """Call it; ``ok N`` or the name of its errno."""
    result = libc.syscall(nr, *args)
    return f"ok {result}" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")


def keyring_attack(mark: str) -> None:
    add_key, keyctl = SYSCALLS[0], SYSCALLS[1]
    added = []
    for i in range(50):
        got = syscall(add_key, b"user", f"referee-{mark}-{os.getpid()}-{i}".encode(), b"hand", 4, -4)
        if not got.startswith("ok"):
            say(f"keyring: add_key refused: {got}")
            break
        added.append(int(got.split()[1]))
    say(f"keyring: {len(added)} key(s) added")
    time.sleep(1.5)
    try:
        keys = Path("/proc/keys").read_text().splitlines()
    except OSError:
        keys = []
    partner = [k for k in keys if f"referee-{mark}-" in k and f"-{os.getpid()}-" not in k]
    say(f"keyring: {len(partner)} key(s) of a partner seen" + (" KEYS SEEN" if partner else ""))
    time.sleep(1.5)
    for key in added:  # KEYCTL_INVALIDATE: the run leaves no key of its own behind
        syscall(keyctl, 21, key)


def shared_files() -> list[str]:
    """Files every python bot of the run reads, on the read-only mounts of its cage."""
    import sample_bots

    return [sys.executable, "/usr/bin/env", "/etc/passwd", "/dev/null", __file__, sample_bots.__file__]


def lock_args(kind: int, start: int) -> bytes:
    return struct.pack("hhqqi", kind, os.SEEK_SET, start, 1, 0)


def locksend_attack() -> None:
    held = []
    for path in shared_files():
        fd = os.open(path, os.O_RDONLY)
        held.append(fd)
        for name, cmd in (("flock", 0), ("posix", fcntl.F_SETLK), ("ofd", F_OFD_SETLK)):
            try:
                if cmd:
                    fcntl.fcntl(fd, cmd, lock_args(fcntl.F_RDLCK, 0 if name == "posix" else 1))
                else:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                say(f"lock send: {name} on {path}: {exc.strerror}")
    say(f"lock send: holding locks on {len(held)} shared file(s)")
    time.sleep(5)
    for fd in held:
        os.close(fd)


def lockrecv_attack() -> None:
    time.sleep(1.5)
    seen = 0
    for path in shared_files():
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            seen += 1
            say(f"LOCKSEEN flock {path}")
        for name, cmd, start in (("posix", fcntl.F_GETLK, 0), ("ofd", F_OFD_GETLK, 1)):
            got = fcntl.fcntl(fd, cmd, lock_args(fcntl.F_WRLCK, start))
            if struct.unpack("hhqqi", got)[0] != fcntl.F_UNLCK:
                seen += 1
                say(f"LOCKSEEN {name} {path}")
        os.close(fd)
    say(f"lock recv: saw {seen} lock(s) of another bot")
    import sqlite3

    try:
        db = sqlite3.connect(Path(os.environ.get("HOME", ".")) / "own.db")
        db.execute("BEGIN EXCLUSIVE")
        db.execute("CREATE TABLE t (x)")
        db.execute("INSERT INTO t VALUES (1)")
        db.commit()
        with open(Path(os.environ.get("TMPDIR", "/tmp")) / "own.lock", "w") as own:
            fcntl.lockf(own, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(own, fcntl.LOCK_EX | fcntl.LOCK_NB)
        say("lock own files: sqlite, lockf and flock work")
    except (OSError, sqlite3.Error) as exc:
        say(f"lock own files: FAILED {exc}")


def notify_attack() -> None:
    say(f"notify: inotify_init1 {syscall(SYSCALLS[2], 0)}")
    fd = os.open(os.path.dirname(__file__), os.O_RDONLY)
    try:
        fcntl.fcntl(fd, F_NOTIFY, DN_ACCESS)
        say("notify: F_NOTIFY ok")
    except OSError as exc:
        say(f"notify: F_NOTIFY {errno.errorcode.get(exc.errno or 0, '?')}")


def shm_attack() -> None:
    import multiprocessing

    try:
        lock = multiprocessing.Lock()
        with lock:
            say("shm: multiprocessing.Lock works")
    except OSError as exc:
        say(f"shm: multiprocessing.Lock FAILED: {exc}")
    chunk = b"x" * (1 << 20)
    fill("shm", lambda i: Path(f"/dev/shm/m{i}").write_bytes(chunk), 600, "MiB")


def run_pids() -> tuple[list[int], str]:
    """The other bots' processes of its run, found by their cgroups (``referee-<referee
    pid>-<bot>-...``, readable by anyone, unlike an environment), and the referee's pid."""
    own = Path("/proc/self/cgroup").read_text()
    found = re.search(r"referee-(\d+)-[^/\n]*", own)
    if found is None:
        return [], ""
    run, group = f"referee-{found.group(1)}-", found.group(0)
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cgroup = (entry / "cgroup").read_text()
            except OSError:
                continue
            if run in cgroup and group not in cgroup:
                pids.append(int(entry.name))
    return pids, found.group(1)


def neighbour_attack(mark: str, grab: bool = True) -> None:
    pids, referee = run_pids()
    environ = attached = signalled = 0
    for pid in pids:
        try:
            Path(f"/proc/{pid}/environ").read_bytes()
            environ += 1
        except OSError:
            pass
        if libc.syscall(SYSCALLS[4], 16, pid, 0, 0) == 0:  # PTRACE_ATTACH, then let it go
            attached += 1
            os.waitpid(pid, 0)
            libc.syscall(SYSCALLS[4], 17, pid, 0, 0)
        try:
            os.kill(pid, 0)
            signalled += 1
        except OSError:
            pass
    mine = os.path.dirname(os.environ.get("HOME", "/nowhere/home"))
    tops = [f for f in glob.glob(f"/tmp/referee-bot-{referee}-*") if f != mine]  # /tmp is listed by anyone
    folders = [os.path.join(top, sub) for top in tops for sub in ("home", "tmp")]
    written = 0
    for folder in folders:
        try:
            Path(folder, f"neighbour-{os.getpid()}").write_text("hand")
            Path(folder, f"neighbour-{os.getpid()}").unlink()
            written += 1
        except OSError:
            pass
    say(
        f"neighbour: of {len(pids)} other bots' process(es) read {environ} environment(s), "
        f"attached to {attached}, could signal {signalled}; wrote into {written} of {len(folders)} private folder(s)"
    )
    taken: list[int] = []
    while grab and len(taken) < 100_000:
        got = syscall(SYSCALLS[2], 0)
        if not got.startswith("ok"):
            break
        taken.append(int(got.split()[1]))
    say(f"neighbour: took {len(taken)} inotify instance(s)")
    time.sleep(2 if grab else 0)  # the other neighbour takes its own meanwhile
    for fd in taken:
        os.close(fd)


def say(line: str) -> None:
    """One result line in the bot's log."""
    print(f"ATTACK {line}", flush=True)


def marked_pids(mark: str) -> list[int]:
    """Processes it can see whose environment holds the run's mark (itself excepted)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if f"REFEREE_TEST_MARK={mark}".encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def secrets_attack(mark: str) -> None:
    say("ENV " + ",".join(sorted(os.environ)))
    own = os.environ.get("REFEREE_BOT_TOKEN", "")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for var in environ:
            name, _, value = var.decode(errors="replace").partition("=")
            if name == "REFEREE_BOT_TOKEN" and value != own:
                say(f"GOT token of pid {entry.name}")
            if name == "ORGANISER_SECRET":
                say(f"GOT organiser secret from pid {entry.name}")
    say("secrets done")


def ancestors() -> list[int]:
    pids, pid = [], os.getppid()
    while pid > 1:
        pids.append(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            break
        pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
    return pids


def journal_attack(search: str) -> None:
    targets: set[str] = set()
    for root, _dirs, files in os.walk(search):
        targets.update(os.path.join(root, f) for f in files if f == "matches.jsonl")
    for pid in ancestors():
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd).endswith("matches.jsonl"):
                    targets.add(str(fd))
            except OSError:
                continue
    say(f"journal candidates {len(targets)}")
    for target in sorted(targets):
        try:
            with open(target, "a") as fh:
                fh.write('{"forged": true}\n')
            say(f"WROTE {target}")
        except OSError as exc:
            say(f"cannot write {target}: {exc.strerror}")
    say("journal done")


def rival_ports(pid: int) -> list[int]:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []
    return [int(argv[i + 1]) for i, a in enumerate(argv[:-1]) if a == "--port" and argv[i + 1].isdigit()]


def rivals(mark: str) -> list[tuple[int, int]]:
    """(pid, port) of the rival bots it can see: marked, with a port, not itself and not a
    guard (a guard, unreachable with the cage, would be an easy kill without it)."""
    found = []
    for pid in marked_pids(mark):
        ports = rival_ports(pid)
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
        except OSError:
            continue
        if ports and not any(word in cmdline for word in ("attacker.py", "guard.py", "bwrap", "setpriv")):
            found.append((pid, ports[0]))
    return found


def kill_attack(mark: str) -> None:
    squats = []
    for pid, port in rivals(mark):
        try:
            os.kill(pid, signal.SIGKILL)
            say(f"KILLED pid {pid}")
        except OSError as exc:
            say(f"cannot kill {pid}: {exc.strerror}")
            continue
        for _ in range(100):
            try:
                s = socket.create_server(("127.0.0.1", port))
                squats.append(s)
                say(f"SQUAT port {port}")
                break
            except OSError:
                time.sleep(0.01)
    say(f"kill done ({len(squats)} squatted)")
    time.sleep(60)  # keep the ports


def stop_attack(mark: str) -> None:
    for pid, _port in rivals(mark):
        try:
            os.kill(pid, signal.SIGSTOP)
            say(f"STOPPED pid {pid}")
        except OSError as exc:
            say(f"cannot stop {pid}: {exc.strerror}")
    say("stop done")


def daemon_attack(mark: str) -> None:
    child = subprocess.Popen([sys.executable, "-c", SLEEP, f"daemon-{mark}"], start_new_session=True)
    say(f"setsid child {child.pid}")
    if os.fork() == 0:  # the classic double fork
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", SLEEP, f"daemon-{mark}"])
        os._exit(0)
    say("daemon done")


def flood_attack() -> None:
    chunk = b"x" * 65535 + b"\n"
    for _ in range(48):  # 3 MB
        try:
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        except OSError:
            break
    say("flood done")


def fork_attack() -> None:
    forked = 0
    for _ in range(1000):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        forked += 1
    say(f"FORKED {forked}")


def memory_attack() -> None:
    try:
        block = bytearray(4 << 30)
        block[-1] = 1
        say("ALLOCATED 4 GB")
    except MemoryError:
        say("allocation refused: MemoryError")


def reach_attack(targets: list[int], own: int, everywhere: bool = True) -> None:
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        listening |= {int(line.split()[1].split(":")[1], 16) for line in lines if line.split()[3] == "0A"}
    say(f"reach sees {len(listening - {own})} listening port(s) besides its own")
    found = 0
    for port in [*targets, *(range(1024, 65536) if everywhere else ())]:
        if port == own:
            continue
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                if conn.getsockname() == conn.getpeername():
                    continue  # TCP's self-connect: its own ephemeral port, nobody else's
                found += 1
                say(f"REACHED port {port}" + (" (a target)" if port in targets else ""))
        except OSError:
            pass
    say(f"reach done: {found} port(s) reached")


def collude_attack(mark: str, port: int) -> None:
    got = []
    for family, address in ((socket.AF_UNIX, f"\0referee-collude-{mark}"), (socket.AF_INET, ("127.0.0.1", port))):
        kind = "abstract" if family == socket.AF_UNIX else "tcp"
        server = socket.socket(family, socket.SOCK_STREAM)
        try:
            server.bind(address)
            server.listen()
            threading.Thread(target=lambda s=server: s.accept()[0].sendall(b"hand"), daemon=True).start()
            say(f"collude {kind}: bound, waiting")
            continue
        except OSError:
            server.close()
        for attempt in range(20):  # the partner may have bound and not yet listen
            try:
                with socket.socket(family, socket.SOCK_STREAM) as peer:
                    peer.settimeout(2)
                    peer.connect(address)
                    got.append(kind)
                    say(f"COLLUDED over {kind}: {peer.recv(4)!r}")
                    break
            except OSError as exc:
                if attempt == 19:
                    say(f"collude {kind}: cannot connect: {exc}")
                time.sleep(0.05)
    say(f"collude done ({len(got)} channel(s))")


def fill(what: str, write: Any, steps: int, unit: str, every: int = 16) -> None:
    """Call ``write(i)`` ``steps`` times; say how far it got (every ``every`` steps, and at the end)."""
    for i in range(steps):
        try:
            write(i)
        except OSError as exc:
            say(f"{what} stopped after {i} {unit}: {exc.strerror or exc}")
            return
        if i % every == 0:
            say(f"{what} at {i} {unit}")
    say(f"WROTE {steps} {unit} ({what})")


def spin_attack() -> None:
    start, before = time.monotonic(), os.times()
    children = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            end = time.monotonic() + 1.5
            while time.monotonic() < end:
                pass
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    after = os.times()
    used = (after.children_user + after.children_system) - (before.children_user + before.children_system)
    say(f"spin used {used / (time.monotonic() - start):.2f} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--attack", required=True)
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--mark", required=True)
    parser.add_argument("--search", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--targets", default="", help="ports of the host that it must not reach")
    parser.add_argument("--collude-port", type=int, default=0)
    parser.add_argument("--ports", choices=("all", "targets"), default="all", help="what reach connects to")
    parser.add_argument("--spare-inotify", action="store_true", help="neighbour: take no inotify instance")
    args = parser.parse_args()
    tmp, home = Path(os.environ.get("TMPDIR", "/tmp")), Path(os.environ.get("HOME", "."))
    chunk = b"x" * (8 << 20)
    shared = mmap.mmap(-1, 600 << 20, flags=mmap.MAP_SHARED) if args.attack == "shared" else None

    def touch(i: int) -> None:  # one MiB of the shared mapping
        assert shared is not None
        shared[i << 20 : (i + 1) << 20] = chunk[: 1 << 20]

    seeds = load_seeds(args.seeds)
    attacks: dict[str, Any] = {
        "secrets": lambda: secrets_attack(args.mark),
        "journal": lambda: journal_attack(args.search),
        "kill": lambda: kill_attack(args.mark),
        "stop": lambda: stop_attack(args.mark),
        "daemon": lambda: daemon_attack(args.mark),
        "flood": flood_attack,
        "fork": fork_attack,
        "memory": memory_attack,
        "reach": lambda: reach_attack([int(p) for p in args.targets.split(",") if p], args.port, args.ports == "all"),
        "collude": lambda: collude_attack(args.mark, args.collude_port),
        "disk": lambda: fill("disk", lambda i: (tmp / f"fill-{i}").write_bytes(chunk), 50, "files of 8 MiB", 1),
        "files": lambda: fill("files", lambda i: (home / f"f{i}").touch(), 20_000, "files", 100_000),
        "shared": lambda: fill("shared", touch, 600, "MiB"),
        "tmpfs": lambda: fill("tmpfs", lambda i: Path(f"/tmp/m{i}").write_bytes(chunk[: 1 << 20]), 600, "MiB"),
        "userns": lambda: say(f"userns: unshare -Ur exited {subprocess.run(['unshare', '-Ur', 'true']).returncode}"),
        "spin": spin_attack,
        "keyring": lambda: keyring_attack(args.mark),
        "locksend": locksend_attack,
        "lockrecv": lockrecv_attack,
        "notify": notify_attack,
        "iouring": lambda: say(f"iouring: io_uring_setup {syscall(SYSCALLS[3], 4, ctypes.create_string_buffer(120))}"),
        "shm": shm_attack,
        "neighbour": lambda: neighbour_attack(args.mark, not args.spare_inotify),
    }
    chosen = args.attack.split(",")
    if not set(chosen) <= set(attacks):
        parser.error(f"--attack: unknown {', '.join(sorted(set(chosen) - set(attacks)))}")
    started = threading.Event()

    def act(message: dict[str, Any]) -> dict[str, Any]:
        if not started.is_set():
            started.set()
            workers = [threading.Thread(target=attacks[name], daemon=True) for name in chosen]
            for worker in workers:
                worker.start()
            if set(chosen) <= WAITED:  # the match waits for it: the run outlasts the attack
                for worker in workers:
                    worker.join(30)
        return {"action": fallback_action(seeds, message)}

    serve(act, args.port)


if __name__ == "__main__":
    main()
