"""The leaderboard page and the bot pages of a 200-bot tournament in the system Chromium.

The folder is synthesized (``benchmarks.pages.synth``: 2,000 matches with the numbers of
real sample-bot matches, one bot at every tenth table, one bot that times out once a
match) and published in-process with small data chunks, so a bot's match list spans
several data files loaded from ``file://``. Takes about 10 s.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.pages import FAULTY, HERO, synth
from referee.report import bot_pages
from referee.report.page import FAINT, PALETTE, dropped_text, rating_svg, settings_lines
from referee.report.publish import Leaderboard, build_leaderboard, write_leaderboard
from referee.store.tournament_file import iter_journal, load_output_dir
from tests.support.browser import launched
from tests.support.outputs import journal_lines

pytestmark = pytest.mark.parallel

RESAMPLES = 200  # enough for the page; the verdicts' own tests use the default


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Leaderboard]:
    """A published 200-bot folder whose bot pages keep 64 matches a data file, and the
    leaderboard it was written from (read it, or change a copy)."""
    out = tmp_path_factory.mktemp("season") / "out"
    synth(out)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bot_pages, "CHUNK", 64)
        tournament, records = load_output_dir(out)
        board = build_leaderboard(tournament, records, RESAMPLES)
        write_leaderboard(out, board)
    return out, board


@pytest.fixture(scope="module")
def season(published: tuple[Path, Leaderboard]) -> Path:
    """The published folder."""
    return published[0]


@pytest.fixture(scope="module")
def browser(season: Path) -> Iterator[Any]:
    with launched() as b:
        yield b


def open_page(browser: Any, path: Path, width: int = 1366, height: int = 800) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri(), wait_until="load")
    page.errors = errors
    return page


def test_standings_come_first_and_search_keeps_only_the_bots_typed(season: Path, browser: Any) -> None:
    page = open_page(browser, season / "index.html")
    rows = page.locator("#standings tbody tr")
    assert rows.count() == 200
    for i in range(5):  # the top five rows on the first screen of a laptop
        box = rows.nth(i).bounding_box()
        assert box is not None and box["y"] + box["height"] <= 800, (i, box)
    assert page.locator("#standings tbody tr:visible").count() == 50  # paged: the rest behind "Show all"
    assert page.locator("#bot-list li").count() == 200 and not page.locator("#bot-list li").first.is_visible()

    page.fill("#search", FAULTY)
    shown = page.eval_on_selector_all("#standings tbody tr:visible", "rs => rs.map(r => r.dataset.bot)")
    assert shown == [FAULTY]
    assert page.inner_text("#search-count") == "1 of 200 bots"
    assert page.eval_on_selector_all("#score-distribution tbody tr:visible", "rs => rs.map(r => r.dataset.bot)") == [
        FAULTY
    ]
    assert page.get_attribute(f'polyline[data-line="{FAULTY}"]', "class") == "series faint hi"
    page.fill("#search", f"{HERO}, {FAULTY}")
    shown = page.eval_on_selector_all("#standings tbody tr:visible", "rs => rs.map(r => r.dataset.bot)")
    assert sorted(shown) == sorted([HERO, FAULTY])
    page.fill("#search", "")
    assert page.locator("#standings tbody tr:visible").count() == 50
    assert page.errors == []


def test_sorting_a_column_orders_the_rows_by_its_numbers(season: Path, browser: Any) -> None:
    page = open_page(browser, season / "index.html")
    header = page.locator('#standings thead th:has-text("Matches")')
    header.click()
    got = page.eval_on_selector_all("#standings tbody tr", "rs => rs.map(r => +r.dataset.matches)")
    assert got == sorted(got) and got[0] < got[-1]
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    got = page.eval_on_selector_all("#standings tbody tr", "rs => rs.map(r => +r.dataset.matches)")
    assert got == sorted(got, reverse=True)
    assert page.eval_on_selector_all("#standings tbody tr:visible", "rs => rs[0].dataset.bot") == HERO
    page.locator('#standings thead th:has-text("Rank")').first.click()
    ranks = page.eval_on_selector_all("#standings tbody tr", "rs => rs.map(r => +r.dataset.rank)")
    assert ranks == sorted(ranks)


def test_a_bot_page_lists_every_match_it_played_with_replay_links(season: Path, browser: Any) -> None:
    lines = journal_lines(season)
    mine = [d for d in sorted(lines, key=lambda d: d["index"]) if HERO in d["bots"]]
    assert len(mine) > 2 * bot_pages.PER_PAGE  # several pages, several data files
    assert len(list((season / "bots" / "data").glob(f"{HERO}.*.js"))) == -(-len(mine) // 64) - 1
    page = open_page(browser, season / "index.html")
    page.fill("#search", HERO)  # its row is past the first page of the standings
    page.click(f'#standings a:text-is("{HERO}")')
    page.wait_for_selector("#matches tbody tr")
    assert page.url.endswith(f"/bots/{HERO}.html")
    seen: list[dict[str, Any]] = []
    while True:
        shown = page.eval_on_selector_all(
            "#matches tbody tr",
            """rs => rs.map(r => ({id: r.dataset.match, href: r.cells[1].querySelector('a').getAttribute('href'),
                 seat: +r.cells[2].textContent, rank: +r.cells[4].textContent, score: +r.cells[5].textContent}))""",
        )
        seen += shown
        nxt = page.locator('#pager button:has-text("next")')
        if nxt.is_disabled():
            break
        nxt.click()  # the next page may need a data file: wait until its first row is drawn
        page.wait_for_function(
            f"() => document.querySelector('#matches tbody tr').dataset.match !== {shown[0]['id']!r}"
        )
    assert [s["id"] for s in seen] == [d["id"] for d in mine]
    for s, d in zip(seen, mine):
        seat = d["bots"].index(HERO)
        assert s["href"] == f"../replays/index.html#{d['id']}/s{seat}d0"  # at the bot's first decision
        assert (s["seat"], s["rank"], s["score"]) == (seat, d["ranks"][seat], d["scores"][seat])
    assert page.errors == []


def test_a_bot_page_shows_its_row_faults_and_opponents(season: Path, browser: Any) -> None:
    doc = json.loads((season / "standings.json").read_text())
    row = next(r for r in doc["standings"] if r["name"] == FAULTY)
    page = open_page(browser, season / "bots" / f"{FAULTY}.html")
    assert page.inner_text("#bot-name") == FAULTY
    assert page.inner_text('#summary [data-col="rank"] dd').startswith(str(row["rank"]))
    lo, hi = row["mean_rank_ci"]
    assert f"[{lo:.2f}, {hi:.2f}]" in page.inner_text('#summary [data-col="mean-rank"] dd')
    faults = [d for d in journal_lines(season) if FAULTY in d["bots"]]
    links = page.eval_on_selector_all(
        "#fault-list tbody tr td:nth-child(2) a", "as => as.map(a => a.getAttribute('href'))"
    )
    # the seat's own decision (the journal's), which the viewer opens as #MATCH/sSEATdDECISION
    want = [f"../replays/index.html#{d['id']}/s{d['bots'].index(FAULTY)}d3" for d in faults]
    assert sorted(links) == sorted(want)
    assert "no reply within 1000 ms" in page.inner_text("#fault-list tbody tr >> nth=0")
    met = {p["opponent"] for p in doc["head_to_head"] if p["bot"] == FAULTY and p["meetings"]}
    page.click('#opponents button:has-text("Show all")') if page.locator("#opponents button").count() else None
    shown = page.eval_on_selector_all("#opponents tbody tr", "rs => rs.map(r => r.dataset.bot)")
    assert set(shown) == met and len(shown) == len(met)


def test_no_page_scrolls_sideways_on_a_phone(season: Path, browser: Any) -> None:
    for path in (season / "index.html", season / "bots" / f"{HERO}.html"):
        page = open_page(browser, path, 390, 844)
        page.wait_for_timeout(100)
        width = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1] == 390, (path.name, width)
        assert page.locator('meta[name="viewport"]').count() == 1
        page.close()


def test_the_pages_are_a_function_of_the_journal(season: Path, tmp_path: Path) -> None:
    tournament, _ = load_output_dir(season)
    records = list(iter_journal(season / "matches.jsonl"))
    random.Random(5).shuffle(records)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bot_pages, "CHUNK", 64)
        calls: list[tuple[int, int, str]] = []
        write_leaderboard(
            tmp_path, build_leaderboard(tournament, records, RESAMPLES), ["html"], lambda *a: calls.append(a)
        )
    # the progress display is told of the start (0 of 1), the file, then each bot page
    assert calls[:2] == [(0, 1, "leaderboard files"), (1, 1, "leaderboard files")]
    assert calls[-1] == (200, 200, "bot pages") and len(calls) == 202
    for rel in ["index.html", *(str(p.relative_to(season)) for p in (season / "bots").rglob("*.*"))]:
        assert (tmp_path / rel).read_bytes() == (season / rel).read_bytes(), rel
    assert {p.relative_to(tmp_path) for p in (tmp_path / "bots").rglob("*.*")} == {
        p.relative_to(season) for p in (season / "bots").rglob("*.*")
    }


def test_versions_and_excluded_bots_are_shown_when_the_document_has_them(
    published: tuple[Path, Leaderboard], tmp_path: Path
) -> None:
    base = published[1]
    standings = [dict(r) for r in base.document["standings"]]  # the shared board stays as it was
    row = next(r for r in standings if r["name"] == HERO)
    row["version"], row["versions"] = "9f3a", [{"version": "11aa", "matches": 100}, {"version": "9f3a", "matches": 142}]
    excluded = [{"name": "late-Bot", "reason": "not ready: no answer to hello"}]
    board = replace(base, document={**base.document, "standings": standings, "excluded": excluded})
    write_leaderboard(tmp_path, board, ["html"])
    index = (tmp_path / "index.html").read_text()
    assert (
        '<li data-bot="late-Bot"><a href="bots/late-bot.html">late-Bot</a>: not ready: no answer to hello</li>' in index
    )
    late = (tmp_path / "bots" / "late-bot.html").read_text()
    assert "Excluded from this run: not ready: no answer to hello" in late and 'id="summary"' not in late
    hero = (tmp_path / "bots" / f"{HERO}.html").read_text()
    assert "version 9f3a" in hero and hero.index('data-version="11aa"') < hero.index('data-version="9f3a"')


def test_the_match_list_sorts_every_match_by_score_rank_faults_and_opponents(season: Path, browser: Any) -> None:
    mine = [d for d in sorted(journal_lines(season), key=lambda d: d["index"]) if HERO in d["bots"]]
    page = open_page(browser, season / "bots" / f"{HERO}.html")
    page.wait_for_selector("#matches tbody tr")

    def shown() -> list[dict[str, Any]]:
        return page.eval_on_selector_all(  # type: ignore[no-any-return]
            "#matches tbody tr",
            """rs => rs.map(r => ({id: r.dataset.match, rank: +r.cells[4].textContent,
                 score: +r.cells[5].textContent, faults: +r.cells[6].textContent || 0,
                 table: r.cells[3].textContent}))""",
        )

    def mine_of(d: dict[str, Any]) -> tuple[int, float]:
        seat = d["bots"].index(HERO)
        return d["ranks"][seat], d["scores"][seat]

    for header, field, pick in (("Score", "score", 1), ("Rank", "rank", 0)):
        page.click(f'#matches th:text-is("{header}")')  # every data file is loaded, then all are sorted
        page.wait_for_function("() => document.querySelector('#matches th[aria-sort=ascending]')")
        want = sorted(mine, key=lambda d: (mine_of(d)[pick], d["index"]))[: bot_pages.PER_PAGE]
        page.wait_for_function(f"() => document.querySelector('#matches tbody tr').dataset.match === {want[0]['id']!r}")
        assert [s["id"] for s in shown()] == [d["id"] for d in want]
        page.click(f'#matches th:text-is("{header}")')  # again: the other way
        page.wait_for_function("() => document.querySelector('#matches th[aria-sort=descending]')")
        values = [s[field] for s in shown()]
        top = sorted((mine_of(d)[pick] for d in mine), reverse=True)[: bot_pages.PER_PAGE]
        assert values == top
    page.click('#matches th:text-is("Faults")')
    page.click('#matches th:text-is("Faults")')
    page.wait_for_function("() => document.querySelector('#matches th[aria-sort=descending]')")
    counts = [f["faults"] for f in shown()]
    own = [sum(x["seat"] == d["bots"].index(HERO) for x in d.get("faults", ())) for d in mine]
    assert counts == sorted(counts, reverse=True) and counts[0] == max(own)
    page.click('#matches th:text-is("Table")')
    page.wait_for_function("() => document.querySelector('#matches th[data-key=opponents][aria-sort]')")
    tables = [s["table"] for s in shown()]
    keys = [", ".join(sorted(n for n in t.split(", ") if n != HERO)) for t in tables]
    assert keys == sorted(keys)
    page.click('#matches th:text-is("#")')  # back to fixture order
    page.wait_for_function(f"() => document.querySelector('#matches tbody tr').dataset.match === {mine[0]['id']!r}")
    assert page.errors == []


def test_a_removed_bot_keeps_its_page_marked_removed(season: Path, tmp_path: Path) -> None:
    tournament, records = load_output_dir(season)
    gone = next(n for n in tournament["settings"]["bots"] if n not in (HERO, FAULTY))
    tournament["settings"] = {
        **tournament["settings"],
        "grow": True,
        "bots": [n for n in tournament["settings"]["bots"] if n != gone],
    }
    write_leaderboard(tmp_path, build_leaderboard(tournament, records, RESAMPLES), ["html"])
    page = (tmp_path / "bots" / f"{gone.lower()}.html").read_text()
    played = sum(gone in d["bots"] for d in journal_lines(season))
    assert f"<b>Removed</b> from the tournament: its {played} matches stay in the journal" in page
    assert f"Matches ({played})" in page and 'id="summary"' not in page
    names = (tmp_path / "bots" / "bots.js").read_text()
    assert json.dumps(gone) in names  # other bots' match lists link its page


def test_dropped_tables_are_explained_beside_the_match_count(published: tuple[Path, Leaderboard]) -> None:
    board = published[1]
    ladder = {"epoch_tables": 64, "lineups": [], "dropped": [[5, ["a", "b"]], [9, ["a", "c"]]]}
    document = {**board.document, "settings": {**board.document["settings"], "ladder": ladder}}
    played = dict(settings_lines(board.game, document))["Matches played"]
    assert played.endswith(
        "; 2 tables dropped, never played: chosen while a bot (or an old version) was in the lineup, "
        "unplayed when it left"
    )
    assert dropped_text({"ladder": {**ladder, "dropped": []}}) == "" and dropped_text({}) == ""


def test_the_rating_chart_keeps_its_end_labels_inside(browser: Any) -> None:
    """Long names end inside the chart: each label's box lies within the svg's."""
    long = "a-contestant-with-a-long-name.v2"
    series = [(long, [25.0, 27.0, 30.0], PALETTE[0], True), ("b", [25.0, 24.0, 20.0], PALETTE[1], True)]
    series.append(("another-long-name-in-grey", [25.0, 25.0, 25.5], FAINT, False))
    svg = rating_svg([0, 50, 100], series, "matches", 900.0)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.set_content(f"<!doctype html><body style='margin:0'>{svg}</body>")
    boxes = page.eval_on_selector_all(
        "#rating-history text.label",
        """ts => { const svg = document.querySelector('#rating-history').getBoundingClientRect();
              return ts.map(t => { const b = t.getBoundingClientRect();
                return [t.textContent, b.left >= svg.left - 0.5 && b.right <= svg.right + 0.5 && b.top >= svg.top - 0.5]; }); }""",
    )
    assert len(boxes) == 3 and all(inside for _, inside in boxes), boxes
