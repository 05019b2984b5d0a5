"""The replay viewer in headless Chromium, from disk: a real ``referee run`` of sample
bots writes ``replays/``; the match list filters and sorts, a row opens the match's page,
stepping shows at decision k exactly the rows, hands and scores the rules give after k
decisions, and the per-seat view shows what that seat was sent. Nothing is fetched."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from referee.report.viewer import RECENT
from referee.store.matches import load_match
from tests.support.browser import CHROMIUM, LAUNCH_ARGS, require_chromium
from tests.support.cli import ROOT, referee

BOTS = [("greedy", "greedy"), ("cautious", "cautious"), ("random", "random")]


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_chromium()
    tmp = tmp_path_factory.mktemp("viewer")
    lines = ["[tournament]", 'name = "viewer"', 'game = "nimmt_plus"', "seed = 5", "players = 3", "rounds = 2"]
    lines.append(f'output = "{tmp / "out"}"')
    for name, strategy in BOTS:
        lines += ["[[bot]]", f'name = "{name}"']
        lines.append(f'command = ["python", "-m", "sample_bots.nimmt", "{strategy}", "--port", "{{port}}"]')
    (tmp / "v.toml").write_text("\n".join(lines) + "\n")
    proc = referee("run", str(tmp / "v.toml"), "-q")
    assert proc.returncode == 0, proc.stderr
    return tmp / "out"


def test_the_list_and_a_replay_page_show_the_match_at_every_step(output: Path) -> None:
    from playwright.sync_api import sync_playwright

    m = load_match(output, "m000001")
    after = [f.after for f in m.frames(after=True)]
    assert after and all(a is not None for a in after)
    html = (output / "replays" / "m000001.html").read_text()
    assert not re.search(r"https?:|src\s*=|fetch\(|XMLHttpRequest", html)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            requests: list[str] = []
            errors: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((output / "replays" / "index.html").as_uri(), wait_until="load")
            ids = page.eval_on_selector_all("#matches tbody tr", "rs => rs.map(r => r.dataset.id)")
            assert ids == [f"m{i:06d}" for i in range(2)] and RECENT >= 2
            page.select_option("#bot", "greedy")
            shown = page.eval_on_selector_all("#matches tbody tr:not([hidden])", "rs => rs.length")
            assert shown == 2  # greedy sits at both tables
            page.click('#matches th[data-col="id"]')
            page.click('#matches th[data-col="id"]')  # descending
            assert page.eval_on_selector_all("#matches tbody tr", "rs => rs.map(r => r.dataset.id)") == ids[::-1]

            page.click('a[href="m000001.html"]')
            page.wait_for_selector("#board .row")
            for k in (0, 1, 3, 7, 20, len(after)):
                page.click("#first")
                for _ in range(k):
                    page.click("#next")
                assert page.inner_text("#pos") == f"decision {k} of {len(after)}"
                want = (
                    after[k - 1]
                    if k
                    else [m.game.view(m.game.setup(3, m.record["seed"], m.options), s) for s in range(3)]
                )
                assert board_rows(page) == want[0]["rows"], f"rows at decision {k}"
                for s in range(3):
                    assert seat_hand(page, s) == [str(c) for c in want[s]["hand"]], f"seat {s}'s hand at {k}"
            page.click("#back")
            assert page.inner_text("#pos") == f"decision {len(after) - 1} of {len(after)}"

            # one seat: exactly the view it was sent at its latest decision; the others' hands hidden
            k = 9
            page.click("#first")
            for _ in range(k):
                page.click("#next")
            page.select_option("#who", "1")
            fr = [f for f in m.frames() if f.index < k and f.move.seat == 1][-1]
            nxt = next(f for f in m.frames() if f.index == k)
            sent = nxt.sent if nxt.move.seat == 1 else fr.sent
            assert board_rows(page) == sent["rows"]
            assert seat_hand(page, 1) == [str(c) for c in sent["hand"]]
            assert seat_hand(page, 0) == ["?"] * sent["hand_sizes"][0]
            page.select_option("#who", "-1")

            # the decision list: clicking a fallback-free decision shows it, its bot log slot stays text
            page.click('#moves li[value="4"]')
            assert page.inner_text("#pos") == f"decision 5 of {len(after)}"
            assert errors == []
            assert all(u.startswith("file://") for u in requests), requests
            page.screenshot(path=str(ROOT / "tests" / "artifacts" / "replay.png"))
        finally:
            browser.close()


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
