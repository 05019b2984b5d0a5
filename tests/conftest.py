"""What the whole suite shares: fixtures and the split into two passes.

Helpers live in ``tests/support/`` (imported as ``tests.support.*``; no test module imports
another). ``make test`` runs the suite in two passes: the tests of the modules in
``PARALLEL`` on every core (``-m "not serial" -n auto``), then every other test alone
(``-m serial``). The parallel ones play no match against a bot's deadline, or only under
a deadline no load reaches, so the load of a second process cannot change what they
see; a new test module is serial until it is listed here. A test of a serial module that
qualifies may say so itself with ``@pytest.mark.parallel``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.outputs import run_small
from tests.support.steady import Steady

PARALLEL = {
    "tests.games.test_dieci",
    "tests.games.test_docs",
    "tests.games.test_folders",
    "tests.games.test_drahtseilakt",
    "tests.games.test_golden",
    "tests.games.test_nimmt_plus",
    "tests.games.test_replay",
    "tests.games.test_shape",
    "tests.games.test_the_game",
    "tests.test_balanced_tables",
    "tests.test_bot_files",
    "tests.test_bot_logs",
    "tests.test_calibration",
    "tests.test_cli",
    "tests.test_cluster_tls",
    "tests.test_columns",
    "tests.test_config",
    "tests.test_config_schema",
    "tests.test_conformance",
    "tests.test_distributed",
    "tests.test_dq",
    "tests.test_duplicate",
    "tests.test_e2e",
    "tests.test_eval_scripts",
    "tests.test_fast_bot",
    "tests.test_files",
    "tests.test_frames",
    "tests.test_gauntlet",
    "tests.test_grow",
    "tests.test_journal",
    "tests.test_journal_alone",
    "tests.test_js_sample",
    "tests.test_ladder",
    "tests.test_layers",
    "tests.test_layers_publish",
    "tests.test_make_run",
    "tests.test_page",
    "tests.test_pages",
    "tests.test_play_gc",
    "tests.test_progress",
    "tests.test_properties_leaks",
    "tests.test_publish",
    "tests.test_referee_lag",
    "tests.test_resume",
    "tests.test_schedule_standings",
    "tests.test_schema",
    "tests.test_score_bounds",
    "tests.test_settle",
    "tests.test_stop_settled",
    "tests.test_team_e2e",
    "tests.test_tournament_options",
    "tests.test_transcripts",
    "tests.test_verdicts",
    "tests.test_verdicts_reference",
    "tests.test_verify_fast",
    "tests.test_viewer",
    "tests.test_viewer_select",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``serial`` every test outside ``PARALLEL`` not marked ``parallel``."""
    for item in items:
        module = getattr(item, "module", None)
        if getattr(module, "__name__", "") not in PARALLEL and item.get_closest_marker("parallel") is None:
            item.add_marker(pytest.mark.serial)


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
