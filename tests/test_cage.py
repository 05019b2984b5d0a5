"""Cheating contestants against the cage (issue 19): real tournaments, real attacks.

``tests/hostile/attacker.py`` plays exactly the twin's moves (``tests/hostile/twin.py``)
and, at its first decision, tries one attack for real: read other bots' tokens, write the
journal, kill a rival and squat its port, SIGSTOP a rival, leave a setsid daemon behind,
flood its log, fork 1,000 processes, allocate 4 GB. 6 nimmt! Plus, 3 seats of 4 bots,
round robin: the attacker and three sample bots.

With bubblewrap (``sandbox = "bwrap"``): every attack fails (its own report in its log
says so), no fault is charged to any other bot, the scores and ranks equal the run with
the twin in its seat, and no process of the run is left once it is over.

Without it (``sandbox = "none"``, as the referee's own user, which on a machine whose
Python lives under /root is the only way to run these bots without bubblewrap): the same
attacks run, and each test states what still holds (the environment allow-list, the log
cap, the process and memory limits, no survivors thanks to the cgroup, a stopped bot
restarted) and what the attacker gets without the cage (rival tokens, the journal,
killing and stopping rivals).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from referee.bots.cage.sandbox import bwrap_works
from referee.config.model import TournamentConfig
from referee.config.parse import load_config
from referee.run.runner import JOURNAL, run_tournament
from referee.schedule.formats import schedule
from tests.support.processes import survivors
from tests.support.tournament import UNREACHABLE_DEADLINE_MS, UNREACHABLE_STARTUP_MS

pytestmark = pytest.mark.parallel  # every start-up window and compared deadline out of any load's reach

ROOT = Path(__file__).resolve().parent.parent
ATTACKER = str(ROOT / "tests" / "hostile" / "attacker.py")
TWIN = str(ROOT / "tests" / "hostile" / "twin.py")
NIMMT = ["python", "-m", "sample_bots.nimmt"]
SUBJECT = "subject"
LOG_MB = 1
MAX_PROCESSES = 64
ATTACKS = ["secrets", "journal", "kill", "stop", "daemon", "flood", "fork", "memory"]

needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed or cannot run here")

# Out of any load's reach, for the runs compared with the twin run: one honest timeout (a
# fallback) would change a match. The attacks that hold a rival (kill, stop) keep 2 s.
COMPARED_DEADLINE_MS = UNREACHABLE_DEADLINE_MS


def config(
    folder: Path, subject: list[str], sandbox: str, mark: str, deadline_ms: int = COMPARED_DEADLINE_MS
) -> TournamentConfig:
    """The tournament with ``subject`` as bot 1; every bot's environment holds ``mark``."""
    env = {"REFEREE_TEST_MARK": mark}
    doc = {
        "tournament": {
            "name": "cage",
            "game": "nimmt_plus",
            "seed": 11,
            "players": 3,
            "rounds": 1,
            "concurrency": 2,
            "output": str(folder / "out"),
        },
        "game": {"variant": "plus"},
        "limits": {
            "deadline_ms": deadline_ms,
            "startup_ms": UNREACHABLE_STARTUP_MS,  # restarts too: a late start is never a fault here
            "max_faults": 2,
            "max_restarts": 1,
            "restart_backoff_ms": 50,
            "sandbox": sandbox,
            "log_mb": LOG_MB,
            "max_processes": MAX_PROCESSES,
            "memory_mb": 512,
            **({"bot_user": "referee"} if sandbox == "none" else {}),
        },
        "bot": [
            {"name": "greedy", "command": NIMMT + ["greedy", "--port", "{port}"], "env": env},
            {"name": SUBJECT, "command": subject + ["--port", "{port}"], "env": env},
            {"name": "cautious", "command": NIMMT + ["cautious", "--port", "{port}"], "env": env},
            {"name": "random", "command": NIMMT + ["random", "--port", "{port}"], "env": env},
        ],
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cage.toml"
    path.write_text(tomli_w.dumps(doc))
    return load_config(path)


def play(cfg: TournamentConfig, mark: str) -> dict[str, dict[str, Any]]:
    """Run the tournament; its journal's match lines by id, once no process of it is left."""
    asyncio.run(run_tournament(cfg))
    deadline = time.monotonic() + 60  # polled: a loaded machine takes longer, a quiet one no time
    while survivors(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not survivors(mark), "a process of the run outlived it"
    lines = (cfg.output / JOURNAL).read_text().splitlines()
    return {rec["id"]: rec for rec in map(json.loads, lines) if "id" in rec}


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    """The seeds file and the journal of the run with the twin in the attacker's seat."""
    folder = tmp_path_factory.mktemp("twin")
    seeds = folder / "seeds.json"
    mark = uuid.uuid4().hex
    cfg = config(folder, ["python", TWIN, "--seeds", str(seeds)], "none", mark)
    seeds.write_text(json.dumps({f.id: f.seed for f in schedule(cfg)}))
    records = play(cfg, mark)
    assert all(rec["faults"] == [] for rec in records.values())
    return seeds, records


def attack(
    tmp_path: Path, seeds: Path, name: str, sandbox: str, deadline_ms: int = COMPARED_DEADLINE_MS
) -> tuple[dict[str, dict[str, Any]], str, Path]:
    """One run with the attacker; its journal, the attacker's log, the run's output folder."""
    mark = uuid.uuid4().hex
    command = ["python", ATTACKER, "--attack", name, "--seeds", str(seeds), "--mark", mark, "--search", str(tmp_path)]
    cfg = config(tmp_path / "run", command, sandbox, mark, deadline_ms)
    records = play(cfg, mark)
    return records, (cfg.output / "logs" / f"{SUBJECT}.log").read_text(errors="replace"), cfg.output


def same_standings(records: dict[str, dict[str, Any]], reference: dict[str, dict[str, Any]]) -> None:
    """Every match as in the twin run, and no fault charged to any bot but the attacker."""
    assert sorted(records) == sorted(reference)
    for match_id, rec in records.items():  # faults first: a victim's fault is what changes a match
        assert all(f["bot"] == SUBJECT for f in rec["faults"]), (match_id, rec["faults"])
        assert (rec["scores"], rec["ranks"]) == (reference[match_id]["scores"], reference[match_id]["ranks"]), (
            match_id,
            rec["faults"],
            rec.get("restarts"),
        )


# What each attack's own report says when it fails (in the cage).
FAILED = {
    "secrets": [
        r"ATTACK ENV HOME,LANG,PATH,(PWD,)?REFEREE_BOT_TOKEN,REFEREE_TEST_MARK,TMPDIR\n",
        r"ATTACK secrets done",
    ],
    "journal": [r"ATTACK journal candidates 0", r"ATTACK journal done"],
    "kill": [r"ATTACK kill done \(0 squatted\)"],
    "stop": [r"ATTACK stop done"],
    "daemon": [r"ATTACK daemon done"],
    "flood": [rf"--- log cap of {LOG_MB} MB reached"],
    "fork": [r"ATTACK FORKED \d+"],
    "memory": [r"ATTACK allocation refused: MemoryError"],
}
SUCCEEDED = re.compile(r"ATTACK (GOT|WROTE|KILLED|SQUAT|STOPPED|ALLOCATED)")


@needs_bwrap
@pytest.mark.parametrize("name", ATTACKS)
def test_every_attack_fails_in_the_cage(name: str, tmp_path: Path, twin: tuple[Path, dict[str, Any]]) -> None:
    seeds, reference = twin
    records, log, out = attack(tmp_path, seeds, name, "bwrap")
    for pattern in FAILED[name]:
        assert re.search(pattern, log), (pattern, log[-2000:])
    assert not SUCCEEDED.search(log), log[-2000:]
    same_standings(records, reference)
    if name == "fork":
        assert int(re.findall(r"FORKED (\d+)", log)[0]) < MAX_PROCESSES
    if name == "flood":
        assert (out / "logs" / f"{SUBJECT}.log").stat().st_size <= (LOG_MB << 20) + 4096
    for bot in ("greedy", "cautious", "random"):
        assert "[guard]" not in (out / "logs" / f"{bot}.log").read_text(), bot  # never stopped or killed


# Without the cage: what still holds, and what the attacker gets.
@pytest.mark.parametrize("name", ["secrets", "daemon", "flood", "fork", "memory"])
def test_without_the_cage_these_protections_still_hold(
    name: str, tmp_path: Path, twin: tuple[Path, dict[str, Any]]
) -> None:
    seeds, reference = twin
    records, log, _out = attack(tmp_path, seeds, name, "none")
    for pattern in FAILED[name]:
        assert re.search(pattern, log), (pattern, log[-2000:])  # allow-listed env, log cap, limits
    same_standings(records, reference)  # and no survivor (play checks /proc): the cgroup
    if name == "secrets":
        assert "ORGANISER" not in log.split("ATTACK ENV ")[1].split("\n")[0]
        assert "ATTACK GOT token of pid" in log  # MISSING without the cage: rivals' /proc/<pid>/environ


def test_without_the_cage_the_attacker_reaches_the_journal_and_its_rivals(
    tmp_path: Path, twin: tuple[Path, dict[str, Any]]
) -> None:
    """What is missing without bubblewrap, shown (the referee's user is root here)."""
    seeds, _reference = twin
    _records, log, out = attack(tmp_path / "journal", seeds, "journal", "none")
    assert "ATTACK WROTE" in log and '{"forged": true}' in (out / JOURNAL).read_text()
    # the squatter never answers: a short deadline ends the rivals' timeouts sooner (nothing is
    # compared, so a timeout more or less under load changes nothing this test looks at)
    _records, log, out = attack(tmp_path / "kill", seeds, "kill", "none", 500)
    assert "ATTACK KILLED" in log


def test_without_the_cage_a_stopped_rival_is_killed_and_restarted(
    tmp_path: Path, twin: tuple[Path, dict[str, Any]]
) -> None:
    seeds, _reference = twin
    # a stopped rival times out whatever the load; only the guard's kill and the restart are judged
    records, log, out = attack(tmp_path, seeds, "stop", "none", 2000)
    assert "ATTACK STOPPED" in log
    logs = "".join((out / "logs" / f"{bot}.log").read_text() for bot in ("greedy", "cautious", "random"))
    assert "[guard] the bot is stopped (SIGSTOP or a tracer): killed" in logs
    assert "--- restart 1/1 after exit code -9 (SIGKILL)" in logs
    assert sorted(records) == sorted(_reference)  # the run finished
