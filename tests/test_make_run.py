"""``make run`` leaves the repository clean: it writes to out/<config>/, which git ignores,
never to the committed samples under leaderboards/ (``make samples`` re-publishes those)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.parallel,
    pytest.mark.skipif(
        shutil.which("make") is None or shutil.which("git") is None or not (ROOT / ".git").exists(),
        reason="needs make, git and a git checkout",
    ),
]


def run_command(*make_args: str) -> list[str]:
    """The referee command ``make -n run`` would execute."""
    out = subprocess.run(["make", "-n", "run", *make_args], cwd=ROOT, capture_output=True, text=True, check=True)
    lines = [shlex.split(line) for line in out.stdout.splitlines() if " run " in line and "referee" in line]
    assert len(lines) == 1, out.stdout
    return lines[0]


@pytest.mark.parametrize(
    ("args", "output"),
    [((), "out/nimmt_plus"), (("CONFIG=configs/dieci.toml",), "out/dieci")],
)
def test_make_run_writes_to_an_ignored_folder(args: tuple[str, ...], output: str) -> None:
    argv = run_command(*args)
    assert argv[argv.index("--output") + 1] == output
    probe = f"{output}/README.md"
    assert subprocess.run(["git", "check-ignore", "-q", probe], cwd=ROOT).returncode == 0, f"{probe} is not ignored"
    tracked = subprocess.run(["git", "ls-files", output], cwd=ROOT, capture_output=True, text=True, check=True)
    assert tracked.stdout == ""
