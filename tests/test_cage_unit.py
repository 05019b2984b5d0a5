"""The cage's smaller promises, each with a real bot or a real config (issue 19):
the token in every request (and a forged request refused by a bot that checks it), the
bot's user, folder, environment table and read-only own files, relative command paths
against the tournament file's folder, sandbox modes and their errors, URLs with
credentials refused, a log tail with escape sequences printed escaped."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from referee.bots.cage import sandbox, uids
from referee.bots.cage.process import ManagedBot, printable, start_managed, wait_ready
from referee.bots.cage.sandbox import BotSpec, CageLimits, bwrap_works, resolve_command
from referee.bots.client import protocol, wire
from referee.config.parse import load_config
from referee.config.redacted import Secret
from referee.errors import BotStartError, ConfigError
from referee.schedule.settings import published
from tests.support.cli import referee
from tests.support.tournament import UNREACHABLE_DEADLINE_MS, UNREACHABLE_STARTUP_MS

pytestmark = pytest.mark.parallel  # start-up windows out of reach; the SIGTERM grace test races

ROOT = Path(__file__).resolve().parent.parent
TOKEN_BOT = ROOT / "tests" / "bots" / "token_bot.py"
HELLO = protocol.hello("t", "nimmt_plus", {}, "bot")
needs_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is not installed or cannot run here")


def write_config(folder: Path, bot: str, limits: str = "") -> Path:
    """A tournament file in ``folder`` with two sample bots and the ``[[bot]]`` text ``bot``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "t.toml"
    path.write_text(
        f'[tournament]\ngame = "nimmt_plus"\noutput = "{folder / "out"}"\n'
        f"[limits]\nstartup_ms = {UNREACHABLE_STARTUP_MS}\n{limits}\n"
        '[[bot]]\nname = "greedy"\ncommand = ["python", "-m", "sample_bots.nimmt", "greedy", "--port", "{port}"]\n'
        f"[[bot]]\n{bot}\n"
    )
    return path


@needs_bwrap
def test_every_request_carries_the_token_and_a_forged_one_is_refused(tmp_path: Path) -> None:
    spec = BotSpec("tok", ("python", str(TOKEN_BOT), "--port", "{port}"), env={"GREETING": "hi"})

    async def scenario() -> tuple[int | None, int | None]:
        bot = await start_managed(spec, tmp_path / "logs", HELLO, startup_ms=UNREACHABLE_STARTUP_MS)  # token matched
        try:
            statuses = []
            for token in (None, Secret("guess")):  # sent on the referee's own path into the cage
                forged = wire.Endpoint.make("tok", bot.url, token)
                assert forged.target is not None
                forged = replace(forged, target=replace(forged.target, connect=bot.connect))
                async with wire.new_client(1) as client:
                    statuses.append((await wire.post(client, forged, HELLO, UNREACHABLE_DEADLINE_MS, 65536)).status)
            return statuses[0], statuses[1]
        finally:
            bot.stop()

    assert asyncio.run(scenario()) == (401, 401)
    log = (tmp_path / "logs" / "tok.log").read_text()
    assert "cwd=/home/bot greeting=hi own-files=read-only" in log
    if os.geteuid() == 0:  # a uid of its own, from the documented range
        uid = int(re.search(r"uid=(\d+)", log).group(1))  # type: ignore[union-attr]
        assert uids.FIRST_UID <= uid < uids.FIRST_UID + uids.SLOTS
    assert not (TOKEN_BOT.parent / "written-by-bot").exists()


def test_relative_paths_in_command_resolve_against_the_tournament_file(tmp_path: Path) -> None:
    folder = tmp_path / "league"
    (folder / "bots").mkdir(parents=True)
    shutil.copy(TOKEN_BOT, folder / "bots" / "mybot.py")
    config = write_config(
        folder,
        'name = "mine"\ncommand = ["python", "bots/mybot.py", "--port", "{port}"]\n'
        'env = { GREETING = "${MY_GREETING}" }',
    )
    assert resolve_command(["python", "bots/mybot.py", "--port", "{port}"], folder) == [
        "python",
        str((folder / "bots" / "mybot.py").resolve()),
        "--port",
        "{port}",
    ]
    done = referee("check", str(config), cwd="/", env={"MY_GREETING": "from-env"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "greeting=from-env" in (folder / "out" / "logs" / "mine.log").read_text()


def test_referee_check_reports_a_missing_program_in_one_line(tmp_path: Path) -> None:
    config = write_config(tmp_path, 'name = "ghost"\ncommand = ["no-such-program-here", "--port", "{port}"]')
    done = referee("check", str(config))
    assert done.returncode != 0
    assert "FAIL ghost" in done.stdout and "'no-such-program-here': no such executable" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_sandbox_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    bot = 'name = "b"\ncommand = ["python", "-m", "sample_bots.nimmt", "random", "--port", "{port}"]'
    assert published(load_config(write_config(tmp_path, bot)))["sandbox"] == "auto"
    with pytest.raises(ConfigError, match=r"limits.sandbox: unknown sandbox 'bwarp' \(did you mean 'bwrap'\?\)"):
        load_config(write_config(tmp_path, bot, 'sandbox = "bwarp"'))
    with pytest.raises(ConfigError, match=r"limits.memory_mb: must be at least 16"):
        load_config(write_config(tmp_path, bot, "memory_mb = 1"))
    monkeypatch.setattr(sandbox, "bwrap_works", lambda: False)
    monkeypatch.setattr(sandbox, "_warned", False)
    with pytest.raises(BotStartError, match="sandbox = 'bwrap' but bubblewrap is not installed"):
        sandbox.use_bwrap("bwrap")
    required = ManagedBot(BotSpec("b", ("python", "-c", "", "{port}"), limits=CageLimits(sandbox="bwrap")), tmp_path)
    assert "Bearer" in required.endpoint().headers["Authorization"]  # no cage needed for its endpoint
    with pytest.raises(BotStartError, match="sandbox = 'bwrap' but bubblewrap is not installed"):
        required.start()  # refused: nothing started
    assert required.proc is None
    with caplog.at_level(logging.WARNING, logger="referee"):
        assert not sandbox.use_bwrap("auto") and not sandbox.use_bwrap("auto")
    assert [r.getMessage() for r in caplog.records] == [sandbox.NO_CAGE_WARNING]  # one line, once
    assert "apt-get install bubblewrap" in sandbox.NO_CAGE_WARNING


def test_urls_with_credentials_and_bad_env_tables_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must not contain a user name or password") as err:
        load_config(write_config(tmp_path, 'name = "r"\nurl = "http://admin:s3cr3t@127.0.0.1:8001/"'))
    assert "s3cr3t" not in str(err.value)
    with pytest.raises(ConfigError, match=r"env.REFEREE_BOT_TOKEN: must be a variable name"):
        load_config(
            write_config(
                tmp_path,
                'name = "e"\ncommand = ["python", "x.py", "--port", "{port}"]\nenv = { REFEREE_BOT_TOKEN = "mine" }',
            )
        )
    with pytest.raises(ConfigError, match=r"bot\[1\] \(r\).env: only for a bot with a command"):
        load_config(write_config(tmp_path, 'name = "r"\nurl = "http://127.0.0.1:8001/"\nenv = { A = "b" }'))
    with pytest.raises(ConfigError, match=r"workdir: .* is not a folder"):
        load_config(
            write_config(
                tmp_path, 'name = "w"\ncommand = ["python", "x.py", "--port", "{port}"]\nworkdir = "no/such/dir"'
            )
        )


def test_a_log_tail_with_escape_sequences_is_printed_escaped(tmp_path: Path) -> None:
    evil = "print('\\x1b]0;pwned\\x07\\x1b[2J\\u202eevil', flush=True); raise SystemExit(3)"
    spec = BotSpec(
        "evil", ("python", "-c", evil, "--port", "{port}"), limits=CageLimits(sandbox="none", bot_user="referee")
    )
    bot = ManagedBot(spec, tmp_path / "logs")

    async def scenario() -> str:
        bot.start()
        try:
            await wait_ready(bot, bot.endpoint(), HELLO, UNREACHABLE_STARTUP_MS, 1000, 65536)
        except BotStartError as exc:
            return str(exc)
        finally:
            bot.stop()
        return ""

    message = asyncio.run(scenario())
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\u202eevil" in message
    assert "\x1b" not in message and "\x07" not in message and "\u202e" not in message
    assert printable("tab\tok \x9b") == "tab\tok \\x9b"


def test_the_bots_layer_does_not_load_the_config_or_the_games() -> None:
    code = "import sys, referee.bots.cage.process; print(sorted(m for m in sys.modules if m in ('referee.config.model', 'referee.games')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.serial  # the trap's 100 ms must end within the referee's 3 s grace
@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_sigterm_reaches_the_bot_and_the_log_ends_with_a_stop_line(tmp_path: Path, mode: str) -> None:
    if mode == "bwrap" and not bwrap_works():
        pytest.skip("bubblewrap is not installed or cannot run here")
    limits = CageLimits(sandbox=mode, bot_user="referee" if mode == "none" else "own")
    env = {"PYTHONPATH": str(ROOT)}
    spec = BotSpec(
        "trap", ("python", str(ROOT / "tests" / "bots" / "trapping.py"), "--port", "{port}"), env=env, limits=limits
    )

    async def scenario() -> None:
        bot = await start_managed(spec, tmp_path / "logs", HELLO)
        bot.stop()

    asyncio.run(scenario())
    log = (tmp_path / "logs" / "trap.log").read_text()
    assert "trapped SIGTERM: saving and exiting\n" in log, log
    stop = re.search(r"--- stop \(SIGTERM\), exited 0 after (\d+) ms\n\Z", log)
    assert stop and int(stop.group(1)) >= 100, log  # the trap's 100 ms ran: not killed at once
