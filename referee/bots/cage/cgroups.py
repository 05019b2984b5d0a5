"""The cgroup of one managed bot: ``max_processes``, ``memory_mb`` and ``cpus`` for all
its processes together.

Each group is made below the referee's own (so the limits of whoever runs the referee
still hold), in cgroup v1 one folder per controller (``pids.max``,
``memory.limit_in_bytes``, ``cpu.cfs_quota_us``) and in cgroup v2 one folder (``pids.max``,
``memory.max``, ``cpu.max``). A controller that cannot be used (not mounted, not
writable: the referee is not root) is left out; ``missing`` names the limits it held.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

CONTROLLERS = ("pids", "memory", "cpu")  # the first one listed also lists the bot's processes
_PERIOD_US = 100_000
_LIMIT_OF = {"pids": "max_processes", "memory": "memory_mb", "cpu": "cpus"}


def _bases() -> dict[str, tuple[Path, bool]]:
    """Per controller: the referee's own cgroup folder and whether it is cgroup v2."""
    own: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _num, names, path = line.split(":", 2)
            for name in names.split(",") if names else [""]:
                own[name] = path.lstrip("/")
    found: dict[str, tuple[Path, bool]] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            _dev, where, kind, options = line.split()[:4]
            if kind == "cgroup":
                for name in set(options.split(",")) & set(CONTROLLERS):
                    found.setdefault(name, (Path(where) / own.get(name, ""), False))
            elif kind == "cgroup2" and "" in own:
                base = Path(where) / own[""]
                with contextlib.suppress(OSError):
                    for name in set((base / "cgroup.controllers").read_text().split()) & set(CONTROLLERS):
                        found.setdefault(name, (base, True))
    return found


@dataclass
class BotCgroup:
    """The folders the bot's processes join (``cgroup.procs`` of each)."""

    folders: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # the limits not enforced: [limits] key names

    @property
    def procs(self) -> Path | None:
        """The folder that lists every process of the bot."""
        return self.folders[0] if self.folders else None

    def remove(self) -> None:
        """Kill what is left in the group, then remove its folders."""
        if self.procs is not None:
            kill_members(self.procs)
        for folder in self.folders:
            with contextlib.suppress(OSError):
                folder.rmdir()
        self.folders = []


def create(name: str, memory_mb: int, cpus: float, max_processes: int) -> BotCgroup:
    """A new cgroup for the bot ``name`` with its three limits (those it can hold)."""
    quota = max(1000, int(cpus * _PERIOD_US))
    memory = str(memory_mb << 20)
    v1 = {
        "pids": {"pids.max": str(max_processes)},
        # memsw (memory and swap together) exists only with swap accounting
        "memory": {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes?": memory},
        "cpu": {"cpu.cfs_period_us": str(_PERIOD_US), "cpu.cfs_quota_us": str(quota)},
    }
    v2 = {
        "pids": {"pids.max": str(max_processes)},
        "memory": {"memory.max": memory, "memory.swap.max?": "0"},
        "cpu": {"cpu.max": f"{quota} {_PERIOD_US}"},
    }
    group = BotCgroup()
    leaf = f"referee-{os.getpid()}-{name}-{secrets.token_hex(4)}"
    bases = _bases() if os.geteuid() == 0 else {}
    for controller in CONTROLLERS:
        if controller not in bases:
            group.missing.append(_LIMIT_OF[controller])
            continue
        base, unified = bases[controller]
        folder = base / leaf
        try:
            if unified:
                with contextlib.suppress(OSError):  # the controller may need enabling below the base
                    (base / "cgroup.subtree_control").write_text(f"+{controller}")
            if folder not in group.folders:  # v2: one folder for every controller
                folder.mkdir()
                group.folders.append(folder)
            for key, value in (v2 if unified else v1)[controller].items():
                try:
                    (folder / key.rstrip("?")).write_text(value)
                except OSError:
                    if not key.endswith("?"):
                        raise
        except OSError:
            group.missing.append(_LIMIT_OF[controller])
    return group


def kill_members(folder: Path) -> None:
    """SIGKILL every process left in the cgroup ``folder`` (a daemon that left the group)."""
    for _ in range(5):
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except OSError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
