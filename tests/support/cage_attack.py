"""The attack suite's shared parts: a tournament of hostile bots beside honest victims,
what the attackers report, and the checks that nothing was left behind."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import sysconfig
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from referee.bots.cage.netns import usable
from referee.bots.cage.process import free_port
from referee.bots.cage.sandbox import bwrap_works
from referee.config.parse import load_config
from referee.run.runner import JOURNAL, run_tournament
from referee.schedule.formats import schedule
from tests.support.cli import ROOT
from tests.support.processes import survivors
from tests.support.tournament import NIMMT, UNREACHABLE_DEADLINE_MS, UNREACHABLE_STARTUP_MS

ATTACKER = str(ROOT / "tests" / "hostile" / "attacker.py")
VICTIMS = ("greedy", "cautious", "random")

needs_cage = pytest.mark.skipif(
    not (bwrap_works() and usable()), reason="needs bubblewrap and root (a network and a cgroup per bot)"
)


class Listener:
    """A TCP port of the host that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


def attackers(mark: str) -> dict[str, dict[str, Any]]:
    """The attacking bots of each run: name -> its own limits, and ``attack`` when it is
    not the name's first word (several, comma-separated: one seat tries them all)."""
    return {
        "network": {
            "reach": {},
            "collude-a": {},
            "collude-b": {},
        },
        "channels": {  # issue 34: what two bots of one team could share
            "keyring-a": {},
            "keyring-b": {},
            "locksend": {},
            "lockrecv": {},
            "notify": {},
            "iouring": {},
        },
        "neighbours": {  # issue 34: a bot without a cage beside caged ones (each its own uid)
            "neighbour-a": {"sandbox": "none"},
            "neighbour-b": {"sandbox": "none"},
            "shm": {"memory_mb": 96, "disk_mb": 512},
        },
        "apart": {  # the two above in one run of 7 seats (the game's most), for the cage
            "keyring-a": {},
            "keyring-b": {"attack": "keyring,lockrecv"},
            "locksend": {},
            "neighbour-a": {"sandbox": "none"},
            "neighbour-b": {"sandbox": "none"},
            "shm": {"memory_mb": 96, "disk_mb": 512, "attack": "shm,notify,iouring"},
        },
        "limits": {
            "disk": {"disk_mb": 32},
            "files": {"disk_mb": 16},
            "shared": {"memory_mb": 96},
            "tmpfs": {"memory_mb": 96, "disk_mb": 512},
            "userns": {},
            "spin": {"cpus": 0.25},
        },
    }[mark]


def play(folder: Path, kind: str, sandbox: str) -> tuple[Path, dict[str, str], list[Listener]]:
    """One run of ``kind`` (network, limits, channels, neighbours, apart); its output
    folder, every bot's log, the listeners."""
    mark = uuid.uuid4().hex
    listeners = [Listener(), Listener()]  # the referee's port, a Dask scheduler's
    collude_port = free_port()  # without the cage, on the host's loopback: a port nobody holds
    # where a bot without a cage, under a uid of its own, can read it (pytest's folders are 0700)
    shared = Path(tempfile.mkdtemp(prefix="referee-alone-"))
    shared.chmod(0o755)
    seeds = shared / "seeds.json"
    env = {"REFEREE_TEST_MARK": mark, "PYTHONPATH": str(ROOT)}
    victims = VICTIMS if kind in ("network", "neighbours") else VICTIMS[:1]  # 7 seats at most
    bots: list[dict[str, Any]] = [{"name": v, "command": [*NIMMT, v, "--port", "{port}"], "env": env} for v in victims]
    for name, given in attackers(kind).items():
        own = dict(given)
        attack = own.pop("attack", name.split("-")[0])
        uncaged = own.get("sandbox") == "none" and sandbox != "none"
        python = "/usr/bin/python3" if uncaged else "python"  # the referee's own lives under /root, 0700
        command = [python, ATTACKER, "--attack", attack, "--seeds", str(seeds), "--mark", mark]
        command += ["--search", str(folder / "unused"), "--targets", ",".join(str(li.port) for li in listeners)]
        command += ["--collude-port", str(collude_port), "--port", "{port}"]
        if sandbox == "none":  # on the host, as root: reach only the test's own ports, leave root's inotify
            command += ["--ports", "targets", "--spare-inotify"]
        path = f"{ROOT}:{ROOT / 'tests' / 'hostile'}:{sysconfig.get_paths()['purelib']}" if uncaged else str(ROOT)
        own_env = {**env, "PYTHONPATH": path}
        bots.append({"name": name, "command": command, "env": own_env, **({"limits": own} if own else {})})
    doc = {
        "tournament": {
            "name": f"alone-{kind}",
            "game": "nimmt_plus",
            "seed": 7,
            "players": len(bots),
            "rounds": 1,
            "concurrency": 1,
            "output": str(folder / "out"),
        },
        "limits": {
            "deadline_ms": UNREACHABLE_DEADLINE_MS,
            "startup_ms": UNREACHABLE_STARTUP_MS,
            "max_faults": 2,
            "max_restarts": 1,
            "restart_backoff_ms": 50,
            "sandbox": sandbox,
            **({"bot_user": "referee"} if sandbox == "none" else {}),
        },
        "bot": bots,
    }
    path = folder / "alone.toml"
    path.write_text(tomli_w.dumps(doc))
    cfg = load_config(path)
    seeds.write_text(json.dumps({f.id: f.seed for f in schedule(cfg)}))
    seeds.chmod(0o644)
    try:
        asyncio.run(run_tournament(cfg))
    finally:
        shutil.rmtree(shared)
    assert not survivors(mark), "a process of the run outlived it"
    logs = {b["name"]: (cfg.output / "logs" / f"{b['name']}.log").read_text(errors="replace") for b in bots}
    return cfg.output, logs, listeners


def leftovers() -> list[str]:
    """Mounts and cgroups of this process's runs still there."""
    mine = f"referee-bot-{os.getpid()}-"  # other runs on the machine have their own
    mounts = [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if mine in line]
    groups = [str(p) for p in Path("/sys/fs/cgroup").glob(f"**/referee-{os.getpid()}-*")]
    return mounts + groups


def journal(out: Path) -> list[dict[str, Any]]:
    """The match lines of the run's journal."""
    return [rec for rec in map(json.loads, (out / JOURNAL).read_text().splitlines()) if "id" in rec]


def victims_untouched(out: Path, logs: dict[str, str]) -> None:
    """Every match played; no fault, restart or guard's intervention for a sample bot."""
    records = journal(out)
    assert records
    for rec in records:
        assert all(f["bot"] not in VICTIMS for f in rec["faults"]), rec["faults"]
    for name in set(VICTIMS) & set(logs):
        assert "restart" not in logs[name] and "[guard]" not in logs[name] and "down" not in logs[name], logs[name]
        assert re.search(r"--- stop \(SIGTERM\), exited 0 after \d+ ms\n\Z", logs[name]), logs[name][-300:]
