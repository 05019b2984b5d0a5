"""The replay viewer: a real ``referee run`` of sample bots publishes ``replays/index.html``
and the replay data of its matches (a folder made before replay packs: its packs removed). The data rebuilds, in Python, exactly the views the
rules give; in headless Chromium from disk the one page lists the matches, opens
``#m000001/k`` at decision k with the rows and hands the rules give after k decisions,
shows the seed as its exact digits, highlights and scrolls to the current decision in the
list, links each bot's page, and reads at 390 px without sideways scrolling. Nothing is
fetched: the data comes in as scripts."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchmarks.replays import write_folder
from benchmarks.transcripts import play
from referee.cli.main import main
from referee.errors import ReplayError
from referee.games import get_game
from referee.record import MatchRecord
from referee.report.names import bot_files
from referee.report.viewer import RECENT, write_page, write_replays
from referee.store import replay_data, transcripts
from referee.store.matches import load_match, match_of
from tests.support.browser import CHROMIUM, launched
from tests.support.cli import here, run_here

pytestmark = pytest.mark.parallel

BOTS = [("greedy", "greedy"), ("Cautious", "cautious"), ("random", "random")]
SHOTS = Path("/tmp/replay-shots")


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("viewer")
    lines = ["[tournament]", 'name = "viewer"', 'game = "nimmt_plus"', "seed = 5", "players = 3", "rounds = 2"]
    lines.append(f'output = "{tmp / "out"}"')
    for name, strategy in BOTS:
        lines += ["[[bot]]", f'name = "{name}"']
        lines.append(f'command = ["python", "-m", "sample_bots.nimmt", "{strategy}", "--port", "{{port}}"]')
    (tmp / "v.toml").write_text("\n".join(lines) + "\n")
    run_here(tmp / "v.toml", tmp / "out")
    # a folder as a referee before replay packs left it: the viewer reads replay data files
    # (tests/test_packs.py covers the packs)
    shutil.rmtree(tmp / "out" / "replays")
    write_replays(tmp / "out")
    return tmp / "out"


@pytest.fixture(scope="module")
def browser(output: Path) -> Iterator[Any]:
    """One Chromium for the module's pages, started after the run: while a sync Playwright
    is open, this thread's event loop is its own (``asyncio.run`` refuses to start)."""
    with launched() as b:
        yield b


def resolve(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every view of the data, rebuilt from its entries as the viewer rebuilds them."""
    views: list[dict[str, Any]] = []
    for e in doc["views"]:
        if "f" in e:
            views.append(e["f"])
            continue
        base = views[e["b"]]
        v = {**base, **e.get("set", {})}
        v.update({k: base[k] + extra for k, extra in e.get("app", {}).items()})
        for k in e.get("del", []):
            del v[k]
        views.append(v)
    return views


def test_the_data_holds_every_view_the_rules_give_and_the_exact_seed(output: Path) -> None:
    for mid in ("m000000", "m000001"):
        m = load_match(output, mid)
        doc = replay_data.read(output, mid)
        views = resolve(doc)
        frames = list(m.frames(after=True))
        deal = m.game.setup(3, m.record["seed"], m.options)
        assert [views[i] for i in doc["start"]] == [m.game.view(deal, s) for s in range(3)]
        assert len(doc["seat"]) == len(frames) > 20
        for i, f in enumerate(frames):
            assert [views[j] for j in doc["after"][i]] == f.after, f"views after decision {i + 1}"
            assert views[doc["sent"][i]] == f.sent
            assert (doc["seat"][i], doc["decision"][i], doc["action"][i]) == (
                f.move.seat,
                f.move.decision,
                f.move.action,
            )
        assert doc["seed"] == str(m.record["seed"]) and isinstance(m.record["seed"], int)
        assert doc["bots"] == m.record["bots"] and doc["scores"] == m.record["scores"]
    # the journal keeps its integer seed
    assert re.search(r'"seed":\d+', (output / "matches.jsonl").read_text())


@pytest.mark.parametrize("game_id", ["nimmt_plus", "the_game", "drahtseilakt", "dieci"])
def test_every_game_s_data_rebuilds_its_views_and_draws_in_chromium(
    game_id: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    game = get_game(game_id)
    players = max(3, game.info.min_seats)
    options = game.check_options(players, {})
    names = [f"b{i}" for i in range(players)]
    rec = play(game_id, 3, 2**62 + 12345, names, options)  # a seed past 2**53
    tr = transcripts.decode(json.loads(transcripts.line_of(rec)))
    settings = {"name": "t", "game": game_id, "options": options, "bots": names}
    m = match_of(game, settings, rec.to_json(), tr)
    replay_data.write(tmp_path, m)
    doc = replay_data.read(tmp_path, rec.id)
    views = resolve(doc)
    frames = list(m.frames(after=True))
    assert [[views[j] for j in a] for a in doc["after"]] == [f.after for f in frames]
    assert doc["seed"] == str(2**62 + 12345)
    write_page(tmp_path, settings, [rec.to_json()], 1, {rec.id})
    if not CHROMIUM.exists():
        return
    page = request.getfixturevalue("browser").new_page(viewport={"width": 390, "height": 844})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    k = len(frames) // 2
    page.goto(f"{(tmp_path / 'replays' / 'index.html').as_uri()}#{rec.id}/{k}")
    page.wait_for_function(f"document.getElementById('board').dataset.step === '{k}'")
    assert page.inner_text("#seed") == str(2**62 + 12345)
    assert page.eval_on_selector_all("#board .seatbox", "bs => bs.length") == players
    assert no_sideways_scroll(page) and errors == []
    page.screenshot(path=str(SHOTS / f"replay-{game_id}-390.png"), full_page=True)
    page.close()


def test_publishing_makes_each_match_once_and_again_when_its_line_changes(output: Path) -> None:
    data = output / replay_data.FOLDER
    assert sorted(p.name for p in data.iterdir()) == ["m000000.js", "m000001.js"]
    calls: list[tuple[int, int]] = []
    assert write_replays(output, lambda done, total, what: calls.append((done, total))) == []
    assert calls == [(1, 2), (2, 2)]
    rec = dict(load_match(output, "m000001").record)
    assert replay_data.present(output, rec)
    assert not replay_data.present(output, {**rec, "scores": [0, 0, 0]})  # another line: made again
    with pytest.raises(ReplayError, match="cannot name a replay file"):
        replay_data.path(output, "../x")


def test_a_transcript_the_rules_refuse_costs_that_replay_only(tmp_path: Path) -> None:
    def change(rec: MatchRecord) -> MatchRecord:
        if rec.index != 1:
            return rec
        moves = list(rec.moves)
        moves[2] = dataclasses.replace(moves[2], action=[999])
        return dataclasses.replace(rec, moves=moves)

    out = tmp_path / "out"
    write_folder(out, 3, 5, change=change)
    written = write_replays(out)
    assert sorted(p.name for p in written) == ["m000000.js", "m000002.js"]
    page = (out / "replays" / "index.html").read_text()
    assert '<a href="#m000002">' in page and '<a href="#m000001">' not in page and "(no data)" in page


def test_replay_html_makes_the_data_of_a_match_on_demand(output: Path) -> None:
    target = replay_data.path(output, "m000000")
    before = target.read_bytes()
    target.unlink()
    result = CliRunner().invoke(main, ["replay", str(output), "m000000", "--html"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{output / 'replays' / 'index.html'}#m000000"
    assert target.read_bytes() == before  # the same bytes as publishing made


def test_the_viewer_page_in_chromium(output: Path, browser: Any) -> None:
    m = load_match(output, "m000001")
    after = [f.after for f in m.frames(after=True)]
    n = len(after)
    page_html = (output / "replays" / "index.html").read_text()
    assert not re.search(r"https?:|fetch\(|XMLHttpRequest", page_html)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page_html
    assert m.record["seed"] > 2**53  # past what a JavaScript number holds exactly
    SHOTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 800})
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    base = (output / "replays" / "index.html").as_uri()
    page.goto(base, wait_until="load")
    check_list(page)
    page.screenshot(path=str(SHOTS / "list-1366.png"), full_page=True)

    page.click('a[href="#m000001"]')
    page.wait_for_selector("#board .row")
    assert page.inner_text("#seed") == str(m.record["seed"])
    assert page.inner_text("#pos") == f"the deal, before decision 1 of {n}"
    pages = bot_files(["greedy", "Cautious", "random"])
    links = page.eval_on_selector_all("#result a.bot", "as => as.map(a => a.getAttribute('href'))")
    assert links == [f"../bots/{pages[b]}.html" for b in m.record["bots"]]

    deal = [m.game.view(m.game.setup(3, m.record["seed"], m.options), s) for s in range(3)]
    for k in (0, 1, 3, 7, 20, n - 1, n):
        page.goto(f"{base}#m000001/{k}")
        page.wait_for_function(f"document.getElementById('board').dataset.step === '{k}'")
        want = after[k - 1] if k else deal
        assert page.inner_text("#pos") == (f"decision {k} of {n}" if k else f"the deal, before decision 1 of {n}")
        assert board_rows(page) == want[0]["rows"], f"rows at decision {k}"
        for s in range(3):
            assert seat_hand(page, s) == [str(c) for c in want[s]["hand"]], f"seat {s}'s hand at {k}"
        assert current(page) == ([k] if k else [])
        if k:
            assert shown_in_list(page), f"decision {k} scrolled into the list's view"
    page.click("#back")
    assert page.inner_text("#pos") == f"decision {n - 1} of {n}" and current(page) == [n - 1]
    assert page.evaluate("location.hash") == f"#m000001/{n - 1}"
    page.click('#moves li[value="5"]')
    assert page.inner_text("#pos") == f"decision 5 of {n}" and current(page) == [5]
    assert page.inner_text("#decision").startswith("decision 5 ")

    # one seat: what the rules let it see after decision k, the other hands face down
    k = 9
    page.goto(f"{base}#m000001/{k}")
    page.wait_for_function(f"document.getElementById('board').dataset.step === '{k}'")
    page.select_option("#who", "1")
    assert board_rows(page) == after[k - 1][1]["rows"]
    assert seat_hand(page, 1) == [str(c) for c in after[k - 1][1]["hand"]]
    assert seat_hand(page, 0) == ["?"] * after[k - 1][1]["hand_sizes"][0]
    page.select_option("#who", "-1")

    # a seat's own decision number, as the bot was sent it (a fault's link)
    frame = next(f for f in m.frames() if f.move.seat == 2 and f.move.decision == 3)
    page.goto(f"{base}#m000001/s2d3")
    page.wait_for_function(f"document.getElementById('board').dataset.step === '{frame.index + 1}'")
    page.screenshot(path=str(SHOTS / "replay-1366.png"), full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    assert no_sideways_scroll(page)
    page.screenshot(path=str(SHOTS / "replay-390.png"), full_page=True)
    page.goto(base + "#m999999")
    page.wait_for_function("document.getElementById('status').textContent.includes('No replay of')")
    status = page.inner_text("#status")  # no organiser command for the visitor
    assert "No replay of m999999 on this site" in status and "referee" not in status
    page.goto(base, wait_until="load")
    page.wait_for_selector("#list:not([hidden])")
    assert no_sideways_scroll(page)
    page.screenshot(path=str(SHOTS / "list-390.png"), full_page=True)
    assert errors == []
    assert all(u.startswith("file://") for u in requests), requests
    page.close()


def check_list(page: Any) -> None:
    """The match list: both matches, filtered by bot, sorted both ways."""
    ids = page.eval_on_selector_all("#matches tbody tr", "rs => rs.map(r => r.dataset.id)")
    assert ids == [f"m{i:06d}" for i in range(2)] and RECENT >= 2
    page.select_option("#bot", "greedy")
    assert page.eval_on_selector_all("#matches tbody tr:not([hidden])", "rs => rs.length") == 2
    page.click('#matches th[data-col="id"]')
    page.click('#matches th[data-col="id"]')  # descending
    assert page.eval_on_selector_all("#matches tbody tr", "rs => rs.map(r => r.dataset.id)") == ids[::-1]


def board_rows(page: Any) -> list[list[int]]:
    rows: list[list[int]] = page.eval_on_selector_all(
        "#board .row", "rs => rs.map(r => [...r.querySelectorAll('.card')].map(c => Number(c.dataset.card)))"
    )
    return rows


def seat_hand(page: Any, seat: int) -> list[str]:
    hand: list[str] = page.eval_on_selector_all(
        f'#board .seatbox[data-seat="{seat}"] .hand .card', "cs => cs.map(c => c.textContent)"
    )
    return hand


def current(page: Any) -> list[int]:
    """The numbers of the highlighted decisions in the list."""
    cur: list[int] = page.eval_on_selector_all("#moves li.cur", "ls => ls.map(l => l.value)")
    return cur


def shown_in_list(page: Any) -> bool:
    """True when the highlighted decision lies inside the list's visible box."""
    shown: bool = page.evaluate(
        """() => { const box = document.getElementById('moves').getBoundingClientRect();
        const li = document.querySelector('#moves li.cur').getBoundingClientRect();
        return li.top >= box.top - 1 && li.bottom <= box.bottom + 1; }"""
    )
    return shown


def no_sideways_scroll(page: Any) -> bool:
    wide: bool = page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    return wide


def test_a_fault_link_on_a_bot_page_opens_the_faulted_decision(output: Path, tmp_path: Path, browser: Any) -> None:
    """A fault names the seat's own decision; its link on the bot's page opens the viewer at
    that decision of the match (not the match-wide step of the same number)."""
    folder = tmp_path / "out"
    shutil.copytree(output, folder)
    m = load_match(folder, "m000001")
    frame = next(f for f in m.frames() if f.move.seat == 2 and f.move.decision == 3)
    assert frame.index + 1 != 3  # the match-wide step 3 is another decision
    journal = folder / "matches.jsonl"
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    for d in lines:
        if d["id"] == "m000001":
            d["faults"] = [{"seat": 2, "decision": 3, "phase": "act", "kind": "timeout", "detail": "no reply"}]
    journal.write_text("".join(json.dumps(d) + "\n" for d in lines))
    done = here("leaderboard", str(folder), "-q")
    assert done.returncode == 0, done.stderr
    bot = m.record["bots"][2]
    page = browser.new_page(viewport={"width": 1366, "height": 800})
    page.goto((folder / "bots" / f"{bot_files([bot])[bot]}.html").as_uri(), wait_until="load")
    page.click('#fault-list a:text-is("3")')
    page.wait_for_function(f"document.getElementById('board').dataset.step === '{frame.index + 1}'")
    assert page.inner_text("#seed") == str(m.record["seed"])
    assert "its decision 3 " in page.inner_text("#decision") and f"seat 2 {bot}" in page.inner_text("#decision")
    page.close()
