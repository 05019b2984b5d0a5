"""The cage, third round (issue 34): a uid of its own for every bot, no channel between two
bots, nothing entering a cage through a contestant's link. Real tournaments, real
bubblewrap, real cgroups and overlays (as root), with the attackers of
``tests/hostile/attacker.py`` (see ``tests/test_cage_alone.py`` for the set-up): each
finding is judged from the attacker's side (its report in its log) and the victims' (no
fault, no restart, a clean stop), and nothing outlives the run (process, mount, cgroup,
key). The same runs without the cage, all bots as the referee's user, show that the
attacks are real.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

from referee.bots.cage import uids
from referee.bots.cage.process import ManagedBot, Revival, wait_ready
from referee.bots.cage.sandbox import BotSpec, CageLimits
from referee.bots.client import protocol
from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.report.policy import announce, publish_final
from referee.run import versions
from referee.run.runner import JOURNAL, run_tournament
from tests.support.cage_attack import Listener, leftovers, needs_cage, play, victims_untouched
from tests.support.cli import ROOT, referee
from tests.support.tournament import NIMMT, UNREACHABLE_DEADLINE_MS, UNREACHABLE_STARTUP_MS

# Deadlines and start-up windows out of any load's reach; leftovers (mounts, cgroups) are looked
# for in this process's runs only, keys in the bots' uid range (no caged bot may hold one).
pytestmark = pytest.mark.parallel

Played = tuple[Path, dict[str, str], list[Listener]]
HELLO = protocol.hello("t", "nimmt_plus", {}, "bot")


def keys_left() -> list[str]:
    """Lines of ``/proc/key-users`` for uids of the bots' range: keys some bot left behind."""
    lines = Path("/proc/key-users").read_text().splitlines()
    return [line for line in lines if uids.FIRST_UID <= int(line.split(":")[0]) < uids.FIRST_UID + uids.SLOTS]


@pytest.fixture(scope="module")
def apart(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """One caged run of both sets of attackers, channels and neighbours (7 seats: ``keyring-b``
    also looks for locks, ``shm`` also tries file notices and io_uring)."""
    yield play(tmp_path_factory.mktemp("apart"), "apart", "bwrap")


@needs_cage
def test_the_keyring_is_closed(apart: Played) -> None:
    out, logs, _ = apart
    for name in ("keyring-a", "keyring-b"):
        assert "ATTACK keyring: add_key refused: ENOSYS" in logs[name], logs[name][-1500:]
        assert "ATTACK keyring: 0 key(s) of a partner seen" in logs[name]
    victims_untouched(out, logs)
    assert not keys_left() and not leftovers()


@needs_cage
def test_locks_on_shared_files_pass_nothing_and_own_locks_work(apart: Played) -> None:
    _out, logs, _ = apart
    recv = logs["keyring-b"]  # the lock receiver
    assert "ATTACK lock send: holding locks on 6 shared file(s)" in logs["locksend"], logs["locksend"][-1500:]
    assert "lock send: flock" not in logs["locksend"]  # every lock was taken: the sender is not stopped
    assert "ATTACK lock recv: saw 0 lock(s) of another bot" in recv, recv[-1500:]
    assert "LOCKSEEN" not in recv
    assert "ATTACK lock own files: sqlite, lockf and flock work" in recv


@needs_cage
def test_no_file_notification_and_no_io_uring(apart: Played) -> None:
    log = apart[1]["shm"]  # it tries both too
    assert "ATTACK notify: inotify_init1 ENOSYS" in log, log[-1500:]
    assert "ATTACK notify: F_NOTIFY EINVAL" in log
    assert "ATTACK iouring: io_uring_setup ENOSYS" in log, log[-1500:]


def test_without_the_cage_the_channels_are_open(tmp_path: Path) -> None:
    """The attacks above are real: as one user without a cage, keys and locks pass."""
    _out, logs, _ = play(tmp_path, "channels", "none")
    assert re.search(r"ATTACK keyring: [1-9]\d* key\(s\) of a partner seen", logs["keyring-a"] + logs["keyring-b"])
    assert re.search(r"ATTACK lock recv: saw [1-9]\d* lock\(s\)", logs["lockrecv"]), logs["lockrecv"][-1500:]
    assert "ATTACK notify: inotify_init1 ok" in logs["notify"]


@needs_cage
def test_every_bot_has_a_uid_of_its_own(apart: Played) -> None:
    """An uncaged bot (its own uid) reads, traces, signals and writes nothing of the others,
    and its per-uid kernel limits are its own: both neighbours get every inotify instance."""
    out, logs, _ = apart
    limit = int(Path("/proc/sys/fs/inotify/max_user_instances").read_text())
    for name in ("neighbour-a", "neighbour-b"):
        found = re.search(
            r"ATTACK neighbour: of (\d+) other bots' process\(es\) read (\d+) environment\(s\), "
            r"attached to (\d+), could signal (\d+); wrote into (\d+) of (\d+) private",
            logs[name],
        )
        assert found, logs[name][-1500:]
        marked, environ, attached, signalled, written, folders = map(int, found.groups())
        assert marked > 5 and folders >= 6  # it saw its rivals and their private folders
        assert (environ, attached, signalled, written) == (0, 0, 0, 0), found.group(0)
        took = re.search(r"ATTACK neighbour: took (\d+) inotify instance", logs[name])
        assert took and int(took.group(1)) >= limit - 2, logs[name][-500:]  # (python's own may hold one)
    victims_untouched(out, logs)
    assert not leftovers()


@needs_cage
def test_a_bot_has_its_own_dev_shm_counted_in_its_memory(apart: Played) -> None:
    log = apart[1]["shm"]
    assert "ATTACK shm: multiprocessing.Lock works" in log, log[-1500:]
    reached = [int(n) for n in re.findall(r"ATTACK shm (?:at|stopped after) (\d+)", log)]
    assert reached and max(reached) < 96 and "WROTE" not in log, log[-1500:]


@needs_cage
def test_weaker_settings_are_marked_in_the_standings(apart: Played) -> None:
    out, _logs, _ = apart
    config = load_config(out.parent / "alone.toml")
    announce(config, 1)
    publish_final(config)  # what `referee run` publishes at its end
    rows = {r["name"]: r["cage_marks"] for r in json.loads((out / "standings.json").read_text())["standings"]}
    assert rows["neighbour-a"] == ["sandbox = none"] and rows["neighbour-b"] == ["sandbox = none"]
    assert rows["greedy"] == [] and rows["shm"] == ["disk_mb 512 > 256"]  # its lower memory_mb is no weaker
    marks = {"neighbour-a": ["sandbox = none"], "neighbour-b": ["sandbox = none"], "shm": ["disk_mb 512 > 256"]}
    assert json.loads((out / "tournament.json").read_text())["settings"]["cage_marks"] == marks
    assert r"neighbour-a \[weaker cage: sandbox = none\]" in (out / "README.md").read_text()  # Markdown-escaped
    assert "weaker cage: disk_mb 512 &gt; 256" in (out / "index.html").read_text()
    assert ",sandbox = none\n" in (out / "standings.csv").read_text()
    assert referee("leaderboard", str(out)).returncode == 0  # rebuilt from tournament.json alone
    again = json.loads((out / "standings.json").read_text())["standings"]
    assert {r["name"]: r["cage_marks"] for r in again} == rows


def test_without_the_cage_one_user_reads_everything(tmp_path: Path) -> None:
    _out, logs, _ = play(tmp_path, "neighbours", "none")
    found = re.search(r"read (\d+) environment\(s\), attached to (\d+), could signal (\d+)", logs["neighbour-a"])
    assert found and all(int(n) > 0 for n in found.groups()), logs["neighbour-a"][-1500:]


LINK_BOT = """import sys
sys.path.insert(0, {root!r})
from sample_bots._server import serve
data = open(sys.argv[1] + "/hello.txt").read() if len(sys.argv) > 2 else ""
print("READ", repr(data), flush=True)
serve(lambda m: {{"action": m["legal"][0]}}, int(sys.argv[-1]))
"""


def link_config(folder: Path, target: str) -> Path:
    """A tournament whose bot ``linked`` names ``model``, a link in its folder to ``target``."""
    bot = folder / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text(LINK_BOT.format(root=str(ROOT)))
    (bot / "model").symlink_to(target)
    (bot / "inside").mkdir()
    (bot / "inside" / "hello.txt").write_text("inside")
    (bot / "stays").symlink_to("inside")
    doc = {
        "tournament": {"name": "links", "game": "nimmt_plus", "seed": 3, "output": str(folder / "out")},
        "limits": {"sandbox": "bwrap", "startup_ms": UNREACHABLE_STARTUP_MS},
        "bot": [
            {"name": "linked", "command": ["python", "bot/bot.py", "bot/model", "--port", "{port}"]},
            {"name": "honest", "command": ["python", "bot/bot.py", "bot/stays", "--port", "{port}"]},
        ],
    }
    path = folder / "links.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


@needs_cage
@pytest.mark.parametrize("where", ["output", "/tmp", "/"])
def test_a_link_out_of_the_bots_folder_is_refused(tmp_path: Path, where: str) -> None:
    target = str(tmp_path / "out") if where == "output" else where
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "matches.jsonl").write_text("")
    config = link_config(tmp_path, target)
    result = referee("check", str(config))
    assert result.returncode != 0
    folder = tmp_path / "bot"
    expected = (
        f"bot 'linked': argument '{folder}/model' is in its folder {folder} but leads out of it, "
        f"to {os.path.realpath(target)}: refused"
    )
    assert expected in (result.stdout + result.stderr), result.stdout + result.stderr
    assert "Traceback" not in (result.stdout + result.stderr)
    assert (
        "READ" not in (tmp_path / "out" / "logs" / "linked.log").read_text(errors="replace")
        if (tmp_path / "out" / "logs" / "linked.log").exists()
        else True
    )
    assert not leftovers()


@needs_cage
def test_a_link_that_stays_in_the_folder_works(tmp_path: Path) -> None:
    config = link_config(tmp_path, "inside")  # model -> inside: both bots stay in their folder
    result = referee("check", str(config))
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("linked", "honest"):
        log = (tmp_path / "out" / "logs" / f"{name}.log").read_text()
        assert "READ 'inside'" in log, log
    assert not leftovers()


@needs_cage
def test_a_caged_bot_restarts_on_its_port_whoever_holds_it_on_the_host(tmp_path: Path) -> None:
    """The restart check looks where the bot listens, its own network: a host process (or a
    ``network = "host"`` bot) on the same port number cannot block a caged bot's restart."""
    spec = BotSpec("caged", (*NIMMT, "greedy", "--port", "{port}"), limits=CageLimits(sandbox="bwrap"))
    bot = ManagedBot(spec, tmp_path / "logs", max_restarts=1, restart_backoff_ms=10)

    async def scenario() -> Revival:
        bot.start()
        await wait_ready(bot, bot.endpoint(), HELLO, UNREACHABLE_STARTUP_MS, 1000, 65536)
        assert bot.proc is not None
        with socket.create_server(("127.0.0.1", bot.port)):  # the same number, on the host's network
            os.killpg(bot.proc.pid, signal.SIGKILL)
            while bot.alive():
                await asyncio.sleep(0.01)
            return await asyncio.wait_for(bot.revive(HELLO, UNREACHABLE_STARTUP_MS, 1000, 65536), 120)

    try:
        assert asyncio.run(scenario()) == (True, True, 1)
    finally:
        bot.stop()
    assert "taken by another process" not in bot.log_path.read_text()
    assert not leftovers()


def test_the_fingerprint_walk_stops_at_its_cap_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    big = tmp_path / "bot"
    for sub in ("a", "b"):
        (big / sub).mkdir(parents=True)
        for i in range(60):
            (big / sub / f"f{i}.txt").write_text(str(i))
    small = tmp_path / "small"
    small.mkdir()
    (small / "bot.py").write_text("print(1)")
    doc = {
        "tournament": {"name": "walk", "game": "nimmt_plus", "output": str(tmp_path / "out")},
        "bot": [
            {"name": "big", "command": ["python", "x.py", "{port}"], "workdir": "bot"},
            {"name": "small", "command": ["python", "x.py", "{port}"], "workdir": "small"},
        ],
    }
    (tmp_path / "walk.toml").write_text(tomli_w.dumps(doc))
    config = load_config(tmp_path / "walk.toml")
    full = versions.bot_versions(config, {})
    monkeypatch.setattr(versions, "MAX_ENTRIES", 100)  # the walk reads 2 + 60 names, then stops in b/
    with caplog.at_level("WARNING", logger="referee"):
        capped = versions.bot_versions(config, {})
        assert versions.bot_versions(config, {}) == capped  # the same folder stops at the same file
    assert capped["big"] != full["big"] and capped["small"] == full["small"]
    said = [r.getMessage() for r in caplog.records if "fingerprint's cap" in r.getMessage()]
    assert said and "bot 'big'" in said[0] and "the first 100 files and folders" in said[0], said
    assert not any("'small'" in m for m in said)


@needs_cage
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
def test_a_jvm_bot_plays_caged_and_locks_its_own_files(tmp_path: Path) -> None:
    """The views and the seccomp filter leave a JVM whole: it starts, plays and takes a
    ``FileLock`` on a file of its own; the JavaScript sample plays beside it."""
    classes = tmp_path / "jvm"
    subprocess.run(["javac", "-d", str(classes), str(ROOT / "tests" / "bots" / "JvmBot.java")], check=True)
    doc = {
        "tournament": {"name": "jvm", "game": "nimmt_plus", "seed": 5, "rounds": 1, "output": str(tmp_path / "out")},
        "limits": {"sandbox": "bwrap", "deadline_ms": UNREACHABLE_DEADLINE_MS, "startup_ms": UNREACHABLE_STARTUP_MS},
        "bot": [
            {
                "name": "jvm",
                "command": ["java", "-Xmx128m", "-cp", str(classes), "JvmBot", "{port}"],
                "workdir": str(classes),
            },
            {"name": "js", "command": ["node", str(ROOT / "sample_bots" / "js" / "nimmt.js"), "--port", "{port}"]},
            {"name": "greedy", "command": [*NIMMT, "greedy", "--port", "{port}"]},
        ],
    }
    (tmp_path / "jvm.toml").write_text(tomli_w.dumps(doc))
    config = load_config(tmp_path / "jvm.toml")
    asyncio.run(run_tournament(config))
    records = [json.loads(line) for line in (config.output / JOURNAL).read_text().splitlines()]
    assert [r for r in records if "id" in r] and not [f for r in records for f in r.get("faults", ())]
    assert "JVM FileLock works" in (config.output / "logs" / "jvm.log").read_text()
    assert not leftovers()


@pytest.mark.parametrize(
    ("limits", "own", "key", "says"),
    [
        ({"bot_user": "nobody"}, {}, "limits.bot_user", "'nobody': user names are retired"),
        ({}, {"bot_user": "root"}, "bot[1] (b).limits.bot_user", "bot 'b' may not run as 'root' in a cage"),
        ({"bot_user": "referee"}, {}, "limits.bot_user", "bot 'a' may not run as 'referee' in a cage"),
        ({"sandbox": "none"}, {"bot_user": "root"}, "bot[1] (b).limits.bot_user", "'root' is refused"),
    ],
)
def test_old_and_root_bot_users_are_refused_with_the_bot_and_key(
    tmp_path: Path, limits: dict[str, str], own: dict[str, str], key: str, says: str
) -> None:
    bots = [{"name": n, "command": ["python", "x.py", "{port}"]} for n in ("a", "b")]
    bots[1]["limits"] = own
    path = tmp_path / "t.toml"
    path.write_text(tomli_w.dumps({"tournament": {"game": "nimmt_plus"}, "limits": limits, "bot": bots}))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: {key}: {says}"), caught.value


def test_the_referee_user_is_allowed_without_a_cage_and_marked(tmp_path: Path) -> None:
    bots = [
        {"name": "a", "command": ["python", "x.py", "{port}"], "limits": {"bot_user": "referee", "sandbox": "none"}}
    ]
    bots.append({"name": "b", "command": ["python", "x.py", "{port}"], "network": "host", "limits": {"cpus": 2}})
    path = tmp_path / "t.toml"
    path.write_text(tomli_w.dumps({"tournament": {"game": "nimmt_plus", "output": str(tmp_path / "out")}, "bot": bots}))
    config = load_config(path)
    assert config.cage_marks() == {"a": ["sandbox = none", "bot_user = referee"], "b": ["network = host", "cpus 2 > 1"]}
    assert config.cage_marks(shared_uid=True)["b"][-1] == "shared uid"
    result = referee("check", str(path))
    assert "warning: bot 'b' runs with a weaker cage than the tournament's [limits]: network = host, cpus 2 > 1" in (
        result.stderr
    )


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="uids of their own need a referee running as root")


@needs_root
@pytest.mark.serial  # a bot of another run starting under both its uids would push `again` past them: rarer here
def test_a_uid_is_never_handed_to_two_bots_of_two_runs(tmp_path: Path) -> None:
    """The lock file of a uid is held across processes: another referee run (here a second
    process) claims the next free uid, and the first is free again once released. The locks
    are in a folder of the test's own, so no other run's claim comes between."""
    locks = tmp_path / "locks"
    held = uids.claim(locks)
    try:
        assert uids.FIRST_UID <= held.uid < uids.FIRST_UID + uids.SLOTS
        other = (
            f"from pathlib import Path; from referee.bots.cage import uids; print(uids.claim(Path({str(locks)!r})).uid)"
        )
        second = int(subprocess.run([sys.executable, "-c", other], capture_output=True, text=True, check=True).stdout)
        assert second != held.uid
    finally:
        held.release()
    again = uids.claim(locks)
    again.release()
    assert again.uid <= max(held.uid, second)  # released uids are handed out again, the lowest first


@needs_root
def test_a_lock_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    os.chown(folder, 12345, 12345)  # somebody else could hold or fake every lock in it
    with pytest.raises(PermissionError, match="must be root's and mode 0700"):
        uids.claim(folder)
