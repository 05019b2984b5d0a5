"""The thin CLI, through Click's CliRunner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.games import GAMES
from tests.support.cli import here

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent


def test_games_lists_every_game_with_seats_and_option_defaults() -> None:
    result = CliRunner().invoke(main, ["games"])
    assert result.exit_code == 0
    for gid, game in GAMES.items():
        info = game.info
        assert f"{gid}  {info.title}  ({info.min_seats}-{info.max_seats} players" in result.output
        for option in info.options:
            assert f"    {option.name} = {option.default!r}" in result.output
    assert "variant = 'plus' one of 'plus', 'plus_dealt_zeros', 'zeros_negative', 'simple'" in result.output


def test_bad_config_is_exit_2_with_the_file_and_key(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(
        '[tournament]\ngame = "nimmt_plus"\nconcurency = 3\n[[bot]]\nname = "a"\nurl = "http://127.0.0.1:9/"\n'
    )
    result = CliRunner().invoke(main, ["run", str(cfg)])
    assert result.exit_code == 2
    assert f"{cfg}: tournament.concurency: unknown key (did you mean 'concurrency'?)" in result.output


def test_missing_config_and_bad_option_are_usage_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["run", str(tmp_path / "nope.toml")]).exit_code == 2
    assert runner.invoke(main, ["run", "--concurrency", "x", "c.toml"]).exit_code == 2
    assert runner.invoke(main, ["frobnicate"]).exit_code == 2


def bots_config(tmp_path: Path, bots: dict[str, list[str]]) -> Path:
    """A tournament file of started bots (name -> command) writing to tmp_path/out."""
    lines = ["[tournament]", 'game = "nimmt_plus"', "seed = 1", "players = 2", f'output = "{tmp_path / "out"}"']
    lines += ["[limits]", "startup_ms = 20000"]
    for name, command in bots.items():
        lines += ["[[bot]]", f'name = "{name}"', f"command = {json.dumps(command)}"]
    cfg = tmp_path / "t.toml"
    cfg.write_text("\n".join(lines) + "\n")
    return cfg


GOOD = ["python", "-m", "sample_bots.nimmt", "cautious", "--port", "{port}"]


def test_check_and_run_name_the_bots_that_failed_and_exit_1(tmp_path: Path) -> None:
    cfg = bots_config(
        tmp_path,
        {
            "good": GOOD,
            "missing": [str(tmp_path / "no-such-bot"), "{port}"],
            "dies": ["python", "-c", "import sys; print('no model file'); sys.exit(3)", "{port}"],
        },
    )
    check = here("check", str(cfg))
    assert check.returncode == 1, check.stdout + check.stderr
    assert "2 of 3 bots not ready: missing, dies; 1 ready, slowest good " in check.stderr
    assert re.search(r"FAIL missing .*no such executable", check.stdout), check.stdout
    assert re.search(r"FAIL dies .*exited with code 3 before it was ready", check.stdout), check.stdout
    assert "ok   good" in check.stdout
    assert "3 bots ready" not in check.stdout + check.stderr and "Traceback" not in check.stderr

    run = here("run", "--quiet", str(cfg))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "2 of 3 bots not ready: missing, dies; 1 ready, slowest good " in run.stderr  # even with --quiet
    assert "bot 'missing': cannot start" in run.stderr and "bot 'dies' exited with code 3" in run.stderr
    assert "Traceback" not in run.stderr and "matches.jsonl" not in run.stderr  # nothing played, nothing published
    assert not (tmp_path / "out" / "matches.jsonl").exists()


def test_check_with_every_bot_ready_says_so_and_exits_0(tmp_path: Path) -> None:
    check = here("check", str(bots_config(tmp_path, {"one": GOOD, "two": GOOD})))
    assert check.returncode == 0, check.stdout + check.stderr
    assert re.search(r"^2 bots ready, slowest (one|two) \d+ ms$", check.stdout, re.M), check.stdout
