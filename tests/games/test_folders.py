"""A game is one folder (issue 32 part 2): ``referee/games/<id>/`` holds its rules, schema,
viewer renderer, replay glance and check-bot opponent, reached through the hooks of
``Game``; the rest of the referee names no game; and a new game, a folder registered from
outside the source tree, runs, publishes, replays and prints its schema with nothing else
changed."""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.audit import checkbot
from referee.bots.client import schema as wire
from referee.cli import main
from referee.games import FOLDERS, GAMES
from referee.games.base import Game, GameInfo
from tests.support.browser import CHROMIUM, LAUNCH_ARGS, require_chromium
from tests.support.cli import ROOT
from tests.support.steady import Steady
from tests.support.tiny import TINY_SCHEMA, TINY_VIEWER, play_tiny, tiny_game
from tests.support.tournament import UNREACHABLE_DEADLINE_MS

pytestmark = pytest.mark.parallel

GAMES_DIR = ROOT / "referee" / "games"


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_every_game_is_one_folder_with_every_hook(gid: str) -> None:
    game = GAMES[gid]
    folder = GAMES_DIR / gid
    assert gid in FOLDERS and type(game).__module__ == f"referee.games.{gid}.rules"
    names = sorted(p.name for p in folder.iterdir() if p.name != "__pycache__")
    # replay.js, the viewer's replay engine (issue 35), arrives game by game
    assert [name for name in names if name != "replay.js"] == [
        "__init__.py",
        "rules.py",
        "schema.json",
        "viewer.js",
    ]
    assert game.schema_text() == (folder / "schema.json").read_text(encoding="utf-8")
    assert json.loads(game.schema_text())["$id"] == wire.BASE + f"games/{gid}.json"
    js = game.renderer_js()
    assert js == (folder / "viewer.js").read_text(encoding="utf-8")
    assert "G.board=" in js and "</script" not in js.lower(), "the page inlines the renderer in a <script>"
    state = game.setup(game.info.min_seats, 3, {})
    for seat in game.to_act(state):
        line = game.glance(game.view(state, seat))
        assert line and "\n" not in line
    command = game.sample_opponent()
    assert command is not None and "{port}" in command
    module = command[command.index("-m") + 1]
    assert importlib.util.find_spec(module) is not None, f"{gid}'s sample opponent {module} does not exist"


def _named(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every identifier and every string that is not a docstring in ``tree``, with its line."""
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias)):
            yield node.lineno, node.name


def test_the_referee_outside_games_names_no_game() -> None:
    """No code of referee/ outside referee/games/ (report, audit, cli and the rest) names a
    game: no string but docstrings, no identifier (examples in help texts are docstrings)."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(GAMES))) + r")\b")
    found = []
    for path in sorted((ROOT / "referee").rglob("*.py")):
        if GAMES_DIR in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(ROOT)}:{n}: {text[:80]!r}" for n, text in _named(tree) if pattern.search(text)]
    assert found == []


def test_the_check_finds_a_game_named_outside_games() -> None:
    tree = ast.parse('"""nimmt_plus in a docstring is fine."""\nif game == "nimmt_plus":\n    pass\n')
    assert [text for _, text in _named(tree)] == ["game", "nimmt_plus"]


def test_a_game_lacking_a_hook_cannot_be_made() -> None:
    dieci = type(GAMES["dieci"])
    assert {"glance", "sample_opponent", "setup", "redeal_hidden"} <= Game.__abstractmethods__
    for hook in ("glance", "sample_opponent"):
        body = {name: getattr(dieci, name) for name in Game.__abstractmethods__ - {hook}}
        partial = type("Partial", (Game,), {**body, "info": dieci.info})
        with pytest.raises(TypeError, match=hook):
            partial()
    assert "NotImplementedError" not in (GAMES_DIR / "base.py").read_text(encoding="utf-8")


# A new game, from outside the source tree (tests/support/tiny.py) -------------------------


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Game]:
    """A game folder written to ``tmp_path/tiny_games/tiny`` and registered (the registry line)."""
    yield from tiny_game(tmp_path, monkeypatch, "tiny_games")


def test_a_new_game_is_one_folder_and_one_registry_line(tiny: Game, tmp_path: Path) -> None:
    """The tiny game plays a real tournament against a real bot, and its folder's hooks show
    in the published viewer (opened in Chromium), ``referee replay`` and ``referee schema``."""
    assert isinstance(tiny.info, GameInfo)
    out = play_tiny(tmp_path, "tiny-run", 1)
    first = json.loads((out / "matches.jsonl").read_text().splitlines()[0])
    assert first["scores"] == [2.0, 2.0]  # the bot plays the first legal action, 1, every time
    page = (out / "replays" / "index.html").read_text()
    assert TINY_VIEWER in page
    runner = CliRunner()
    shown = runner.invoke(main.main, ["replay", str(out), first["id"]])
    assert shown.exit_code == 0, shown.output
    assert "saw: tiny picks [1,1]" in shown.output
    printed = runner.invoke(main.main, ["schema", "tiny"])
    assert printed.exit_code == 0 and json.loads(printed.output) == TINY_SCHEMA
    assert "games/tiny.json" in wire.schema_names()
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            view = browser.new_page()
            view.goto(f"{(out / 'replays' / 'index.html').as_uri()}#{first['id']}/3")
            view.wait_for_function("document.getElementById('board').dataset.step === '3'")
            assert view.inner_text("#tiny-board") == "picks 1 1 1"
        finally:
            browser.close()


def test_check_bot_without_a_sample_opponent_lets_the_bot_hold_every_seat(tiny: Game) -> None:
    """A competitive game without a sample opponent is a declared choice: check-bot plays
    the bot under test in every seat, and says so."""
    bot = Steady()
    try:
        settings = checkbot.CheckSettings(
            game="tiny", option_sets=({},), url=bot.url, matches=2, deadline_ms=UNREACHABLE_DEADLINE_MS
        )
        reports = asyncio.run(checkbot.check_bot(settings))
    finally:
        bot.stop()
    (report,) = reports
    assert "the bot holds every seat (no sample opponent)" in report.lines()[0]
    assert report.clean, "\n".join(report.lines())
