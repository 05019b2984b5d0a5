"""Drahtseilakt's JavaScript replay engine (issue 35 point 4): ``replay.js`` rebuilds, in the
system Chromium, from a match's seed and moves alone, every view ``frames(..., after=True)``
gives in Python: the deal (CPython's MT19937 and shuffle, draw for draw, seeds past 2**53
and the edge seeds), every variant, every seat count, truncated matches, extras (ignored, as
the rules ignore them) and refused moves."""

from __future__ import annotations

import functools
import itertools
import json
import random
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from referee.errors import ReplayError
from referee.games.drahtseilakt import rules as D
from referee.match.frames import Frame, frames
from referee.record import Move
from tests.support.browser import launched

pytestmark = pytest.mark.parallel

GAME = D.GAME
JS = Path(D.__file__).with_name("replay.js").read_text(encoding="utf-8")
VARIANTS = [{"tactical": t, "chaotic": c} for t, c in itertools.product((False, True), repeat=2)]
SEATS = range(GAME.info.min_seats, GAME.info.max_seats + 1)
EDGE_SEEDS = [0, 1, 2**32 - 1, 2**32, 2**53 + 1, 2**64 - 1, 2**127]
BATCH = 24  # docs per page.evaluate: the texts the page keeps for one batch stay modest

# Loads the file as the viewer does (inside a scope where ``const G = {}`` exists) and
# answers which globals it added; the file must add none.
LOAD = """(src) => {
  const before = new Set(Object.getOwnPropertyNames(window));
  const G = {};
  new Function("G", src)(G);
  window.__G = G;
  return Object.getOwnPropertyNames(window).filter((k) => !before.has(k) && k !== "__G");
}"""

# Rebuilds a batch; every view resolved to a whole one (delta entries as replay_data defines
# them) as JSON text, kept in the page (``window.__texts``) and sent back as its CRC-32 and
# length (the texts are large; Python asks for one only when it differs); a rule refusal
# comes back as {"error": message}.
REBUILD = """(text) => {
  const [docs, opts] = JSON.parse(text);
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  const crc = (t) => {
    let c = 0xffffffff;
    for (let i = 0; i < t.length; i++) c = table[(c ^ t.charCodeAt(i)) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  window.__texts = [];
  return JSON.stringify(docs.map((doc, k) => {
    let r;
    try { r = window.__G.rebuild(doc, opts[k]); } catch (e) { window.__texts.push([]); return {error: String(e.message)}; }
    const full = [];
    for (const e of r.views) {
      if ("f" in e) { full.push(e.f); continue; }
      const base = full[e.b], v = Object.assign({}, base, e.set || {});
      for (const key of Object.keys(e.app || {})) v[key] = base[key].concat(e.app[key]);
      for (const key of e.del || []) delete v[key];
      full.push(v);
    }
    const texts = full.map((v) => JSON.stringify(v));
    window.__texts.push(texts);
    return {views: texts.map((t) => [crc(t), t.length]), start: r.start, sent: r.sent, after: r.after, legal: r.legal};
  }));
}"""


def play_random(n: int, seed: int, options: Mapping[str, Any], pick: int) -> tuple[list[Move], D.DrahtState]:
    """A whole match played by the rules with moves chosen at random (seeded by ``pick``), and its end."""
    st = GAME.setup(n, seed, options)
    rng = random.Random(pick)
    moves: list[Move] = []
    while not GAME.is_over(st):
        for s in GAME.to_act(st):
            action = rng.choice(GAME.legal(st, s))
            moves.append(Move(s, len(moves) + 1, action, "b"))
            st = GAME.apply(st, s, action)
    return moves, st


def random_moves(n: int, seed: int, options: Mapping[str, Any], pick: int) -> list[Move]:
    """The moves of a whole match played at random."""
    return play_random(n, seed, options, pick)[0]


def rare(st: D.DrahtState) -> set[str]:
    """The rare turns a finished match took: a clean round cancelling the earliest of tied
    highest rounds, a clean round with nothing to cancel, two 0s cancelling each other."""
    seen = set()
    for log in st.rounds_log:
        r = log["round"]
        for s in range(st.seats):
            if r == 0 or log["scores"][s]:
                continue
            before = [c["round"] for old in st.rounds_log[:r] for c in old["cancels"] if c["seat"] == s]
            earlier = [0 if k in before else v for k, v in enumerate(st.raw_scores[s][:r])]
            top = max(earlier)
            seen.add(
                "clean, nothing to cancel" if top == 0 else "clean, tied highest" if earlier.count(top) > 1 else ""
            )
        cards = log["score_cards_revealed"]
        if any({a, b} == {D.RED_ZERO, D.BLUE_ZERO} for a, b in itertools.pairwise(cards)):
            seen.add("two 0s")
    return seen - {""}


def doc_of(seed: int, n: int, moves: Sequence[Move]) -> dict[str, Any]:
    """What a pack holds of a match: seed (a decimal string), bots, seats, actions, extras."""
    doc: dict[str, Any] = {
        "seed": str(seed),
        "bots": [f"b{s}" for s in range(n)],
        "seat": [m.seat for m in moves],
        "action": [m.action for m in moves],
    }
    extras = {str(i): m.extras for i, m in enumerate(moves) if m.extras}
    if extras:
        doc["extras"] = extras
    return doc


def first_difference(want: Any, got: Any, at: str = "") -> str | None:
    """Where JSON values ``want`` and ``got`` first differ (same types, keys, order), or None."""
    if type(want) is not type(got):
        return f"{at or 'view'}: expected {json.dumps(want)[:120]}, got {json.dumps(got)[:120]}"
    if isinstance(want, dict):
        if set(want) != set(got):
            return f"{at or 'view'}: keys differ, missing {sorted(set(want) - set(got))}, extra {sorted(set(got) - set(want))}"
        diffs = (first_difference(want[k], got[k], f"{at}.{k}" if at else k) for k in want)
        return next((d for d in diffs if d), None)
    if isinstance(want, list):
        if len(want) != len(got):
            return (
                f"{at}: expected {len(want)} entries {json.dumps(want)[:120]}, got {len(got)} {json.dumps(got)[:120]}"
            )
        diffs = (first_difference(w, g, f"{at}[{i}]") for i, (w, g) in enumerate(zip(want, got, strict=True)))
        return next((d for d in diffs if d), None)
    return None if want == got else f"{at}: expected {json.dumps(want)}, got {json.dumps(got)}"


Case = tuple[str, int, int, dict[str, Any], list[Move]]  # label, seed, seats, checked options, moves
Digest = list[int]  # a view's compact JSON text: its CRC-32 and its length


def digest(view: dict[str, Any]) -> Digest:
    """The digest of ``view`` as the page makes it (orjson writes compact JSON, as JSON.stringify does)."""
    text = orjson.dumps(view)
    return [zlib.crc32(text), len(text)]


@dataclass
class Want:
    """What ``frames`` gives for one case, every view as its digest."""

    start: list[Digest]
    sent: list[Digest]
    after: list[list[Digest]]
    legal: list[int]


def want(case: Case) -> Want:
    """Python's side of ``case``: the start views, then every decision's frame."""
    _, seed, n, options, moves = case
    st = GAME.setup(n, seed, options)
    fs = list(frames(GAME, options, seed, n, moves, after=True))
    return Want(
        [digest(GAME.view(st, s)) for s in range(n)],
        [digest(f.sent) for f in fs],
        [[digest(v) for v in f.after or ()] for f in fs],
        [f.n_legal for f in fs],
    )


def explain(case: Case, fs: Callable[[], list[Frame]], where: tuple[str, int, int], text: str) -> str | None:
    """The first difference between Python's view at ``where`` (part, decision, seat) and the
    rebuild's ``text``, or None when only the text differs (key order)."""
    _, seed, n, options, _ = case
    part, i, s = where
    if part == "start":
        python = GAME.view(GAME.setup(n, seed, options), s)
    else:
        f = fs()[i]
        python = f.sent if part == "sent" else (f.after or [])[s]
    return first_difference(python, json.loads(text))


def compare(case: Case, w: Want, got: dict[str, Any], page: Any, k: int) -> int:
    """The rebuild of ``case`` (number ``k`` of the page's batch) gives Python's every view and
    legal count; the first difference named. The decisions compared."""
    label, seed, n, options, moves = case
    assert "error" not in got, f"{label}: the rebuild failed: {got.get('error')}"
    assert len(got["start"]) == n, f"{label}: {len(got['start'])} start views for {n} seats"
    for key in ("sent", "after", "legal"):
        assert len(got[key]) == len(w.legal), f"{label}: {len(got[key])} {key} entries, frames gives {len(w.legal)}"
    bad = next((i for i, (a, b) in enumerate(zip(got["legal"], w.legal, strict=True)) if a != b), None)
    assert bad is None, f"{label} decision {bad + 1}: {got['legal'][bad]} legal actions, Python has {w.legal[bad]}"
    places = [(("start", -1, s), w.start[s], got["start"][s]) for s in range(n)]
    places += [(("sent", i, -1), d, got["sent"][i]) for i, d in enumerate(w.sent)]
    for i, row in enumerate(w.after):
        assert len(got["after"][i]) == n, f"{label} decision {i + 1}: {len(got['after'][i])} after views for {n} seats"
        places += [(("after", i, s), d, got["after"][i][s]) for s, d in enumerate(row)]
    fs = functools.cache(lambda: list(frames(GAME, options, seed, n, moves, after=True)))
    sums = got["views"]
    for where, d, index in places:
        assert isinstance(index, int) and 0 <= index < len(sums), f"{label} {where}: view index {index} out of range"
        if sums[index] != d:
            diff = explain(case, fs, where, page.evaluate("([k, i]) => window.__texts[k][i]", [k, index]))
            part, i, s = where
            at = "start" if part == "start" else f"decision {i + 1} (seat {moves[i].seat}), {part}"
            assert diff is None, f"{label}: {at}{'' if part == 'sent' else f', seat {s}'}: {diff}"
    return len(w.legal)


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    """One Chromium page with ``replay.js`` loaded as the viewer loads it."""
    with launched() as browser:
        pg = browser.new_page()
        added = pg.evaluate(LOAD, JS)
        assert added == [], f"replay.js adds globals {added}"
        yield pg


def rebuild(page: Any, docs: Sequence[dict[str, Any]], opts: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``G.rebuild`` of every doc of one batch, in the one page (the texts stay in the page)."""
    out: list[dict[str, Any]] = json.loads(page.evaluate(REBUILD, orjson.dumps([docs, opts]).decode()))
    return out


def check_all(page: Any, cases: Sequence[Case]) -> int:
    """Rebuild every case and compare it with Python's; the decisions compared."""
    decisions = 0
    with ThreadPoolExecutor(1) as python:  # Python's side meanwhile, while the page works
        wants = [python.submit(want, case) for case in cases]
        for b in range(0, len(cases), BATCH):
            batch = cases[b : b + BATCH]
            got = rebuild(page, [doc_of(seed, n, moves) for _, seed, n, _, moves in batch], [c[3] for c in batch])
            for k, (case, g) in enumerate(zip(batch, got, strict=True)):
                decisions += compare(case, wants[b + k].result(), g, page, k)
    return decisions


def test_the_file_only_sets_g_rebuild(page: Any) -> None:
    assert page.evaluate("Object.keys(window.__G)") == ["rebuild"]
    assert "G.rebuild = function" in JS and "</script" not in JS.lower(), "the viewer inlines the file in a <script>"


def test_the_deal_matches_python_for_the_edge_seeds(page: Any) -> None:
    cases: list[Case] = []
    for seed, n, o in itertools.product([*EDGE_SEEDS, -7], SEATS, VARIANTS):
        cases.append((f"seed {seed}, {n} seats, {o}", seed, n, GAME.check_options(n, o), []))
    assert check_all(page, cases) == 0
    dealt = rebuild(page, [doc_of(s, 4, []) for s in (0, 2**127)], [GAME.check_options(4, {})] * 2)
    assert dealt[0]["views"] != dealt[1]["views"], "two seeds, one deal: the seed is not used"


def test_random_matches_of_every_variant_and_seat_count_rebuild_every_view(page: Any) -> None:
    rng = random.Random(35)
    cases: list[Case] = []
    for j, (n, o) in enumerate(itertools.product(SEATS, VARIANTS)):
        options = GAME.check_options(n, o)
        edge = [EDGE_SEEDS[(2 * j + e) % len(EDGE_SEEDS)] for e in (0, 1)]  # each edge seed in whole matches too
        for seed in [*edge, rng.getrandbits(64), rng.getrandbits(40), 2**62 + rng.getrandbits(20)]:
            moves = random_moves(n, seed, options, rng.getrandbits(32))
            cases.append((f"seed {seed}, {n} seats, {o}", seed, n, options, moves))
    # and the first matches (of a seeded search) that take the rare turns
    wanted = {"clean, tied highest", "clean, nothing to cancel", "two 0s"}
    configs = itertools.cycle(itertools.product(SEATS, VARIANTS))
    for _, (n, o) in zip(range(3000), configs, strict=False):
        options, seed = GAME.check_options(n, o), rng.getrandbits(64)
        moves, end = play_random(n, seed, options, seed)
        if rare(end) & wanted:
            cases.append((f"seed {seed}, {n} seats, {o}, {sorted(rare(end))}", seed, n, options, moves))
            wanted -= rare(end)
        if not wanted:
            break
    assert not wanted, f"no match in 3000 took the turns {sorted(wanted)}"
    decisions = check_all(page, cases)
    assert decisions == sum(len(c[4]) for c in cases) and decisions > 40 * len(cases)


def test_cut_short_matches_and_extras_rebuild_as_frames_does(page: Any) -> None:
    rng = random.Random(36)
    cases: list[Case] = []
    for n, o in itertools.product(SEATS, VARIANTS):
        options = GAME.check_options(n, o)
        seed = rng.getrandbits(70)
        moves = random_moves(n, seed, options, seed)
        # mid-trick, mid-choice for chaotic, and in the next round's first trick
        for cut in (n // 2 + 1, 9 * n + 1, rng.randrange(1, len(moves))):
            cases.append((f"seed {seed}, {n} seats, {o}, cut at {cut}", seed, n, options, moves[:cut]))
        if n != 3:  # whole matches with extras or too many moves: one seat count is enough
            continue
        # Drahtseilakt takes no reply fields besides the action: extras change nothing
        marked = [
            Move(m.seat, m.decision, m.action, m.by, extras={"claims": [0]} if i % 5 == 0 else None)
            for i, m in enumerate(moves)
        ]
        cases.append((f"seed {seed}, {n} seats, {o}, with extras", seed, n, options, marked))
        # moves past the end of the match are never reached, in frames as in the rebuild
        cases.append((f"seed {seed}, {n} seats, {o}, moves past the end", seed, n, options, [*moves, moves[-1]]))
    assert check_all(page, cases) > 0


@pytest.mark.parametrize("o", VARIANTS, ids=lambda o: f"tactical={o['tactical']},chaotic={o['chaotic']}")
def test_a_move_the_rules_refuse_stops_the_rebuild_as_it_stops_frames(page: Any, o: dict[str, bool]) -> None:
    n, seed = 4, 2**60 + 3
    options = GAME.check_options(n, o)
    moves = random_moves(n, seed, options, 1)[:7]
    st = GAME.setup(n, seed, options)
    for m in moves:
        st = GAME.apply(st, m.seat, m.action)
    seat = GAME.to_act(st)[0]
    hand = GAME.legal(st, seat)
    played = next(m.action for m in moves if m.seat == seat)
    absent = next(c for c in range(1, st.max_card + 1) if c not in hand and c != played)
    bad = {
        "a card not in the hand": [*moves, Move(seat, 8, absent, "b")],
        "a card already played": [*moves, Move(seat, 8, played, "b")],
        "not a number": [*moves, Move(seat, 8, str(hand[0]), "b")],
        "true for a card": [*moves, Move(seat, 8, True, "b")],
        "a float for a card": [*moves, Move(seat, 8, hand[0] + 0.5, "b")],
        "the wrong seat": [*moves, Move((seat + 1) % n, 8, hand[0], "b")],
    }
    got = rebuild(page, [doc_of(seed, n, v) for v in bad.values()], [options] * len(bad))
    for (what, mv), g in zip(bad.items(), got, strict=True):
        with pytest.raises(ReplayError):
            list(frames(GAME, options, seed, n, mv, after=True))
        assert "decision 8" in g.get("error", ""), f"{what}: the rebuild did not refuse decision 8: {str(g)[:200]}"
