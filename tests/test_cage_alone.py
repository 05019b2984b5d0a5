"""The cage, second round (issue 25): every managed bot alone on its own network, with
limits that add up. Real tournaments, real bubblewrap, real cgroups (as root).

One 6 nimmt! Plus table holds three sample bots and the attackers of
``tests/hostile/attacker.py``; each attacker's first decision waits for its attack, so
the match outlasts it. The test's own listeners on 127.0.0.1 stand for the referee's
ports and a Dask scheduler's: they count every connection made to them. Each attack is
judged from the attacker's side (its report in its log) and from the victims' (no
connection, no fault, no restart), and no process, mount or cgroup outlives the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.config.parse import load_config
from referee.schedule.settings import published
from tests.support.cage_attack import (
    Listener,
    leftovers,
    needs_cage,
    play,
    victims_untouched,
)

# Limits are the kernel's, deadlines and start-up windows out of reach; without the cage the
# attackers reach only the test's own ports, and leftovers are looked for in this process's runs.
pytestmark = pytest.mark.parallel


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], list[Listener]]]:
    yield play(tmp_path_factory.mktemp("network"), "network", "bwrap")


@pytest.fixture(scope="module")
def limits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], list[Listener]]]:
    yield play(tmp_path_factory.mktemp("limits"), "limits", "bwrap")


@needs_cage
def test_a_bot_reaches_nothing_and_nothing_reaches_it(network: tuple[Path, dict[str, str], list[Listener]]) -> None:
    out, logs, listeners = network
    log = logs["reach"]
    assert "ATTACK reach sees 0 listening port(s) besides its own" in log, log[-2000:]
    assert "ATTACK reach done: 0 port(s) reached" in log and "REACHED" not in log
    assert [li.accepted for li in listeners] == [0, 0]  # the referee's and the scheduler's side
    victims_untouched(out, logs)
    assert not leftovers()


@needs_cage
def test_two_bots_cannot_collude(network: tuple[Path, dict[str, str], list[Listener]]) -> None:
    _out, logs, _listeners = network
    for name in ("collude-a", "collude-b"):
        assert "ATTACK collude abstract: bound, waiting" in logs[name], logs[name][-2000:]
        assert "ATTACK collude tcp: bound, waiting" in logs[name]
        assert "COLLUDED" not in logs[name]


def test_without_the_cage_the_same_bots_reach_the_host_and_each_other(tmp_path: Path) -> None:
    """The attacks above are real: without bubblewrap they succeed."""
    _out, logs, listeners = play(tmp_path, "network", "none")
    assert "REACHED" in logs["reach"] and all(li.accepted > 0 for li in listeners)
    assert "COLLUDED over abstract" in logs["collude-a"] + logs["collude-b"]
    assert "COLLUDED over tcp" in logs["collude-a"] + logs["collude-b"]


def reported(log: str, what: str) -> list[int]:
    """The amounts an attacker reported reaching (``ATTACK what at N``, ``stopped after N``)."""
    return [int(n) for n in re.findall(rf"ATTACK {what} (?:at|stopped after) (\d+)", log)]


@needs_cage
def test_disk_mb_and_its_file_bound_stop_a_bot_alone(limits: tuple[Path, dict[str, str], list[Listener]]) -> None:
    out, logs, _listeners = limits
    assert re.search(r"ATTACK disk stopped after [0-4] files of 8 MiB: No space left on device", logs["disk"])
    stopped = re.search(r"ATTACK files stopped after (\d+) files: No space left on device", logs["files"])
    assert stopped and int(stopped.group(1)) <= 16 * 64, logs["files"][-500:]
    assert "WROTE" not in logs["disk"] + logs["files"]
    victims_untouched(out, logs)
    settings = published(load_config(out.parent / "alone.toml"))  # what tournament.json shows
    assert settings["cage_bots"]["files"] == {"disk_mb": 16} and settings["cage"]["disk_mb"] == 256


@needs_cage
def test_shared_memory_and_tmpfs_count_in_memory_mb(limits: tuple[Path, dict[str, str], list[Listener]]) -> None:
    _out, logs, _listeners = limits
    for name in ("shared", "tmpfs"):
        assert reported(logs[name], name), logs[name][-1000:]
        assert max(reported(logs[name], name)) < 96, logs[name][-1000:]
        assert "WROTE" not in logs[name]


@needs_cage
def test_no_user_namespace_in_the_cage(limits: tuple[Path, dict[str, str], list[Listener]]) -> None:
    log = limits[1]["userns"]
    found = re.search(r"ATTACK userns: unshare -Ur exited (\d+)", log)
    assert found and found.group(1) != "0", log[-1000:]


@needs_cage
def test_a_spinning_bot_gets_its_cpu_quota(limits: tuple[Path, dict[str, str], list[Listener]]) -> None:
    log = limits[1]["spin"]
    used = re.search(r"ATTACK spin used ([\d.]+) cores", log)
    assert used and float(used.group(1)) <= 0.25 * 1.5, log[-1000:]  # three spinners, a quarter of a core
    assert not leftovers()
