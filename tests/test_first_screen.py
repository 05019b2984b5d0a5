"""The leader on the first screen (issue 35, point 3): a 200-bot ladder season with versions,
a long lineup history, dropped tables, five excluded bots and three removed ones
(``tests/support/season_site.py``) is published with ``referee leaderboard`` and opened
from disk in the system Chromium at a laptop's 1366x768 and a phone's 390x844: the prize
places and the first standings row lie on the first screen, every setting is one line,
the exclusions read as a short list with clean reasons, the lineups and the dropped tables
wait behind a fold, the leader's weaker cage is marked beside its name, and nothing
scrolls sideways on the phone; any match of a bot, the oldest too, opens from the bot's
page in the viewer at the bot's first decision with its exact seed (from the replay
packs), and its fault link at the faulted decision. Takes about 15 s."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.report.names import bot_files
from referee.report.page import lineup_changes
from referee.report.viewer import RECENT
from referee.store import journal as jn
from referee.store.matches import load_match
from tests.support.browser import launched, require_chromium, wait_step
from tests.support.cli import here
from tests.support.packs import write_packs
from tests.support.season_site import EXCLUDED, FAULTED, LEADER, MARKED, REMOVED, TABLES, build

pytestmark = pytest.mark.parallel

SCREENS = [(1366, 768), (390, 844)]


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published season's folder."""
    require_chromium()
    out = tmp_path_factory.mktemp("first-screen") / "out"
    build(out)
    write_packs(out)  # as the run would have written them, match by match
    done = here("leaderboard", str(out), "-q")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def browser(season: Path) -> Iterator[Any]:
    with launched() as b:
        yield b


def opened(browser: Any, season: Path, width: int, height: int) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto((season / "index.html").as_uri(), wait_until="load")
    page.errors = errors
    return page


def box(page: Any, selector: str) -> dict[str, float]:
    loc = page.locator(selector).first
    assert loc.is_visible(), selector
    found = loc.bounding_box()
    assert found is not None, selector
    return found  # type: ignore[no-any-return]


def test_the_season_is_the_one_the_issue_describes(season: Path) -> None:
    doc = json.loads((season / "standings.json").read_text())
    settings = doc["settings"]
    assert len(doc["standings"]) == 200 and doc["matches"] < doc["scheduled"]
    assert len(settings["ladder"]["lineups"]) == 12 and len(settings["ladder"]["dropped"]) == TABLES // 75
    assert [x["name"] for x in doc["excluded"]] == list(EXCLUDED)
    assert not set(REMOVED) & {r["name"] for r in doc["standings"]}
    assert all((season / "bots" / f"{n}.html").exists() for n in REMOVED)  # removed, their matches still count
    assert sum(len(r["versions"]) > 1 for r in doc["standings"]) > 50
    lead = doc["standings"][0]
    assert lead["name"] == LEADER and lead["cage_marks"] == MARKED[LEADER] and len(doc["places"]) == 3


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_the_prize_places_and_the_leader_are_on_the_first_screen(
    season: Path, browser: Any, width: int, height: int
) -> None:
    page = opened(browser, season, width, height)
    places = box(page, "#places")
    first = box(page, "#standings tbody tr")
    assert places["y"] >= 0 and places["y"] + places["height"] <= first["y"], (places, first)
    assert first["y"] + first["height"] <= height, first  # the whole first row, without scrolling
    assert page.evaluate("() => window.scrollY") == 0
    assert page.inner_text("#places li >> nth=0").startswith("1st: ")
    assert page.get_attribute("#standings tbody tr >> nth=0", "data-bot") == LEADER
    # the leader's weaker cage, marked beside its name on the first screen
    mark = box(page, '#standings tbody tr >> nth=0 >> td[data-col="bot"] .cage')
    assert page.inner_text('#standings tbody tr >> nth=0 >> td[data-col="bot"] .cage') == (
        "weaker cage: sandbox = none, network = host"
    )
    assert mark["y"] + mark["height"] <= height
    width_now = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width_now[0] <= width_now[1] == width, width_now  # no sideways scroll, the phone's included
    assert page.errors == []
    page.close()


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_every_setting_is_one_line_and_the_long_ones_open(season: Path, browser: Any, width: int, height: int) -> None:
    page = opened(browser, season, width, height)
    labels = page.eval_on_selector_all(".settings dt", "ds => ds.map(d => d.textContent)")
    assert labels == ["Game", "Format", "Matches played", "Limits", "Bots", "Excluded", "Ladder", "Other settings"]
    line = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.settings dd')).lineHeight)")
    heights = page.eval_on_selector_all(".settings dd", "ds => ds.map(d => d.getBoundingClientRect().height)")
    assert all(h <= line + 1 for h in heights), (line, heights)
    assert page.inner_text("#excluded summary").startswith(
        "5 bots not ready: late-bot (connection refused); slow-bot (timed out after 15000 ms); broken-bot (HTTP 500)"
    )
    assert "did not answer hello" not in page.inner_text("header")
    # the lineups (every name@version of every segment) and the dropped tables wait behind a fold
    assert not page.locator(".lineups").is_visible() and not page.locator("#dropped").is_visible()
    # the Format line is clipped at both sizes; a click shows it whole
    fmt = page.locator(".settings dd >> nth=1")
    assert fmt.locator("summary").evaluate("s => s.scrollWidth > s.clientWidth")
    closed = fmt.bounding_box()["height"]
    fmt.locator("summary").click()
    assert fmt.bounding_box()["height"] > closed
    page.click("#ladder summary")
    assert page.locator(".lineups > li").count() == 12 and page.locator("#dropped").is_visible()
    history = page.eval_on_selector_all(".lineups > li", "ls => ls.map(l => l.innerText)")
    assert history[0].startswith("from epoch 0: joined (205): ")  # 200 bots, 3 removed since, 2 excluded since
    assert "left (2): late-bot, slow-bot" in history[3] and "left (3): bot900, bot901, bot902" in history[8]
    page.click("#excluded summary")
    shown = page.eval_on_selector_all(
        "#excluded li", "ls => ls.map(l => [l.dataset.bot, l.innerText.split(': ').slice(1).join(': ')])"
    )
    assert shown == [[n, EXCLUDED[n]] for n in EXCLUDED]
    width_now = page.evaluate("() => document.documentElement.scrollWidth")
    assert width_now <= width  # opened, still nothing sideways
    page.close()


def test_a_lineup_history_reads_as_its_changes() -> None:
    segments = [
        {"from": 0, "bots": ["a@000000000001", "b", "c@000000000003"]},
        {"from": 4, "bots": ["a@000000000002", "b", "d"]},
        {"from": 9, "bots": ["a@000000000002", "b", "d"]},
    ]
    assert lineup_changes(segments) == [
        (0, ["a@000000000001", "b", "c@000000000003"], [], []),
        (4, ["d"], ["c"], ["a@000000000002"]),
        (9, [], [], []),
    ]


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_any_match_opens_from_its_bots_page_at_the_bots_first_decision_and_a_fault_at_its_decision(
    season: Path, browser: Any, width: int, height: int
) -> None:
    lines = sorted(jn.read_journal(season / "matches.jsonl"), key=lambda r: r["index"])
    bot = "bot007"
    first = next(r for r in lines if bot in r["bots"])  # its oldest match: far from the recent ones
    assert first["index"] < lines[-1]["index"] - RECENT
    seat = first["bots"].index(bot)
    opening = load_match(season, first["id"]).transcript.seats.index(seat) + 1
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto((season / "bots" / f"{bot_files([bot])[bot]}.html").as_uri(), wait_until="load")
    page.click(f'#matches a:text-is("{first["id"]}")')
    wait_step(page, opening)
    assert page.inner_text("#seed") == str(first["seed"])
    assert f"seat {seat} {bot}" in page.inner_text("#decision")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.go_back()  # the fault link opens the faulted decision
    faulted = next(r for r in lines if r["faults"])
    fault = faulted["faults"][0]
    assert fault["bot"] == bot == FAULTED[0] and faulted["index"] == FAULTED[1]
    moves = load_match(season, faulted["id"]).transcript.moves
    at = next(i for i, mv in enumerate(moves) if mv.seat == fault["seat"] and mv.decision == fault["decision"]) + 1
    page.wait_for_selector("#fault-list")
    page.click(f'#fault-list tr[data-match="{faulted["id"]}"] a:text-is("{fault["decision"]}")')
    wait_step(page, at)
    assert page.inner_text("#seed") == str(faulted["seed"])
    assert f"its decision {fault['decision']} " in page.inner_text("#decision")
    assert "fault: timeout" in page.inner_text("#decision")
    page.close()
