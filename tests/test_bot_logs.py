"""A bot that fails to start: ``referee check`` and ``run`` show the first error of its
log (not a tail cut off by what came after), and the log stays in the output folder."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from referee.bots.cage.process import first_error
from tests.support.cli import here

pytestmark = pytest.mark.parallel

NOISY = (
    "import sys; print('starting', flush=True); "
    "print('Error: cannot read weights.bin', flush=True); "
    "[print('retrying', i, flush=True) for i in range(40)]; sys.exit(1)"
)


def write_config(tmp_path: Path) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(
        "\n".join(
            [
                "[tournament]",
                'game = "nimmt_plus"',
                "players = 2",
                f'output = "{tmp_path / "out"}"',
                "[limits]",
                "startup_ms = 5000",
                "[[bot]]",
                'name = "noisy"',
                f"command = {json.dumps(['python', '-c', NOISY + ' # {port}'])}",
                "[[bot]]",
                'name = "fine"',
                'command = ["python", "-m", "sample_bots.nimmt", "random", "--port", "{port}"]',
            ]
        )
        + "\n"
    )
    return path


def test_check_and_run_show_the_first_error_of_a_bot_that_does_not_start(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    for command in ("check", "run"):
        proc = here(command, str(cfg))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        shown = proc.stdout + proc.stderr
        assert "Error: cannot read weights.bin" in shown, shown
        assert "more line(s) in the log" in shown
        assert "retrying 39" not in shown
        assert "retrying 0" in (tmp_path / "out" / "logs" / "noisy.log").read_text()


def test_first_error_of_a_long_traceback_keeps_its_last_line() -> None:
    log = ["--- start: port 5", "loading", "Traceback (most recent call last):"]
    log += [f'  File "bot.py", line {i}, in f{i}' for i in range(30)]
    log += ["ModuleNotFoundError: No module named 'numpyy'", "--- exited with code 1"]
    shown = first_error(log, limit=12)
    assert shown[0] == "Traceback (most recent call last):"
    assert shown[-2] == "ModuleNotFoundError: No module named 'numpyy'"
    assert shown[-1] == "... (21 more line(s) in the log)"
    assert first_error(["--- start", "a", "b"]) == ["a", "b"]


def test_check_run_and_check_bot_mark_their_sections_of_a_bot_log(tmp_path: Path) -> None:
    """Each command opens its part of ``logs/<bot>.log`` with ``--- <command> <UTC time>
    (<command line>)`` just before the bot's first start line; the stop line ends it."""
    cfg = tmp_path / "t.toml"
    fine = ["python", "-m", "sample_bots.nimmt", "random", "--port", "{port}"]
    cfg.write_text(
        "\n".join(
            ["[tournament]", 'game = "nimmt_plus"', "seed = 3", "players = 2", "rounds = 1"]
            + [f'output = "{tmp_path / "out"}"']
            + [f'[[bot]]\nname = "{n}"\ncommand = {json.dumps(fine)}' for n in ("a", "b")]
        )
        + "\n"
    )
    logs = tmp_path / "out" / "logs"
    for command in (["check", str(cfg)], ["run", str(cfg), "-q"]):
        proc = here(*command)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # the file gives a seed: the run says once what that means, and so do the published settings
    assert proc.stderr.count("note: the seed is given") == 1 and "predict every hand" in proc.stderr
    note = "seed 3 (given, not secret: anyone who can guess it can predict every hand)"
    assert note in (tmp_path / "out" / "README.md").read_text()
    assert html.escape(note, quote=False) in (tmp_path / "out" / "index.html").read_text()
    check_bot = ["check-bot", "--game", "nimmt_plus", "--matches", "1", "--log-dir", str(logs), "--", *fine]
    proc = here(*check_bot)
    assert "start" in proc.stdout, proc.stdout + proc.stderr
    own = [line for line in (logs / "a.log").read_text().splitlines() if line.startswith("--- ")]
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert re.fullmatch(rf"--- check {stamp} \(referee check {re.escape(str(cfg))}\)", own[0]), own
    assert re.fullmatch(rf"--- run {stamp} \(referee run {re.escape(str(cfg))} -q\)", own[3]), own
    kinds = ["start" if line[4].isdigit() else line.split()[1] for line in own]
    assert kinds == ["check", "start", "stop", "run", "start", "stop"], own
    candidate = [f.read_text() for f in logs.glob("*.log") if f.name not in ("a.log", "b.log")]
    assert any(
        re.match(rf"--- check-bot {stamp} \(referee check-bot --game nimmt_plus .* --port '\{{port}}'\)\n--- ", text)
        for text in candidate
    ), candidate
