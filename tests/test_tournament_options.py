"""A ``tournament.json`` whose game option the game refuses (markup, a hand-edited or
hostile file) is a clean error naming the file and the option in every command that reads
it, never a traceback; no file is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main

pytestmark = pytest.mark.parallel

SAMPLE = Path(__file__).resolve().parent.parent / "leaderboards" / "nimmt_plus"


def test_an_option_the_game_refuses_is_a_clean_error_everywhere(tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(SAMPLE, out, ignore=shutil.ignore_patterns("replays", "transcripts"))
    shutil.copytree(SAMPLE / "transcripts", out / "transcripts")
    doc = json.loads((out / "tournament.json").read_text())
    doc["settings"]["options"]["variant"] = "<script>alert(1)</script>"
    (out / "tournament.json").write_text(json.dumps(doc))
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    for args in (["leaderboard", str(out)], ["verify", str(out)], ["replay", str(out), "m000000"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.output.startswith(
            "error: tournament.json: settings.options: variant: '<script>alert(1)</script>' is not one of 'plus'"
        ), result.output
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before, "nothing was written"

    doc["settings"]["game"] = "no_such_game"
    (out / "tournament.json").write_text(json.dumps(doc))
    for args in (["leaderboard", str(out)], ["verify", str(out)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and "unknown game 'no_such_game' in tournament.json" in result.output, (
            result.output
        )
