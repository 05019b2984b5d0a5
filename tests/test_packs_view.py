"""Every match's replay one click from its bot's page, in headless Chromium from disk:
a 6 nimmt! folder of 150 matches (views in the packs) opens a match that is not among
the 100 most recent at the bot's first decision with the exact seed, and a fault link at
the faulted decision; a game with a ``replay.js`` (a throwaway folder) packs the moves
only and the page rebuilds the views with it. More than 500 matches make one pack per
500, each in index order."""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.replays import write_folder
from referee.games.base import Game
from referee.report.names import bot_files
from referee.report.viewer import RECENT
from referee.store import journal as jn
from referee.store import packs, replay_data
from referee.store.matches import load_match
from tests.support.browser import launched, wait_step
from tests.support.cli import here
from tests.support.packs import write_packs
from tests.support.tiny import play_tiny, tiny_game

pytestmark = pytest.mark.parallel


def test_a_bot_page_opens_any_match_at_its_first_decision_and_a_fault_at_its_decision(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_folder(out, 150, 5, distinct=12)
    write_packs(out)
    done = here("leaderboard", str(out), "-q")
    assert done.returncode == 0, done.stderr
    assert not (out / "replays" / "data").exists()
    lines = sorted(jn.read_journal(out / "matches.jsonl"), key=lambda r: r["index"])
    bot = "bot003"
    first = next(r for r in lines if bot in r["bots"])
    assert first["index"] < len(lines) - RECENT  # not listed on the replays page
    m = load_match(out, first["id"])
    expected = replay_data.make(m)  # 6 nimmt! has replay.js: its pack holds no views, the page rebuilds them
    for key in ("ms", "views", "start", "sent", "after", "legal"):
        del expected[key]
    assert packs.find(out, first["index"]) == expected
    seat = first["bots"].index(bot)
    opening = m.transcript.seats.index(seat) + 1
    faulted = next(r for r in lines if bot in r["bots"] and any(f["seat"] == r["bots"].index(bot) for f in r["faults"]))
    fault = next(f for f in faulted["faults"] if f["seat"] == faulted["bots"].index(bot))
    tr = load_match(out, faulted["id"]).transcript
    at = next(i for i, mv in enumerate(tr.moves) if mv.seat == fault["seat"] and mv.decision == fault["decision"]) + 1
    with launched() as browser:
        page = browser.new_page(viewport={"width": 1366, "height": 800})
        page.goto((out / "bots" / f"{bot_files([bot])[bot]}.html").as_uri(), wait_until="load")
        page.click(f'#matches a:text-is("{first["id"]}")')
        wait_step(page, opening)
        assert page.inner_text("#seed") == str(first["seed"])
        assert f"seat {seat} {bot}" in page.inner_text("#decision")
        page.go_back()
        page.wait_for_selector("#fault-list")
        page.click(f'#fault-list tr[data-match="{faulted["id"]}"] a:text-is("{fault["decision"]}")')
        wait_step(page, at)
        assert page.inner_text("#seed") == str(faulted["seed"])
        assert f"its decision {fault['decision']} " in page.inner_text("#decision")


def test_more_than_500_matches_make_one_pack_per_500_in_index_order(tmp_path: Path) -> None:
    out = tmp_path / "out"
    n = 1100
    write_folder(out, n, 5, distinct=6)
    write_packs(out, moves_only=True)  # cheap entries: the count is what is checked
    files = packs.pack_files(out)
    assert [p.name for p in files] == [f"{k:06d}.js" for k in range(math.ceil(n / packs.PER_PACK))]
    assert len(list((out / packs.FOLDER).iterdir())) == len(files)
    seen = []
    for p in files:
        entries, whole = packs.read_pack(p)
        indexes = [i for _, i, _ in entries]
        assert whole and indexes == sorted(indexes) and len(indexes) <= packs.PER_PACK
        assert {i // packs.PER_PACK for i in indexes} == {int(p.stem)}
        seen += indexes
    assert seen == list(range(n))


TINY_REPLAY = """
// Tiny's engine: every seat sees the picks so far.
G.rebuild=(doc,options)=>{const n=doc.bots.length,views=[],picks=[];
 const add=()=>{views.push({f:{picks:picks.slice()}});return views.length-1;};
 let cur=add();const start=Array(n).fill(cur),sent=[],after=[],legal=[];
 for(const a of doc.action){sent.push(cur);legal.push(2);picks.push(a);cur=add();after.push(Array(n).fill(cur));}
 return {views,start,sent,after,legal};};
"""


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Game]:
    """The tiny game (tests/support/tiny.py), with a ``replay.js``."""
    yield from tiny_game(tmp_path, monkeypatch, "tiny_packs", TINY_REPLAY)


def test_a_game_with_replay_js_packs_the_moves_and_the_page_rebuilds_the_views(tiny: Game, tmp_path: Path) -> None:
    assert (tiny.replay_js() or "").endswith(TINY_REPLAY)  # after the shared pyrandom.js and viewtable.js
    out = play_tiny(tmp_path, "tiny-packs", 2)
    doc = packs.find(out, 1)
    assert doc is not None and "views" not in doc and "ms" not in doc
    assert doc["action"] == [1, 1, 1, 1] and doc["seat"] == [0, 1, 0, 1] and doc["decision"] == [0, 0, 1, 1]
    line = next(r for r in jn.read_journal(out / "matches.jsonl") if r["index"] == 1)
    assert doc["seed"] == str(line["seed"]) and doc["scores"] == line["scores"]
    assert TINY_REPLAY in (out / "replays" / "index.html").read_text()
    with launched() as browser:
        page = browser.new_page()
        page.goto(f"{(out / 'replays' / 'index.html').as_uri()}#m000001/3")
        wait_step(page, 3)
        assert page.inner_text("#tiny-board") == "picks 1 1 1"
        page.goto(f"{(out / 'replays' / 'index.html').as_uri()}#m000001/s1d1")
        wait_step(page, 4)
        assert page.inner_text("#tiny-board") == "picks 1 1 1 1"


def test_a_game_without_replay_js_packs_its_views_and_the_page_draws_them(tiny: Game, tmp_path: Path) -> None:
    (Path(importlib.import_module("tiny_packs.tiny").__file__ or "").parent / "replay.js").unlink()
    assert tiny.replay_js() is None
    out = play_tiny(tmp_path, "tiny-views", 2)
    expected = replay_data.make(load_match(out, "m000001"))  # kind (b): the format-1 data, timings aside
    del expected["ms"]
    assert packs.find(out, 1) == expected and "views" in expected
    assert "G.rebuild=" not in (out / "replays" / "index.html").read_text()  # no engine inlined
    with launched() as browser:
        page = browser.new_page()
        page.goto(f"{(out / 'replays' / 'index.html').as_uri()}#m000001/3")
        wait_step(page, 3)
        assert page.inner_text("#tiny-board") == "picks 1 1 1"
