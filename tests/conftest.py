"""What the whole suite shares: fixtures and the check of where each test runs.

Helpers live in ``tests/support/`` (imported as ``tests.support.*``; no test module imports
another). ``make test`` runs the suite in two passes: every test not marked ``serial`` on
every core, two workers per core, at idle CPU priority (``-m "not serial" -n auto``), and at the
same time the ``serial`` ones one at a time at normal priority (``-m serial``).
Each test module says where it runs in its header, ``pytestmark = pytest.mark.parallel``
(it plays no match against a bot's deadline, or only under a deadline no load reaches, so
the load of a second process cannot change what it sees) or ``pytestmark =
pytest.mark.serial`` (it races a deadline); a module that says neither is refused at
collection. A test of a parallel module that races a deadline says ``@pytest.mark.serial``
itself; a serial module has no parallel tests (mark the module parallel and its racing
tests serial instead).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.outputs import run_small
from tests.support.steady import Steady

PLACES = ("parallel", "serial")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per core. The parallel tests wait a good part of their time
    on other processes (bots starting, runs, Dask, Chromium), so one worker per core left the
    cores idle (this 2-core machine: the parallel pass took 275 s on 2 workers, 245 s on 4,
    248 s on 6); load cannot change what a parallel test sees."""
    return 2 * len(os.sched_getaffinity(0))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test module that does not say where it runs, or a test that contradicts it."""
    problems: dict[str, str] = {}
    for item in items:
        module = item.getparent(pytest.Module)
        if module is None:
            continue
        declared = [m.name for m in module.own_markers if m.name in PLACES]
        if len(declared) != 1:
            problems[module.nodeid] = (
                "declares no place: add `pytestmark = pytest.mark.parallel` (or `serial`) to its header"
                if not declared
                else "declares both parallel and serial"
            )
        elif declared == ["serial"] and item.get_closest_marker("parallel") is not None:
            problems[item.nodeid] = "is marked parallel in a serial module (mark the module parallel, this test not)"
    if problems:
        raise pytest.UsageError("\n".join(f"{where} {why}" for where, why in sorted(problems.items())))


@pytest.fixture(scope="session")
def nimmt_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output of a real run of the 6 nimmt! sample tournament cut to 2 tables: read
    it, or change a ``tests.support.outputs.copy`` of it."""
    return run_small(tmp_path_factory.mktemp("nimmt_run"), "nimmt_plus")


@pytest.fixture
def steady() -> Iterator[Callable[..., Steady]]:
    """Start ``Steady`` bots (``steady(*args)``); each is stopped when the test ends."""
    started: list[Steady] = []

    def make(*args: str) -> Steady:
        bot = Steady(*args)
        started.append(bot)
        return bot

    yield make
    for bot in started:
        bot.stop()


@pytest.fixture(scope="module")
def steady_bot() -> Iterator[Steady]:
    """One ``Steady`` bot for the whole module (it answers at any URL path)."""
    b = Steady()
    try:
        yield b
    finally:
        b.stop()
