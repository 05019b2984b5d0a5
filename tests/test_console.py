"""The console at 200 bots: the run's standings cut to the top 10 (every row with
``--all-rows``), ``verify``'s versions summarised, ``check`` saying a run with
``on_unready = "exclude"`` would go ahead (exit 0) or not, the eta only once matches are
played, and the name rule's message saying exactly what is allowed. Real HTTP bots for
``check``; the folder of ``benchmarks.pages.synth`` for the standings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

from benchmarks import fast_bot
from benchmarks.pages import synth
from referee.audit.verify import VERSION_LINES, Report
from referee.bots.cage.process import free_port
from referee.cli.progress import RunDisplay
from referee.config.model import NAME_RULE
from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.report.publish import CONSOLE_ROWS, build_leaderboard, render_console
from referee.run.sink import Progress
from referee.store.tournament_file import load_output_dir
from tests.support.cli import referee

pytestmark = pytest.mark.parallel


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One fast bot process; every bot of a test is a path of its URL."""
    with fast_bot.running("first", "python") as bot:
        yield bot.url


def test_the_run_prints_the_top_10_and_says_how_to_see_every_row(tmp_path: Path) -> None:
    synth(tmp_path / "out", bots=30, matches=200)
    tournament, records = load_output_dir(tmp_path / "out")
    board = build_leaderboard(tournament, records, 50)
    names = [r["name"] for r in board.document["standings"]]
    top = render_console(board)
    shown = [n for n in names if f" {n} " in top]
    assert shown == names[:CONSOLE_ROWS]
    assert top.endswith("... and 20 more bots (every row: --all-rows, or README.md)")
    every = render_console(board, None)
    assert [n for n in names if f" {n} " in every] == names and "more bot" not in every


def test_verify_summarises_the_versions_of_many_bots() -> None:
    report = Report(Path("out"))
    for i in range(200):
        report.count_versions({"bots": [f"b{i:03d}"], "versions": ["v1"]})
    for i, n in ((7, 3), (12, 2)):
        for v in range(2, n + 1):
            report.count_versions({"bots": [f"b{i:03d}"], "versions": [f"v{v}"]})
    (line,) = report.version_lines()
    assert (
        line
        == "  versions: 198 bots played one version; 2 more than one: b007 (3), b012 (2) (--verbose lists every bot's)"
    )
    assert len(report.version_lines(every=True)) == 200
    few = Report(Path("out"))
    for i in range(VERSION_LINES):
        few.count_versions({"bots": [f"b{i}"], "versions": ["v1"]})
    assert few.version_lines() == [f"  b{i}: version v1 (1 matches)" for i in range(VERSION_LINES)]


def _config(path: Path, bots: dict[str, str], players: int) -> Path:
    doc = {
        "tournament": {
            "name": "console",
            "game": "nimmt_plus",
            "seed": 1,
            "players": players,
            "format": "random",
            "matches": 4,
            "on_unready": "exclude",
            "output": str(path.parent / "out"),
        },
        "limits": {"startup_ms": 500},
        "bot": [{"name": n, "url": u} for n, u in bots.items()],
    }
    path.write_text(tomli_w.dumps(doc))
    return path


def test_check_with_exclude_says_who_the_run_would_play_without(tmp_path: Path, server: str) -> None:
    bots = {f"b{i}": f"{server}b{i}" for i in range(4)} | {
        "down1": f"http://127.0.0.1:{free_port()}/",
        "down2": f"http://127.0.0.1:{free_port()}/",
    }
    goes = referee("check", str(_config(tmp_path / "a.toml", bots, 4)), timeout=60)
    assert goes.returncode == 0, goes.stderr
    assert "2 of 6 bots not ready: down1, down2" in goes.stderr
    assert "the run would go ahead with 4 bots, would play without: down1, down2" in goes.stdout
    stops = referee("check", str(_config(tmp_path / "b.toml", bots, 5)), timeout=60)  # 4 left for 5 seats
    assert stops.returncode == 1 and "too few bots are left" in stops.stderr
    assert "would go ahead" not in stops.stdout


def test_the_eta_appears_once_matches_are_being_played(capsys: pytest.CaptureFixture[str]) -> None:
    display = RunDisplay(quiet=False)
    display.every_s = 0.0  # every update shown
    lines = []
    for done, elapsed in ((0, 20.0), (1, 21.0), (3, 22.0), (5, 23.0)):  # 20 s waiting for bots, then 2 matches/s
        display.update(Progress(done, 1000, 0, elapsed, 0))
        lines.append(capsys.readouterr().err.strip().splitlines()[-1])
    assert "eta" not in lines[0] and "eta" not in lines[1]
    assert lines[2].endswith("2.0 matches/s  elapsed 22.0s  eta 498s")
    assert lines[3].endswith("elapsed 23.0s  eta 498s")  # 995 left at 2 a second


@pytest.mark.parametrize("name", [".hidden", "-dash", "_under"])
def test_the_name_rule_says_exactly_what_is_allowed(tmp_path: Path, name: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        tomli_w.dumps({"tournament": {"game": "nimmt_plus"}, "bot": [{"name": name, "url": "http://127.0.0.1:1/"}]})
    )
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert f"{name!r} must be {NAME_RULE}" in str(err.value)
    assert NAME_RULE == "1-64 letters, digits, '_', '.' or '-', the first a letter or a digit"
