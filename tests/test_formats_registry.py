"""The formats are one class each (referee/schedule/registry.py) and tournament.json's
settings one declaration (referee/schedule/settings.py): the config's names are the
registry's, every registered format checks its config, writes only declared settings and
describes itself on the page and in README.md (a ladder's real run included), the
checker of tournament.json follows the declaration, and no module outside schedule/
compares a format's name."""

from __future__ import annotations

import ast
import html
import json
from pathlib import Path
from typing import Any

import pytest

from referee.config import model
from referee.config.model import TournamentConfig
from referee.config.parse import parse_config
from referee.errors import ConfigError, LeaderboardError
from referee.report.page import render_page, settings_lines
from referee.report.publish import build_leaderboard, render_markdown
from referee.schedule import registry
from referee.schedule.formats import check, match_count, schedule
from referee.schedule.registry import FORMATS, Format, check_format, describe
from referee.schedule.settings import KINDS, SETTINGS, Setting, line_keys, published
from referee.store import tournament_file
from referee.store.tournament_file import check_tournament, tournament_document
from tests.support.cli import run_here
from tests.support.steady import Steady

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
# what each registered format's description starts with: a format added without its words here fails
WORDS = {
    "round_robin": "round robin, 2 round(s)",
    "random": "random tables, 12 matches",
    "team": "team (duplicate): 12 deals",
    "gauntlet": "gauntlet of b0 against the field, 2 round(s)",
    "ladder": "ladder, tables chosen from the results",
}


def config_of(fmt: type[Format], size: dict[str, int] | None = None, **extra: Any) -> TournamentConfig:
    """A small checked config of ``fmt`` (of ``size``: its first sizing key), for a game it plays."""
    game, players = ("the_game", 2) if fmt.games else ("nimmt_plus", 3)
    size = size or ({"rounds": 2} if fmt.sizes[0] == "rounds" else {"matches": 12})
    chal = {"challengers": ["b0"]} if fmt.needs_challengers else {}
    t = {"game": game, "seed": 5, "players": players, "format": fmt.name, **size, **chal, **extra}
    bots = [{"name": f"b{i}", "url": f"http://127.0.0.1:9/b{i}"} for i in range(5)]
    return check(parse_config({"tournament": t, "bot": bots}, Path(f"{fmt.name}.toml"), {}))


def test_the_config_names_exactly_the_registered_formats() -> None:
    assert tuple(FORMATS) == model.FORMATS
    assert all(name == cls.name for name, cls in FORMATS.items())
    assert set(WORDS) == set(FORMATS)


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_renders_its_description_on_the_page_and_in_the_readme(name: str) -> None:
    cfg = config_of(FORMATS[name])
    doc = tournament_document(published(cfg), match_count(cfg))
    assert check_tournament(doc) == doc
    text = describe(doc["settings"])
    assert text.startswith(WORDS[name]), text
    board = build_leaderboard(doc, [])
    assert dict(settings_lines(board.game, board.document))["Format"].startswith(text + "; ")
    assert html.escape(text) in render_page(board.game, board.document) and text in render_markdown(board)


def test_no_two_formats_describe_themselves_alike() -> None:
    texts = {describe(published(config_of(cls))) for cls in FORMATS.values()}
    assert len(texts) == len(FORMATS)


def test_a_ladder_s_description_gives_its_epochs_budget_and_season() -> None:
    settings = {**published(config_of(FORMATS["ladder"])), "closed": True}
    settings["ladder"] = {"epoch_tables": 64, "lineups": [{"from": 0, "bots": ["b0", "b1", "b2"]}], "dropped": []}
    settings["matches"] = 200
    assert describe(settings) == (
        "ladder, tables chosen from the results: 4 epoch(s) of 64 tables, a budget of 200 matches, "
        "3 players per match; the season is closed"
    )


@pytest.mark.parallel
def test_a_ladder_season_s_page_and_readme_say_ladder_with_its_epochs_and_budget(
    tmp_path: Path, steady_bot: Steady
) -> None:
    rows = ["[tournament]", 'name = "season"', 'game = "nimmt_plus"', "seed = 3", "players = 3"]
    rows += ['format = "ladder"', "matches = 9", "[game]", 'variant = "simple"', "[limits]", "deadline_ms = 30000"]
    for n in ("a", "b", "c", "d"):
        rows += ["[[bot]]", f'name = "{n}"', f'url = "{steady_bot.url}{n}"']
    cfg = tmp_path / "season.toml"
    cfg.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out"
    run_here(cfg, out)
    settings = json.loads((out / "tournament.json").read_text())["settings"]
    epoch = settings["ladder"]["epoch_tables"]
    words = f"ladder, tables chosen from the results: 1 epoch(s) of {epoch} tables, a budget of 9 matches"
    for page in ("index.html", "README.md"):
        text = (out / page).read_text()
        assert words in text and "random tables" not in text, page


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_writes_only_declared_settings_with_a_check_for_each(name: str) -> None:
    settings = published(config_of(FORMATS[name]))
    assert list(settings) == [k for k in SETTINGS if k in settings]  # the declaration's order
    assert settings["format"] == name
    assert set(tournament_file._KIND_CHECKS) == set(KINDS)
    assert all(s.kind in KINDS for s in SETTINGS.values())


def test_a_setting_a_format_writes_without_a_declaration_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = FORMATS["random"]
    cfg = config_of(cls)
    own = cls.settings
    monkeypatch.setattr(cls, "settings", classmethod(lambda c, config: {**own(config), "bogus": 1}))
    with pytest.raises(ValueError, match="bogus"):
        published(cfg)


def test_the_checker_and_the_page_follow_the_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config_of(FORMATS["gauntlet"])
    doc = tournament_document({**published(cfg), "newflag": "yes"}, match_count(cfg))
    board = build_leaderboard(doc, [])  # undeclared: not checked, listed among the other settings
    other = dict(settings_lines(board.game, board.document))["Other settings"]
    assert 'newflag = "yes"' in other and "challengers = " in other and "matches = " not in other
    assert "challengers" not in line_keys() and "matches" in line_keys()
    monkeypatch.setitem(SETTINGS, "newflag", Setting("bool"))
    with pytest.raises(LeaderboardError, match="field newflag: not true/false"):
        check_tournament(doc)
    bad = tournament_document({**published(cfg), "format": "swiss"}, 1)
    with pytest.raises(LeaderboardError, match="must be one of round_robin, random, team, gauntlet, ladder"):
        check_tournament(bad)


@pytest.mark.parametrize(
    ("name", "extra", "message"),
    [
        ("team", {"duplicate": True}, "tournament.duplicate: team already plays every deal"),
        ("ladder", {"duplicate": True}, "tournament.duplicate: a ladder chooses each table"),
        ("ladder", {"grow": True}, "tournament.grow: a ladder grows by itself"),
        ("random", {"grow": True}, "tournament.grow: is for round_robin, gauntlet (with rounds) and team"),
        ("round_robin", {"closed": True}, "tournament.closed: is for format = 'ladder'"),
        ("random", {"challengers_meet": True}, "tournament.challengers_meet: is for format = 'gauntlet'"),
    ],
)
def test_each_format_checks_its_config(name: str, extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        config_of(FORMATS[name], **extra)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_format_for_other_games_is_refused_by_its_declaration() -> None:
    bots = [{"name": f"b{i}", "url": f"http://127.0.0.1:9/b{i}"} for i in range(3)]
    for fmt, game in (("team", "nimmt_plus"), ("ladder", "the_game"), ("gauntlet", "the_game")):
        chal = {"challengers": ["b0"]} if fmt == "gauntlet" else {}
        doc = {"tournament": {"game": game, "format": fmt, **chal}, "bot": bots}
        cfg = parse_config(doc, Path("x.toml"), {})  # the config alone accepts it: the format refuses it
        with pytest.raises(ConfigError, match="tournament.format: " + fmt):
            check_format(cfg)


def test_a_gauntlet_is_sized_by_the_key_its_file_gives() -> None:
    gauntlet = FORMATS["gauntlet"]
    assert gauntlet.size_key(config_of(gauntlet)) == "rounds"
    assert gauntlet.size_key(config_of(gauntlet, {"rounds": 2, "matches": 7})) == "rounds"  # both: rounds
    only = config_of(gauntlet, {"matches": 7})
    assert gauntlet.size_key(only) == "matches" and len(schedule(only)) == 7
    assert published(only)["rounds"] is None and published(only)["matches"] == 7
    with pytest.raises(ConfigError, match=r"tournament.grow: is for round_robin, gauntlet \(with rounds\)"):
        config_of(gauntlet, {"matches": 7}, grow=True)


def test_no_module_outside_schedule_compares_a_format_s_name() -> None:
    found = []
    for path in sorted((ROOT / "referee").rglob("*.py")):
        if path.parent.name == "schedule":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                consts = [c for s in sides for c in ([s] if isinstance(s, ast.Constant) else getattr(s, "elts", []))]
                if any(isinstance(c, ast.Constant) and c.value in FORMATS for c in consts):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
    assert registry.format_named("ladder").adaptive and not any(
        cls.adaptive for name, cls in FORMATS.items() if name != "ladder"
    )
