"""One exit-code rule: every ``RefereeError`` reaches the user as one ``error:`` line and the
exit code its class carries (``errors.py``), through the one handler of ``cli/main.py``,
never as a traceback: ``check-bot`` whose opponent cannot start (it cannot open its log;
it exits before it is ready), an unwritable ``--log-dir``, a bot command that does not
exist, a bad tournament file, an output folder that cannot be written. And the reasons
an excluded bot is published with, made where each bot failed: real bots nobody listens
for, answering HTTP 500, exiting 1, not a program. Most commands run in this process
(``here``: an escaping exception fails the test); the check-bot ones with a log folder and
with a bare interpreter run as a user's process does."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner

from referee.bots.cage.process import free_port
from referee.cli.main import main
from referee.errors import (
    BotStartError,
    ClusterError,
    ConfigError,
    JournalError,
    LeaderboardError,
    OutputError,
    ReplayError,
    TranscriptError,
    UsageError,
)
from tests.support.cli import ROOT, here, referee
from tests.support.localbots import serving
from tests.support.steady import Steady

pytestmark = pytest.mark.parallel


def one_error(done: subprocess.CompletedProcess[str], code: int) -> str:
    """The one ``error:`` line of a finished command that exited ``code``, no traceback."""
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and done.stderr.rstrip().endswith(errors[0]), done.stderr
    return errors[0]


def test_each_error_class_carries_the_code_it_had() -> None:
    assert [c.exit_code for c in (BotStartError, JournalError, ClusterError, OutputError)] == [1, 1, 1, 1]
    assert [c.exit_code for c in (UsageError, ConfigError, LeaderboardError, TranscriptError, ReplayError)] == [2] * 5


def test_check_bot_whose_opponent_cannot_open_its_log_is_one_line(tmp_path: Path, steady_bot: Steady) -> None:
    logs = tmp_path / "logs"
    (logs / "sample-random.log").mkdir(parents=True)  # the opponent's log is a folder: it cannot start
    done = here("check-bot", "--game", "nimmt_plus", "--log-dir", str(logs), steady_bot.url)
    line = one_error(done, 1)
    assert line.startswith("error: check-bot's opponent, the sample bot 'python -m sample_bots.nimmt random'")
    assert "cannot open its log" in line and "Is a directory" in line
    assert done.stdout == ""  # no report: the bot under test was not checked


def test_check_bot_whose_opponent_exits_before_it_is_ready_is_one_line(tmp_path: Path, steady_bot: Steady) -> None:
    """The referee run by the base interpreter, its packages on PYTHONPATH (which bots never
    get): the opponent, ``python -m sample_bots.nimmt`` with that interpreter, finds no
    ``sample_bots`` and exits 1 (as where the referee is installed without them)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("the referee runs outside a venv: its base interpreter has its packages")
    src = tmp_path / "src"
    src.mkdir()
    (src / "referee").symlink_to(ROOT / "referee")
    site = [p for p in sys.path if p.endswith("site-packages")]
    env = {"PYTHONPATH": ":".join([str(src), *site])}
    done = subprocess.run(
        [
            getattr(sys, "_base_executable", sys.executable),
            "-m",
            "referee",
            "check-bot",
            "--game",
            "nimmt_plus",
            steady_bot.url,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", **env},
    )
    line = one_error(done, 1)
    assert "did not start: it exited with code 1 before it was ready" in line
    assert "No module named 'sample_bots'" in line


def test_check_bot_with_an_unwritable_log_dir_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    done = referee("check-bot", "--game", "nimmt_plus", "--log-dir", str(tmp_path / "file" / "logs"), "http://x:1/")
    assert one_error(done, 1) == f"error: --log-dir {tmp_path / 'file' / 'logs'}: cannot create it: Not a directory"


def test_check_bot_with_a_command_that_does_not_exist_reports_it(tmp_path: Path) -> None:
    done = here("check-bot", "--game", "nimmt_plus", "--", str(tmp_path / "no-such-bot"), "{port}")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stderr
    assert (
        f"  FAIL start: bot 'candidate': cannot start '{tmp_path / 'no-such-bot'}': no such executable" in done.stdout
    )
    assert done.stdout.rstrip().endswith("result: FAIL (1 check failed, 0 warnings)")


def test_a_bad_tournament_file_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[tournament]\ngame = "nimmt_plus"\nplayerz = 2\n')
    for args in (("check-bot", "--config", str(bad), "--bot", "a"), ("run", str(bad)), ("check", str(bad))):
        assert "tournament.playerz" in one_error(here(*args), 2)


def test_an_output_folder_that_cannot_be_written_is_one_line_exit_1(tmp_path: Path, steady_bot: Steady) -> None:
    (tmp_path / "taken").write_text("")
    cfg = _config(tmp_path, {"a": f"{steady_bot.url}a", "b": f"{steady_bot.url}b"}, output=tmp_path / "taken")
    line = one_error(here("run", str(cfg), "-q"), 1)
    assert line.startswith(f"error: {tmp_path / 'taken'}")


def test_usage_errors_of_every_command_are_one_line_exit_2(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"a": "http://127.0.0.1:1/", "b": "http://127.0.0.1:1/"})
    assert one_error(here("plan", str(cfg), "--deals", "1"), 2) == "error: --deals: the pilot needs at least 2 deals"
    assert one_error(here("schema", "chess"), 2).startswith("error: no game 'chess'")
    assert one_error(here("replay", str(tmp_path / "nowhere"), "m1"), 2).startswith("error: ")


# ------------------------------------------------------------------ public reasons


class _Http500(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Silent."""


@pytest.fixture
def http500() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 that answers every request 500."""
    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Http500)) as url:
        yield url


def _config(tmp_path: Path, bots: dict[str, str | list[str]], output: Path | None = None, **extra: object) -> Path:
    """A 2-player nimmt_plus tournament of these bots (a URL, or a command) in ``tmp_path``."""
    doc = {
        "tournament": {
            "game": "nimmt_plus",
            "seed": 4,
            "players": 2,
            "format": "random",
            "matches": 4,
            "transcripts": "none",
            "output": str(output or tmp_path / "out"),
            **extra,
        },
        # a bot nobody listens for is waited for the whole window; the others fail at once
        "limits": {"deadline_ms": 30000, "startup_ms": 2000},
        "bot": [{"name": n, "url": b} if isinstance(b, str) else {"name": n, "command": b} for n, b in bots.items()],
    }
    path = tmp_path / "t.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


@pytest.mark.parametrize("workers", [1, 2])
def test_excluded_bots_are_published_with_clean_reasons(
    tmp_path: Path, steady_bot: Steady, http500: str, workers: int
) -> None:
    failing: dict[str, str | list[str]] = {
        "nobody": f"http://127.0.0.1:{free_port()}/",
        "http500": http500,
        "exits": ["sh", "-c", "exit 1", "{port}"],
        "missing": [str(tmp_path / "no-such-bot"), "{port}"],
    }
    good: dict[str, str | list[str]] = {n: f"{steady_bot.url}{n}" for n in ("a", "b", "c")}
    cfg = _config(tmp_path, {**good, **failing}, on_unready="exclude", workers=workers)
    done = CliRunner().invoke(main, ["run", str(cfg), "-q"])
    assert done.exit_code == 0, done.output
    standings = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert {e["name"]: e["reason"] for e in standings["excluded"]} == {
        "nobody": "connection refused",
        "http500": "HTTP 500",
        "exits": "exited with code 1 before it was ready",
        "missing": "cannot start its command: no such executable",
    }
    settings = json.loads((tmp_path / "out" / "tournament.json").read_text())["settings"]
    assert settings["excluded"] == standings["excluded"]
    # the organiser still sees the whole story on the console: URL, log, worker
    assert "(limits.startup_ms; last: cannot connect to 127.0.0.1:" in done.output
    assert ("(on worker " in done.output) == (workers > 1)
