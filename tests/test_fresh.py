"""No run loses a season: ``referee run`` over a folder that holds one refuses without
``--resume`` or ``--fresh``; ``--fresh`` moves the whole previous state to one dated folder
(never over an earlier one), and a ``kill -9`` at any step of the move is finished by the
next run; a season whose secret seed was revealed is not dealt from again. The CLI runs in
this process (``here``) with real bots; the crash tests kill a real process with SIGKILL at
each step."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.config.parse import load_config
from referee.report.policy import announce
from referee.run.fresh import PREVIOUS, closed_reason, finish_moves, move_aside, season_of
from referee.run.seeds import resolve_seed
from tests.support.cli import ROOT, here
from tests.support.tournament import NIMMT, lines, write_config

pytestmark = pytest.mark.parallel


Seasons = Callable[[bool], Path]  # secret -> the folder of a season played once
BOTS = [("greedy", NIMMT + ["greedy"]), ("cautious", NIMMT + ["cautious"]), ("random", NIMMT + ["random"])]


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def write(tmp_path: Path, secret: bool) -> Path:
    """The config of 3 matches writing to ``tmp_path/out`` (no given seed when ``secret``)."""
    config = write_config(tmp_path, BOTS, players=3, rounds=3, concurrency=1)
    if secret:
        config.write_text(config.read_text().replace("seed = 7\n", ""))
    return config


def play(tmp_path: Path, secret: bool) -> Path:
    """The config run once into ``tmp_path/out``; the folder."""
    config = write(tmp_path, secret)
    done = here("run", str(config), "-q")
    assert done.returncode == 0, done.stderr
    assert lines(tmp_path / "out") == 3
    return tmp_path / "out"


@pytest.fixture(scope="module")
def seasons(tmp_path_factory: pytest.TempPathFactory) -> Seasons:
    """A season played once per module and kind (``secret`` or not), played when first
    asked for; the tests get copies (``played``)."""
    made: dict[bool, Path] = {}

    def get(secret: bool) -> Path:
        if secret not in made:
            made[secret] = play(tmp_path_factory.mktemp("secret" if secret else "plain"), secret)
        return made[secret]

    return get


def played(tmp_path: Path, seasons: Seasons, secret: bool = False) -> tuple[Path, Path]:
    """A config of 3 matches (no given seed when ``secret``) and its season played once,
    in ``tmp_path/out`` (a copy of the module's: the path is in no file but the bots' logs)."""
    config = write(tmp_path, secret)
    out = tmp_path / "out"
    shutil.copytree(seasons(secret), out)
    return config, out


def test_a_run_over_a_season_refuses_in_one_line_and_touches_nothing(tmp_path: Path, seasons: Seasons) -> None:
    config, out = played(tmp_path, seasons)
    before = tree(out)
    again = here("run", str(config), "-q")
    assert again.returncode == 1
    (line,) = again.stderr.strip().splitlines()
    assert line == (
        f"error: {out} holds a season (3 matches, seed 7, open): go on with --resume, or start a new one "
        f"with --fresh (moves it to {out / PREVIOUS}/<date>/)"
    )
    assert tree(out) == before
    both = here("run", str(config), "-q", "--resume", "--fresh")
    assert both.returncode == 2 and "choose one" in both.stderr
    assert tree(out) == before


def test_fresh_moves_the_whole_season_to_a_new_dated_folder_each_time(tmp_path: Path, seasons: Seasons) -> None:
    config, out = played(tmp_path, seasons, secret=True)
    first = tree(out)
    assert {"matches.jsonl", "tournament.json", ".secret-seed", ".timings-state.json"} <= set(first)
    assert any(name.startswith("transcripts/") for name in first) and any(n.startswith("logs/") for n in first)
    fresh = here("run", str(config), "-q", "--fresh")
    assert fresh.returncode == 0, fresh.stderr
    (moved,) = (out / PREVIOUS).iterdir()
    assert f"fresh: the previous season is in {moved}" in fresh.stderr
    assert tree(moved) == first  # every file of the old season, byte for byte: its seed too
    assert lines(out) == 3 and (out / ".secret-seed").read_bytes() != first[".secret-seed"]
    second = {k: v for k, v in tree(out).items() if not k.startswith(PREVIOUS)}
    assert here("run", str(config), "-q", "--fresh").returncode == 0
    folders = sorted((out / PREVIOUS).iterdir())
    assert len(folders) == 2 and moved in folders
    assert tree(moved) == first  # the earlier one is never overwritten
    (other,) = [f for f in folders if f != moved]
    assert tree(other) == second


def test_fresh_over_an_empty_or_missing_folder_just_runs(tmp_path: Path) -> None:
    config = write_config(tmp_path, BOTS, players=3, rounds=3, concurrency=1)
    done = here("run", str(config), "-q", "--fresh")
    assert done.returncode == 0, done.stderr
    assert "previous season" not in done.stderr and not (tmp_path / "out" / PREVIOUS).exists()


def test_a_closed_season_is_not_dealt_from_again(tmp_path: Path, seasons: Seasons) -> None:
    config, out = played(tmp_path, seasons, secret=True)
    settings = json.loads((out / "tournament.json").read_text())["settings"]
    assert "seed" in settings and "seed_commitment" in settings  # revealed: the season is closed
    season = season_of(out)
    assert season is not None and season.line() == "3 matches, secret seed, revealed, closed"
    same = here("run", str(config), "-q", "--resume")
    assert same.returncode == 0, same.stderr  # nothing more to deal: publishing again is fine
    cfg = resolve_seed(load_config(config), resume=True)
    announce(cfg, 3)  # as a resume starts: a revealed seed stays revealed (a kill here hides nothing)
    assert json.loads((out / "tournament.json").read_text())["settings"]["seed"] == cfg.seed
    before = tree(out)
    config.write_text(config.read_text().replace("rounds = 3", "rounds = 6"))
    more = here("run", str(config), "-q", "--resume")
    assert more.returncode == 1
    assert f"error: {out}: this season is closed (its secret seed was revealed" in more.stderr
    assert tree(out) == before


def test_a_closed_ladder_refuses_to_reopen(tmp_path: Path) -> None:
    settings = {"format": "ladder", "closed": True, "seed": 5, "seed_commitment": "ab"}
    (tmp_path / "tournament.json").write_text(json.dumps({"settings": settings, "scheduled": 100}))
    assert closed_reason(tmp_path, 100, closed_now=True, grow=False) is None
    assert "closed" in (closed_reason(tmp_path, 100, closed_now=False, grow=False) or "")  # closed = false
    assert "closed" in (closed_reason(tmp_path, 300, closed_now=True, grow=False) or "")  # more matches
    open_season = {"format": "ladder", "closed": False, "seed_commitment": "ab"}
    (tmp_path / "tournament.json").write_text(json.dumps({"settings": open_season, "scheduled": 100}))
    assert closed_reason(tmp_path, 300, closed_now=False, grow=False) is None  # an open season grows


KILLER = """
import os, signal, sys
from pathlib import Path
from referee.run.fresh import move_aside

def move(out, at):
    calls = 0
    def step():
        nonlocal calls
        calls += 1
        if calls == at:
            os.kill(os.getpid(), signal.SIGKILL)
    move_aside(Path(out), "2026-01-02T03-04-05Z", step)
    return calls

for out, at in zip(sys.argv[1::2], sys.argv[2::2]):
    pid = os.fork()
    if pid == 0:
        print("steps", move(out, int(at)), flush=True)
        os._exit(0)
    print("exit", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


def kill_moves(jobs: list[tuple[Path, int]]) -> list[tuple[int, int | None]]:
    """``move_aside`` of each folder in a real process of its own (forked from one that
    imported the referee once) that SIGKILLs itself after step ``at`` (0: never); per job,
    its exit code and, when it was not killed, how many steps it took."""
    argv = [str(a) for out, at in jobs for a in (out, at)]
    done = subprocess.run([sys.executable, "-c", KILLER, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    results: list[tuple[int, int | None]] = []
    steps: int | None = None
    for word, value in (line.split() for line in done.stdout.splitlines()):
        if word == "steps":
            steps = int(value)
        else:
            results.append((int(value), steps))
            steps = None
    assert len(results) == len(jobs), done.stdout + done.stderr
    return results


def test_kill_9_at_every_step_of_fresh_loses_nothing(tmp_path: Path, seasons: Seasons) -> None:
    _, season = played(tmp_path, seasons)
    (season / PREVIOUS / "2026-01-02T03-04-05Z").mkdir(parents=True)  # an earlier season of that second
    (season / PREVIOUS / "2026-01-02T03-04-05Z" / "matches.jsonl").write_text("earlier\n")
    original = tree(season)
    entries = len([p for p in season.iterdir() if p.name != PREVIOUS])
    steps = entries + 2  # the dated folder made, each entry moved, the folder renamed
    jobs = [(_copy(season, tmp_path / f"at{at}"), at) for at in range(steps + 1)]  # at 0: never killed
    (whole, *killed) = kill_moves(jobs)
    assert whole == (0, steps)
    for (out, at), (code, _) in zip(jobs[1:], killed, strict=True):
        assert code == -signal.SIGKILL, f"not killed after step {at}"
        finished = finish_moves(out)
        assert len(finished) == (0 if at == steps else 1)
        assert [p.name for p in out.iterdir()] == [PREVIOUS]
        folders = sorted((out / PREVIOUS).iterdir())
        assert [f.name for f in folders] == ["2026-01-02T03-04-05Z", "2026-01-02T03-04-05Z-2"]
        assert tree(folders[0]) == {"matches.jsonl": b"earlier\n"}
        moved = {k: v for k, v in original.items() if not k.startswith(PREVIOUS)}
        assert tree(folders[1]) == moved, f"killed after step {at}"


def test_the_next_run_finishes_a_killed_fresh(tmp_path: Path, seasons: Seasons) -> None:
    config, out = played(tmp_path, seasons)
    before = tree(out)
    assert kill_moves([(out, 3)]) == [(-signal.SIGKILL, None)]
    assert (out / PREVIOUS / ".2026-01-02T03-04-05Z.partial").is_dir()  # half moved
    done = here("run", str(config), "-q", "--fresh")
    assert done.returncode == 0, done.stderr
    folder = out / PREVIOUS / "2026-01-02T03-04-05Z"
    assert f"note: an interrupted --fresh is finished: the season before is in {folder}" in done.stderr
    assert tree(folder) == before and lines(out) == 3


def test_move_aside_of_nothing_makes_no_folder(tmp_path: Path) -> None:
    assert move_aside(tmp_path / "none", "x") is None
    (tmp_path / "empty").mkdir()
    assert move_aside(tmp_path / "empty", "x") is None and list((tmp_path / "empty").iterdir()) == []


def _copy(src: Path, dst: Path) -> Path:
    """A copy of the folder ``src`` at ``dst``."""
    shutil.copytree(src, dst)
    return dst
