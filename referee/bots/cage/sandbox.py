"""The cage of a managed bot: what it runs as, sees, may write and may use.

A ``BotSpec`` (built by the caller; this layer never reads the tournament file) says what
to run under which ``CageLimits``; ``Cage.prepare`` turns it into the guard's setup
(``guard.py`` applies it before ``exec``). Always: an allow-listed environment, resource
limits, a private folder (as root: a tmpfs of ``disk_mb`` with a bounded number of
files), a cgroup for ``max_processes``, ``memory_mb`` and ``cpus`` (``cgroups.py``), and
a uid of its own when the referee is root (``uids.py``; ``bot_user = "referee"``, only
without a cage, keeps the referee's). With bubblewrap: its own PID, IPC, UTS, mount and
(as root) network namespaces (``netns.py``: only the referee reaches it), no user
namespaces nor shared kernel objects (``seccomp.py``), its home, ``/tmp`` and ``/dev/shm``
from its private folder, and read-only the system, its own folder (``Cage.folder``: an
argument leading out of it is refused) and (for ``python``) the referee's venv, each as
a view of its own when the referee is root (``views.py``: its locks are its own).
``docs/cage.md`` says all of it for bot authors; a limit that cannot hold here is named
once (``not_enforced``).
"""

from __future__ import annotations

import functools
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from referee.bots.cage import cgroups, guard, netns, seccomp, uids, views
from referee.config.redacted import Secret
from referee.errors import BotStartError

TOKEN_ENV = "REFEREE_BOT_TOKEN"
HOME_IN_CAGE = "/home/bot"
INODES_PER_MB = 64  # the bound on the files of a bot's disk, per MB of disk_mb
_MS_NOSUID, _MS_NODEV = 2, 4
_BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
_SYSTEM_RO = ("/usr", "/etc", "/opt")
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_PRIVATE_DIRS = ("home", "tmp", "shm")  # on the bot's own disk: $HOME, /tmp, /dev/shm
_OWN_PACKAGES = ("referee", "sample_bots")  # what ``python`` commands may import from this repository
NO_CAGE_WARNING = (
    "warning: bubblewrap (bwrap) is not available, so the bots are not isolated from each other, "
    "the referee and your files; install it (Debian/Ubuntu: apt-get install bubblewrap, or make run)"
)
log = logging.getLogger("referee")


@dataclass(frozen=True)
class CageLimits:
    """How a managed bot is caged and limited (``[limits]`` of the tournament file)."""

    sandbox: str = "auto"  # auto | bwrap | none
    memory_mb: int = 1024  # all its processes together (memory cgroup), and each one's RLIMIT_DATA
    max_processes: int = 128  # processes and threads of the bot together
    max_file_mb: int = 64  # the largest file the bot may write
    max_open_files: int = 1024  # per process: connections of many matches in flight
    log_mb: int = 10  # the bot's log, then one marker line and the rest dropped
    bot_user: str = "own"  # own: a uid of its own (a root referee); referee: the referee's (no cage only)
    disk_mb: int = 256  # everything it writes together (one tmpfs: home and /tmp), inodes too
    cpus: float = 1.0  # CPU time of all its processes together, in cores
    network: str = "own"  # own: a network namespace of its own; host: the host's network

    @classmethod
    def of(cls, limits: object, overrides: Mapping[str, Any], network: str = "own") -> CageLimits:
        """The cage of one bot: the tournament's ``[limits]`` (any object with these
        attributes), with its ``[[bot]]``'s ``limits`` table and ``network`` over them."""
        names = [f.name for f in fields(cls) if f.name != "network"]
        values = {name: overrides.get(name, getattr(limits, name)) for name in names}
        return cls(**values, network=network)


@dataclass(frozen=True)
class BotSpec:
    """What the bots layer needs to start one managed bot (built from its ``[[bot]]``)."""

    name: str
    command: tuple[str, ...]
    base_dir: Path = Path(".")  # relative paths in command resolve here (the tournament file's folder)
    workdir: Path | None = None  # the bot's own files, visible read-only in the cage
    env: Mapping[str, str] = field(default_factory=dict)
    token: Secret | None = None  # None: a random one per run
    limits: CageLimits = CageLimits()


@dataclass(frozen=True)
class Prepared:
    """One start of a caged bot: the argv the guard runs, its environment, its setup."""

    argv: list[str]
    env: dict[str, str]
    setup: dict[str, Any]
    fds: tuple[int, ...] = ()  # descriptors the guard keeps (the uid's lock)
    note: str = ""  # for the start line of its log: what the organiser's command shows outside its folder


def new_token() -> Secret:
    """A per-run random token for a managed bot."""
    return Secret(secrets.token_urlsafe(24))


@functools.cache
def bwrap_works() -> bool:
    """Whether bubblewrap is installed and can create its namespaces here (tried once)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    probe = [exe, "--unshare-pid", "--unshare-ipc", "--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/true"]
    if os.geteuid() != 0:
        probe.insert(1, "--unshare-user")
    try:
        return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


_warned = False


def use_bwrap(mode: str) -> bool:
    """Whether bots of this ``sandbox`` mode run under bubblewrap; ``auto`` without it
    warns once per process, ``bwrap`` without it is a BotStartError."""
    global _warned
    if mode == "none":
        return False
    if bwrap_works():
        return True
    if mode == "bwrap":
        raise BotStartError(
            "limits.sandbox = 'bwrap' but bubblewrap is not installed or cannot create namespaces here "
            "(Debian/Ubuntu: apt-get install bubblewrap; or set sandbox = 'auto')"
        )
    if not _warned:
        _warned = True
        log.warning(NO_CAGE_WARNING)
    return False


def resolve_command(command: Sequence[str], base_dir: Path) -> list[str]:
    """The command with relative paths that exist under ``base_dir`` made absolute (by
    their text: a link in them is left for ``Cage.folder`` to check)."""
    out = []
    for i, arg in enumerate(command):
        candidate = base_dir / arg
        if (
            arg
            and not arg.startswith("-")
            and not os.path.isabs(arg)
            and "{port}" not in arg
            and (i > 0 or "/" in arg)  # a bare program name is looked up on PATH
            and os.path.exists(candidate)  # False for a name too long for a path (a `-c` program)
        ):
            out.append(str(base_dir.resolve() / arg))  # links not followed: the cage checks where they lead
        else:
            out.append(arg)
    return out


_reported: set[str] = set()


def not_enforced(limits: Sequence[str], why: str) -> None:
    """Say once per process which limits of started bots do not hold here, and why."""
    new = [name for name in limits if name not in _reported]
    if new:
        _reported.update(new)
        log.warning(f"warning: not enforced for started bots here: {', '.join(new)} ({why})")


class Cage:
    """The private disk, cgroup and token of one managed bot, kept across restarts."""

    def __init__(self, spec: BotSpec, token: Secret | None = None) -> None:
        self.spec = spec
        self.token = token or spec.token or new_token()
        self.bwrap = use_bwrap(spec.limits.sandbox)
        self.root = os.geteuid() == 0
        if self.bwrap and spec.limits.bot_user != "own":  # the config refuses it; a spec made by hand too
            raise BotStartError(f"bot {spec.name!r}: limits.bot_user = {spec.limits.bot_user!r} is refused in a cage")
        self.uid: uids.BotUid | None = None  # claimed with the private folder, held until cleanup
        self.own_network = self.bwrap and spec.limits.network == "own" and netns.usable()
        self.private: Path | None = None
        self.disk = False  # a tmpfs of its own is mounted at ``private``
        self.group: cgroups.BotCgroup | None = None
        self.filter: bytes | None = seccomp.program() if self.bwrap else None
        self.views: views.Views | None = None  # a root referee's overlays of what the bot sees
        self.checked: dict[str, int] = {}  # the bot's folder, opened when it was checked
        self.outside: list[str] = []  # paths the organiser's command names outside the bot's folder

    @property
    def cgroup(self) -> Path | None:
        """The cgroup folder that lists the bot's processes (None without one)."""
        return self.group.procs if self.group is not None else None

    @property
    def user(self) -> tuple[int, int] | None:
        """The uid and gid the bot runs as (its own), or None: the referee's."""
        return (self.uid.uid, self.uid.uid) if self.uid is not None else None

    def prepare(self, argv: list[str]) -> Prepared:
        """Create the private disk and the cgroup if needed; the guard's argv and setup."""
        lim = self.spec.limits
        if self.private is None:
            self._make_private()
        if self.group is None:
            self.group = cgroups.create(self.spec.name, lim.memory_mb, lim.cpus, lim.max_processes)
            self._report()
        assert self.private is not None
        home = HOME_IN_CAGE if self.bwrap else str(self.private / "home")
        tmp = "/tmp" if self.bwrap else str(self.private / "tmp")
        env = {"PATH": _BASE_PATH, "LANG": os.environ.get("LANG", "C.UTF-8"), "HOME": home, "TMPDIR": tmp}
        env.update(self.spec.env)
        env[TOKEN_ENV] = self.token.reveal()
        # without a pids cgroup: RLIMIT_NPROC, counted per user (inside bwrap's user namespace:
        # per bot); never for the organiser's own account, where it would count all its processes
        counted = "max_processes" not in self.group.missing
        nproc = lim.max_processes if not counted and (self.bwrap or self.user is not None) else None
        inner: list[str] = []
        if self.user is not None and self.bwrap:
            # bwrap runs as root (no user namespace needed): the bot drops to its user inside
            uid, gid = self.user
            inner = [f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all"]
            inner = ["setpriv", *inner, "--bounding-set=-all", "--no-new-privs", "--"]
        if self.bwrap and nproc is not None:
            inner += ["prlimit", f"--nproc={nproc}", "--"]
            nproc = None
        rlimits = {"DATA": lim.memory_mb << 20, "FSIZE": lim.max_file_mb << 20, "NOFILE": lim.max_open_files, "CORE": 0}
        if nproc is not None:
            rlimits["NPROC"] = nproc
        setup: dict[str, Any] = {
            "cwd": None if self.bwrap else str(self.private / "home"),
            "rlimits": rlimits,
            "cgroups": [str(f) for f in self.group.folders],
            "user": list(self.user) if self.user is not None and not self.bwrap else None,
            "keep": [self.uid.fd] if self.uid is not None else [],
            "log_max": lim.log_mb << 20,
            "private": str(self.private),  # the guard removes it if the referee dies
            "disk": self.disk,
            "caged": self.bwrap,
            "seccomp": str(self.private / "seccomp.bpf") if self.filter is not None else None,
        }
        try:
            run = self._bwrap_argv(argv) + inner + argv if self.bwrap else argv
        finally:
            for fd in self.checked.values():
                os.close(fd)
            self.checked = {}
        note = f"; outside its folder it also sees {', '.join(self.outside)}" if self.outside else ""
        return Prepared(run, env, setup, (self.uid.fd,) if self.uid is not None else (), note)

    def _make_private(self) -> None:
        """The bot's private folder: its own tmpfs (``disk_mb``, inodes bounded) when the
        referee is root, holding ``home`` and ``tmp`` (and the seccomp filter, unseen)."""
        lim = self.spec.limits
        if self.root and lim.bot_user == "own" and self.uid is None:
            self.uid = uids.claim()
        private = Path(tempfile.mkdtemp(prefix=f"referee-bot-{os.getpid()}-{self.spec.name}-"))
        self.private = private
        owner = self.user or (os.getuid(), os.getgid())
        if self.root:
            options = f"size={lim.disk_mb}m,nr_inodes={max(64, lim.disk_mb * INODES_PER_MB)},mode=0700"
            options += f",uid={owner[0]},gid={owner[1]}"
            self.disk = _mount_tmpfs(private, options)
        for sub in _PRIVATE_DIRS:
            (private / sub).mkdir(mode=0o700)
        if self.filter is not None:
            (private / "seccomp.bpf").write_bytes(self.filter)
        if self.bwrap and self.disk:
            self.views = views.Views(private / "views")
        if self.user is not None:  # its own, 0700: no other bot (nor uid) reads or writes them
            for p in (private, *(private / sub for sub in _PRIVATE_DIRS)):
                os.chown(p, *owner)
                os.chmod(p, 0o700)

    def _report(self) -> None:
        """The one line naming the limits this bot's cage cannot hold."""
        assert self.group is not None
        if self.group.missing:
            not_enforced(self.group.missing, "no writable cgroup for them: run the referee as root")
        if not self.disk:
            not_enforced(["disk_mb"], "a bot's own disk needs a referee running as root")
        if self.bwrap and self.spec.limits.network == "own" and not self.own_network:
            not_enforced(["network"], "a network of its own for each bot needs a referee running as root")
        if self.bwrap and self.filter is None:
            not_enforced(["no user namespaces", "no keyring, io_uring, inotify"], "no seccomp filter for this machine")
        if not self.root:
            not_enforced(["a uid of each bot's own"], "the referee is not root: the bots share one uid")
        if self.bwrap and self.views is None:
            not_enforced(
                ["no channel through locks on shared files"], "views of its own need a referee running as root"
            )

    def _bwrap_argv(self, argv: list[str]) -> list[str]:
        """bwrap and its options for this bot (see the module doc)."""
        assert self.private is not None
        out = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
        out += ["--unshare-uts", "--unshare-cgroup-try"]
        if os.geteuid() != 0:
            out.append("--unshare-user")
        if self.own_network:
            out.append("--unshare-net")
        if self.filter is not None:
            out += ["--seccomp", str(guard.SECCOMP_FD)]
        for d in _SYSTEM_RO:
            if os.path.isdir(d):
                out += ["--ro-bind", self._view(d), d]
        for link in _SYSTEM_LINKS:
            if os.path.islink(link):
                out += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                out += ["--ro-bind", self._view(link), link]
        out += ["--proc", "/proc", "--dev", "/dev", "--bind", str(self.private / "shm"), "/dev/shm"]
        devices = self.views.of("/dev", devices=True) if self.views is not None else None
        for node in views.DEVICES if devices is not None else ():  # its own: no lock or notice shared
            if os.path.exists(f"/dev/{node}"):
                out += ["--dev-bind", f"{devices}/{node}", f"/dev/{node}"]
        visible = sorted(self.visible(argv))
        parents = sorted({str(a) for p in visible for a in Path(p).parents if str(a) not in ("/", "/tmp")})
        out += ["--perms", "0755", "--dir", str(Path(HOME_IN_CAGE).parent)]  # else 0700: $HOME unreachable
        out += ["--bind", str(self.private / "home"), HOME_IN_CAGE, "--bind", str(self.private / "tmp"), "/tmp"]
        for d in parents:  # bwrap running as root would make them 0700: the bot could not pass
            out += ["--perms", "0755", "--dir", d]
        for path in visible:
            out += ["--ro-bind", self._view(path) if os.path.isdir(path) else path, path]
        out += ["--chdir", HOME_IN_CAGE, "--"]
        return out

    def _view(self, folder: str) -> str:
        """What to bind at ``folder``: its view (``views.py``; a root referee), else itself."""
        if self.views is None:
            return folder
        return self.views.of(folder, self.checked.get(folder)) or folder

    def folder(self, argv: list[str]) -> str | None:
        """The bot's own folder, the contestant's files: its ``workdir``, else the folder of
        the first file its arguments name, else the package of ``python -m``, else the
        program's folder unless it is the system's or Python's. A BotStartError when an
        argument names a path in it whose real path leaves it (a link or ``..``)."""
        if self.spec.workdir is not None:
            folder = str(self.spec.workdir)
        else:
            files = [a for a in argv[1:] if os.path.isabs(a) and os.path.isfile(a)]
            module = argv.index("-m") + 1 if argv[:1] == [sys.executable] and "-m" in argv[1:-1] else 0
            packages = sorted(_package_dirs(argv[module].split(".")[0])) if module else []
            program = argv[0] if argv and os.path.isabs(argv[0]) and not _python_or_system(argv[0]) else None
            first = files[0] if files else None
            folder = os.path.dirname(first or program or "") or (packages[0] if packages else "")
            if not folder:
                return None
        real = os.path.realpath(folder)
        fd = views.open_folder(real)  # held from the check to the mount: what is bound is what was checked
        self.checked[real] = fd
        for arg in argv:
            target = os.path.realpath(arg) if os.path.isabs(arg) and _inside(folder, arg) else real
            if not _inside(real, target):
                raise BotStartError(
                    f"bot {self.spec.name!r}: argument {arg!r} is in its folder {folder} but leads out of it, "
                    f"to {target}: refused (a link or '..' in the bot's folder)"
                )
        return folder

    def visible(self, argv: list[str]) -> set[str]:
        """Host paths the bot sees read-only besides the system (see the module doc): its
        folder and, outside it, what the organiser's command names (``outside``)."""
        folder = self.folder(argv)
        paths: set[str] = {os.path.realpath(folder)} if folder is not None else set()
        outside: set[str] = set()
        if argv and os.path.isabs(argv[0]) and not _inside(folder, argv[0]):
            paths.add(str(Path(argv[0]).resolve().parent))
        python = argv and argv[0] == sys.executable
        for i, arg in enumerate(argv[1:], start=1):
            if os.path.isabs(arg) and os.path.exists(arg) and not _inside(folder, arg):
                outside.add(str(Path(arg).resolve()))  # the organiser's path, outside the bot's folder
            elif python and argv[i - 1] == "-m":
                paths.update(_package_dirs(arg.split(".")[0]))
        if python:
            paths.update({sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)})
            for package in _OWN_PACKAGES:
                paths.update(_package_dirs(package))
        self.outside = sorted(p for p in outside - paths if not _under_system(p))
        return {p for p in paths | outside if not _under_system(p)}

    def cleanup(self) -> None:
        """Remove the private disk and folder and the cgroup (the bot is gone)."""
        if self.private is not None:
            if self.disk:
                guard.unmount(str(self.private))
                self.disk = False
            shutil.rmtree(self.private, ignore_errors=True)
            self.private = None
            self.views = None
        if self.uid is not None:
            self.uid.release()
            self.uid = None
        if self.group is not None:
            self.group.remove()
            self.group = None


def _mount_tmpfs(where: Path, options: str) -> bool:
    """Mount a tmpfs with ``options`` at ``where``; False when it cannot be done."""
    flags = _MS_NOSUID | _MS_NODEV
    return bool(netns.libc().mount(b"tmpfs", str(where).encode(), b"tmpfs", flags, options.encode()) == 0)


def _package_dirs(package: str) -> set[str]:
    """The folders of an importable top-level package, as every import finder sees it
    (the referee's working folder may hide an editable install's, which the bot, started
    in its home, finds instead); none when it is not found."""
    found: set[str] = set()
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        try:
            spec = find(package, None) if find is not None else None
        except (ImportError, ValueError, TypeError):
            continue
        if spec is not None:
            found.update(str(Path(p).resolve()) for p in (spec.submodule_search_locations or []))
    return found


def _inside(folder: str | None, path: str) -> bool:
    """Whether ``path`` names ``folder`` or a path below it (by its text alone)."""
    if folder is None:
        return False
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder if folder == "/" else folder + "/")


def _python_or_system(program: str) -> bool:
    """A program of the system or of this Python: an interpreter, not the bot's own."""
    real = os.path.realpath(program)
    roots = (*(d + "/" for d in _SYSTEM_RO), "/bin/", "/sbin/", sys.prefix + "/", sys.base_prefix + "/")
    return program.startswith(roots) or real.startswith(roots)


def _under_system(path: str) -> bool:
    """Already visible through the read-only system folders."""
    return any(path == d or path.startswith(d + "/") for d in _SYSTEM_RO)
