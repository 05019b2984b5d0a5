"""One progress display for long commands: on a terminal (a real pty) ``leaderboard`` and
``verify`` show their steps on one rewritten line; off a terminal, and with ``--quiet``,
nothing. The run's own line is tested with the run (tests/test_e2e.py)."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import here

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "leaderboards" / "nimmt_plus"


def on_a_terminal(*args: str) -> tuple[int, str]:
    """Run ``referee ARGS`` with its stderr on a pseudo-terminal; its exit code and stderr."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "referee", *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other side closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(SAMPLE, out, ignore=shutil.ignore_patterns("replays"))
    return out


def test_leaderboard_and_verify_show_progress_on_a_terminal_only(folder: Path) -> None:
    code, err = on_a_terminal("leaderboard", str(folder), "-f", "md,json")
    assert code == 0, err
    steps = [s.replace("\x1b[K", "") for s in err.split("\r") if s.strip()]
    assert steps[0] == "standings 0/1" and steps[-1].startswith("leaderboard files 3/3  in "), err
    assert "\rstandings 1/1  in " in err, err
    assert err.endswith("\r\n"), "the line is ended, so what is printed next starts on its own line"

    code, err = on_a_terminal("verify", str(folder))  # index.html was rendered by the sample's referee
    assert code in (0, 1), err
    assert "\rmatches verified 0/40\x1b[K" in err and "\rmatches verified 40/40  in " in err, err
    assert err.index("matches verified 40/40") < err.index("leaderboard files 5/5"), err

    code, err = on_a_terminal("verify", str(folder), "--quiet")
    assert code in (0, 1) and "\r" not in err and "/1" not in err and "/40" not in err, err

    piped = here("leaderboard", str(folder), "-f", "md")  # off a terminal
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    assert piped.stdout == f"{folder / 'README.md'}\n", piped.stdout
