"""A real season (issue 27): bots that are not ready (``on_unready``), bot versions, and
the small ones (the resume hint, the readiness line, ``--verbose``, ``plan``'s warning,
no traceback from a ``--workers`` run). Real HTTP bots: one fast bot server process
serves many bot URLs (one path each); unreachable bots are ports nobody listens on."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tomli_w
from click.testing import CliRunner

from benchmarks import fast_bot
from referee.audit.verify import verify
from referee.bots.cage.process import free_port
from referee.bots.client.protocol import hello_version
from referee.cli.main import main
from referee.cli.play import resume_command
from referee.run.pilot import looks_equal
from referee.run.rejoin import READY_AGAIN
from tests.support.cli import referee
from tests.support.outputs import journal_lines

pytestmark = pytest.mark.parallel

FAST_BOT = Path(fast_bot.__file__).resolve()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One fast bot process; every bot of a test is a path of its URL."""
    with fast_bot.running("first", "python") as bot:
        yield bot.url


@contextlib.contextmanager
def back_bot(port: int) -> Iterator[None]:
    """A fast bot process listening on ``port`` once this returns: a run started next finds
    it ready, however long its start took on a loaded machine."""
    proc = subprocess.Popen([sys.executable, str(FAST_BOT), str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("listening on ")
        yield
    finally:
        proc.terminate()
        proc.wait()


@contextlib.contextmanager
def late_bot(port: int, delay_s: float) -> Iterator[None]:
    """A fast bot process that starts listening on ``port`` after ``delay_s``."""
    procs: list[subprocess.Popen[bytes]] = []
    timer = threading.Timer(
        delay_s,
        lambda: procs.append(subprocess.Popen([sys.executable, str(FAST_BOT), str(port)], stdout=subprocess.DEVNULL)),
    )
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        for p in procs:
            p.terminate()
            p.wait()


def _config(path: Path, bots: dict[str, str], startup_ms: int = 2500, **tournament: Any) -> Path:
    """A nimmt_plus tournament of URL bots (name -> URL) written to ``path``."""
    doc = {
        "tournament": {
            "name": "season",
            "game": "nimmt_plus",
            "seed": 27,
            "players": 4,
            "format": "random",
            "matches": 12,
            "on_unready": "exclude",
            "transcripts": "none",
            "output": str(path.parent / "out"),
            **tournament,
        },
        "limits": {"deadline_ms": 30000, "startup_ms": startup_ms},
        "bot": [{"name": n, "url": u} for n, u in bots.items()],
    }
    path.write_text(tomli_w.dumps(doc))
    return path


def _run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(main, ["run", *args])
    assert result.exit_code == code, result.output + result.stderr
    return result


def _standings(out: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((out / "standings.json").read_text())
    return doc


@pytest.mark.serial
def test_200_bots_3_unreachable_and_one_late_play_without_the_3(tmp_path: Path, server: str) -> None:
    bots = {f"bot{i:03d}": f"{server}bot{i:03d}" for i in range(196)}
    down = {f"down{i}": f"http://127.0.0.1:{free_port()}/" for i in range(3)}
    late_port = free_port()
    cfg = _config(tmp_path / "s.toml", {**bots, **down, "late": f"http://127.0.0.1:{late_port}/"}, 2000, matches=20)
    with late_bot(late_port, 1.0):
        result = _run(str(cfg), "-q")
    out = tmp_path / "out"
    doc = _standings(out)
    excluded = {e["name"]: e["reason"] for e in doc["excluded"]}
    assert set(excluded) == set(down)
    for reason in excluded.values():  # why, without the URL (tournament.json never holds one)
        assert reason in ("connection refused", "timed out after 2000 ms") and "127.0.0.1" not in reason
    assert len(doc["settings"]["bots"]) == 197 and "late" in doc["settings"]["bots"]
    assert not set(down) & {b for line in journal_lines(out) for b in line["bots"]}
    assert "3 of 200 bots not ready: down0, down1, down2; 197 ready, slowest" in result.stderr
    assert "playing without 3 bot(s)" in result.stderr
    assert "**Excluded** down0" in (out / "README.md").read_text()
    tournament = json.loads((out / "tournament.json").read_text())
    assert [e["name"] for e in tournament["settings"]["excluded"]] == sorted(down)


@pytest.mark.serial
def test_on_unready_stop_keeps_todays_exit(tmp_path: Path, server: str) -> None:
    bots = {f"b{i}": f"{server}b{i}" for i in range(4)} | {"down": f"http://127.0.0.1:{free_port()}/"}
    cfg = _config(tmp_path / "s.toml", bots, startup_ms=300, on_unready="stop")
    result = _run(str(cfg), "-q", code=1)
    assert "1 of 5 bots not ready: down" in result.stderr and "did not answer hello" in result.stderr
    assert not (tmp_path / "out" / "matches.jsonl").exists() or not journal_lines(tmp_path / "out")


@pytest.mark.serial
def test_an_excluded_bot_joins_on_resume_with_grow_and_not_without(tmp_path: Path, server: str) -> None:
    port = free_port()
    bots = {f"b{i}": f"{server}b{i}" for i in range(4)} | {"new": f"http://127.0.0.1:{port}/"}
    grow = _config(tmp_path / "g.toml", bots, 800, format="round_robin", grow=True, players=2)
    _run(str(grow), "-q")
    out = tmp_path / "out"
    assert [e["name"] for e in _standings(out)["excluded"]] == ["new"] and len(journal_lines(out)) == 6
    with back_bot(port):
        _run(str(grow), "--resume", "-q")
    doc = _standings(out)
    assert doc["excluded"] == [] and len(journal_lines(out)) == 10 and len(doc["standings"]) == 5
    assert verify(out).ok

    plain = _config(tmp_path / "p.toml", bots, 800, format="round_robin", players=2, output=str(tmp_path / "plain"))
    _run(str(plain), "-q")
    with back_bot(port):  # without grow the tournament keeps the bots it started with
        _run(str(plain), "--resume", "-q")
    doc = _standings(tmp_path / "plain")
    assert doc["excluded"] == [{"name": "new", "reason": READY_AGAIN}] and len(doc["standings"]) == 4
    assert len(journal_lines(tmp_path / "plain")) == 6
    slower = _config(tmp_path / "p.toml", bots, 700, format="round_robin", players=2, output=str(tmp_path / "plain"))
    _run(str(slower), "--resume", "-q")  # greeted again, still down: today's reason
    (gone,) = _standings(tmp_path / "plain")["excluded"]
    assert gone["reason"] in ("connection refused", "timed out after 700 ms")


@pytest.mark.serial
def test_a_ladder_greets_its_excluded_bots_on_every_resume_and_takes_them_back(tmp_path: Path, server: str) -> None:
    port = free_port()
    bots = {f"b{i}": f"{server}b{i}" for i in range(4)} | {"late": f"http://127.0.0.1:{port}/"}
    cfg = _config(tmp_path / "l.toml", bots, 600, format="ladder", players=2, matches=64)
    _run(str(cfg), "-q")
    out = tmp_path / "out"
    (first,) = _standings(out)["excluded"]
    assert first["name"] == "late" and first["reason"] in ("connection refused", "timed out after 600 ms")
    again = _config(tmp_path / "l.toml", bots, 700, format="ladder", players=2, matches=128)
    _run(str(again), "--resume", "-q")  # still down: still out, today's reason
    (second,) = _standings(out)["excluded"]
    assert second["name"] == "late" and second["reason"] in ("connection refused", "timed out after 700 ms")
    assert not any("late" in line["bots"] for line in journal_lines(out))
    back = _config(tmp_path / "l.toml", bots, 2500, format="ladder", players=2, matches=256)
    with back_bot(port):
        _run(str(back), "--resume", "-q")
    doc = _standings(out)
    assert doc["excluded"] == [] and "late" in {row["name"] for row in doc["standings"]}
    assert any("late" in line["bots"] for line in journal_lines(out))


def test_a_changed_bot_file_makes_a_new_version(tmp_path: Path, server: str) -> None:
    home = Path(tempfile.mkdtemp(prefix="referee-season-"))  # readable by the cage's user (tmp_path is not)
    home.chmod(0o755)
    folder = home / "mybot"
    folder.mkdir(mode=0o755)
    shutil.copy(FAST_BOT, folder / "bot.py")
    (folder / "bot.py").chmod(0o644)
    bots: dict[str, Any] = {f"b{i}": f"{server}b{i}" for i in range(3)}
    doc = {
        "tournament": {
            "name": "season",
            "game": "nimmt_plus",
            "seed": 5,
            "players": 2,
            "rounds": 2,
            "grow": True,
            "transcripts": "none",
            "output": str(tmp_path / "out"),
        },
        "limits": {"deadline_ms": 30000},
        "bot": [{"name": n, "url": u} for n, u in bots.items()]
        + [{"name": "mine", "command": [sys.executable, str(folder / "bot.py"), "{port}"]}],
    }
    cfg = tmp_path / "v.toml"
    cfg.write_text(tomli_w.dumps({**doc, "tournament": {**doc["tournament"], "rounds": 1}}))
    _run(str(cfg), "-q")
    with (folder / "bot.py").open("a") as fh:
        fh.write("\n# resubmitted\n")
    cfg.write_text(tomli_w.dumps(doc))  # a second round, played by the new version
    _run(str(cfg), "--resume", "-q")
    out = tmp_path / "out"
    lines = journal_lines(out)
    mine = [line["versions"][line["bots"].index("mine")] for line in lines if "mine" in line["bots"]]
    assert len(mine) == 6 and len(set(mine[:3])) == 1 and len(set(mine[3:])) == 1 and mine[0] != mine[3]
    row = next(r for r in _standings(out)["standings"] if r["name"] == "mine")
    assert row["versions"] == [{"version": mine[0], "matches": 3}, {"version": mine[3], "matches": 3}]
    assert row["version"] == mine[3]
    others = next(r for r in _standings(out)["standings"] if r["name"] == "b0")
    assert len(others["versions"]) == 1  # an unchanged bot keeps its version across resumes
    report = verify(out)
    assert report.ok and report.versions["mine"] == {mine[0]: 3, mine[3]: 3}
    assert "## Bot versions" in (out / "README.md").read_text()
    shutil.rmtree(home)


def test_the_hello_reply_version() -> None:
    assert hello_version(b'{"ok": true, "version": "2.1-rc"}') == "2.1-rc"
    for body in (b"", b"nope", b'{"version": 3}', b'{"version": "' + b"x" * 65 + b'"}', b'{"version": "a\nb"}'):
        assert hello_version(body) == ""


@pytest.mark.serial
def test_a_workers_run_excludes_on_the_head_prints_no_traceback_and_equals_one_process(
    tmp_path: Path, server: str
) -> None:
    bots = {f"b{i}": f"{server}b{i}" for i in range(6)} | {"down": f"http://127.0.0.1:{free_port()}/"}
    one = _config(tmp_path / "one.toml", bots, 600, output=str(tmp_path / "one"))
    two = _config(tmp_path / "two.toml", bots, 600, output=str(tmp_path / "two"), workers=2)
    _run(str(one), "-q")
    proc = referee("run", str(two), "-q", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "CommClosedError" not in proc.stderr, proc.stderr
    assert "1 of 7 bots not ready: down" in proc.stderr
    assert (tmp_path / "one" / "standings.json").read_bytes() == (tmp_path / "two" / "standings.json").read_bytes()


def test_interrupted_run_prints_a_resume_command_with_its_overrides(tmp_path: Path) -> None:
    out = tmp_path / "out dir"
    cmd = [sys.executable, "-m", "referee", "run", "configs/the_game.toml", "--output", str(out), "--seed", "9"]
    # Ctrl-C reaches the run as it would from a terminal, whatever an earlier test in this
    # worker left SIGINT as (an ignored signal stays ignored across exec)
    proc = subprocess.Popen(
        cmd,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("matches "):  # the first progress line
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 1
    expected = f"referee run configs/the_game.toml --output '{out}' --seed 9 --resume"
    assert expected in rest
    assert resume_command(Path("c.toml"), workers=2, cluster="tcp://h:1") == (
        "referee run c.toml --workers 2 --cluster tcp://h:1 --resume"
    )


def test_verbose_lists_every_bot(tmp_path: Path, server: str) -> None:
    bots = {f"b{i}": f"{server}b{i}" for i in range(4)}
    result = _run(str(_config(tmp_path / "s.toml", bots)), "-q", "--verbose")
    assert "4 bots ready, slowest" in result.stderr
    assert all(f"  b{i}: ready in" in result.stderr for i in range(4))
    quiet = _run(str(_config(tmp_path / "s.toml", bots)), "-q", "--fresh")  # a second season in the folder
    assert "b0: ready" not in quiet.stderr


def test_plan_names_a_pair_that_looks_equal() -> None:
    rng = np.random.default_rng(1)
    deals = 40
    strong = rng.normal(1.0, 0.3, deals)
    twin_a, twin_b = rng.normal(2.0, 0.5, deals), rng.normal(2.0, 0.5, deals)
    values = np.stack([strong, twin_a, twin_b], axis=1)
    pairs = looks_equal(values, 3.0, 0.95, 0)
    assert len(pairs) == 1 and set(pairs[0]) == {1, 2}
