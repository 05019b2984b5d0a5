"""The thin CLI, through Click's CliRunner."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from referee.cli import main
from referee.games import GAMES


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
