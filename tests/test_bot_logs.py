"""A bot that fails to start: ``referee check`` and ``run`` show the first error of its
log (not a tail cut off by what came after), and the log stays in the output folder."""

from __future__ import annotations

import json
from pathlib import Path

from referee.bots.process import first_error
from tests.support.cli import referee

ROOT = Path(__file__).resolve().parent.parent
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
        proc = referee(command, str(cfg))
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
