"""``referee`` as a user runs it: a real process started from the repository root. The one
place that builds its command line; tests that need the process itself (to kill it) use
``start``, the others ``referee``; ``here`` runs any command, ``run_here`` runs ``referee run``,
in this process (the same CLI without a new interpreter's start-up, for tests that are not
about the process itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from referee.cli import main

ROOT = Path(__file__).resolve().parents[2]


def argv(*args: str) -> list[str]:
    """The command line of ``referee ARGS`` with this interpreter."""
    return [sys.executable, "-m", "referee", *args]


def referee(
    *args: str, timeout: float = 180, env: dict[str, str] | None = None, cwd: Path | str = ROOT
) -> subprocess.CompletedProcess[str]:
    """Run ``referee ARGS`` to its end; its exit code and captured output (``env`` adds to ours)."""
    return subprocess.run(
        argv(*args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
    )


def start(*args: str, env: dict[str, str] | None = None, pipe: bool = True) -> subprocess.Popen[str]:
    """Start ``referee ARGS`` in the background, its output piped (read it with
    ``communicate``) or, with ``pipe=False``, dropped (a pipe nobody reads fills up)."""
    out = subprocess.PIPE if pipe else subprocess.DEVNULL
    return subprocess.Popen(
        argv(*args),
        cwd=ROOT,
        stdout=out,
        stderr=out,
        text=True,
        env=None if env is None else {**os.environ, **env},
    )


def here(*args: str) -> subprocess.CompletedProcess[str]:
    """``referee ARGS`` run in this process (the CLI through ``CliRunner``): its exit code and
    output as ``referee`` gives them; an exception the CLI let escape (a user would see a
    traceback) is raised here."""
    done = CliRunner().invoke(main.main, list(args))
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return subprocess.CompletedProcess(["referee", *args], done.exit_code, done.stdout, done.stderr)


def run_here(cfg: Path, out: Path, *extra: str) -> str:
    """``referee run CFG --output OUT -q EXTRA`` in this process (the CLI through ``CliRunner``),
    which must exit 0; its output."""
    done = CliRunner().invoke(main.main, ["run", str(cfg), "--output", str(out), "-q", *extra])
    assert done.exit_code == 0, (done.output, done.exception)
    return done.output
