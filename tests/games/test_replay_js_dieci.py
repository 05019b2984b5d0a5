"""Dieci's JavaScript replay engine (``referee/games/dieci/replay.js``) against the Python rules.

Many real matches are played through the Python engine (every seat count, every option:
decks that force skips, unwinds, re-entries and refills, one to four tokens, ``reshuffle``
false, short ``max_manches``; seeds 0, past 2**53, past 2**64 and negative; moves drawn at random
among the legal ones, some with extras the game ignores). The moves alone go to
``G.rebuild`` in one Chromium page, and every start, sent and after view and every legal
count must equal what ``referee.match.frames.frames(..., after=True)`` yields. Views are
compared through SHA-1 digests of their JSON, keys in Python's order (tens of megabytes
of views need not cross the page's wire); a mismatch fetches that decision's views and
names the first differing key.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from referee.errors import ReplayError
from referee.games.dieci import rules
from referee.games.dieci.rules import GAME
from referee.match.frames import frames
from referee.record import Move
from tests.support.browser import launched

pytestmark = pytest.mark.parallel

ENGINE = Path(rules.__file__).with_name("replay.js")

# In the page: rebuild a batch of docs; per match the start digest and one digest per
# decision (the key-sorted JSON of the sent view and every after view, joined by newlines).
CHECK_JS = """
function resolved(out) {
  const done = [];
  out.views.forEach((e, i) => {
    if ('f' in e) { done[i] = e.f; return; }
    const v = Object.assign({}, done[e.b]);
    for (const k in e.set || {}) v[k] = e.set[k];
    for (const k in e.app || {}) v[k] = done[e.b][k].concat(e.app[k]);
    for (const k of e.del || []) delete v[k];
    done[i] = v;
  });
  return done;
}
async function sha1(text) {
  const d = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, '0')).join('');
}
async function digests(batch) {
  const results = [];
  for (const [doc, options] of batch) {
    let out;
    try { out = G.rebuild(doc, options); } catch (e) { results.push({error: String(e.message)}); continue; }
    const views = resolved(out);
    const texts = views.map((v) => JSON.stringify(v));
    const join = (ids) => ids.map((i) => texts[i]).join('\\n');
    const parts = [join(out.start)].concat(out.sent.map((s, i) => join([s].concat(out.after[i]))));
    results.push({legal: out.legal, digests: await Promise.all(parts.map(sha1))});
  }
  return results;
}
function decisionViews(doc, options, i) {
  const out = G.rebuild(doc, options);
  const views = resolved(out);
  if (i < 0) return {after: out.start.map((k) => views[k])};
  return {sent: views[out.sent[i]], after: out.after[i].map((k) => views[k])};
}
"""

DEFAULT = GAME.check_options(4, {})["deck"]
NO_CARDS = dict.fromkeys(DEFAULT, 0)
# decks that make each rule happen often (missing ranks keep their default count)
DECKS: dict[str, dict[str, int]] = {
    "default": {},
    "skips": {**NO_CARDS, "7": 30, "10": 5, "1": 5},  # Saltaconiglio chains, auto skips and blocks, voids
    "puzzola": {"8": 16, "9": 8, "0000": 10},  # unwinds, Lupo, mid-manche eliminations
    "jolly": {"jollygatto": 24, "0000": 6},  # re-entries, sat_out, nobody loses
    "blockers": {**NO_CARDS, "10": 3, "9": 3, "8": 3, "7": 3, "6": 3, "jollygatto": 1},
    "tiny": {**NO_CARDS, "8": 1, "7": 2, "2": 1, "jollygatto": 2},  # refills with reshuffle false
    "lowonly": {**NO_CARDS, "0000": 5, "jollygatto": 5, "000": 3},
}
# random.seed(int) seeds from abs(int): a negative seed deals as its absolute value
SEEDS = (0, 1, 2**32 - 1, 2**32, 2**53, 2**53 + 1, 2**64 - 1, 2**127, 9_876_543_210_123_456_789, -(2**70 + 3))
MT_EDGES = (0, 1, 2**32 - 1, 2**32, 2**64 - 1, 2**127)


@dataclass
class Case:
    """One match: its label (for a failure), seats, seed, checked options and moves."""

    label: str
    n: int
    seed: int
    options: dict[str, Any]
    moves: list[Move]

    def doc(self) -> dict[str, Any]:
        """The match as a pack holds it: seed as a decimal string, seats, actions, extras."""
        extras = {str(i): m.extras for i, m in enumerate(self.moves) if m.extras}
        doc = {
            "seed": str(self.seed),
            "bots": [f"bot{s}" for s in range(self.n)],
            "seat": [m.seat for m in self.moves],
            "action": [m.action for m in self.moves],
        }
        return {**doc, "extras": extras} if extras else doc


def play(n: int, seed: int, raw: dict[str, Any], pick: random.Random, bold: float, cut: int | None = None) -> Case:
    """A real match through the Python rules, each move drawn among the legal ones
    (the second one, swap/block/draw, with probability ``bold``)."""
    options = GAME.check_options(n, raw)
    state = GAME.setup(n, seed, options)
    moves: list[Move] = []
    while not GAME.is_over(state) and (cut is None or len(moves) < cut):
        (seat,) = GAME.to_act(state)
        legal = GAME.legal(state, seat)
        action = legal[1] if pick.random() < bold else legal[0]
        # Dieci takes no extras: a reply's extra fields are ignored (Game.apply_extras)
        extras = {"claims": [pick.randrange(9)]} if pick.random() < 0.02 else None
        moves.append(Move(seat, len(moves), action, "b", extras=extras))
        state = GAME.apply(state, seat, action)
    label = f"n={n} seed={seed} options={json.dumps(raw, sort_keys=True)} bold={bold} cut={cut}"
    return Case(label, n, seed, options, moves)


def cases() -> list[Case]:
    """Every seat count, option and deck above, seeds near the generator's edges."""
    pick = random.Random(35)
    out: list[Case] = []
    for k in range(54):
        n = 4 + k % 9
        tokens = (1, 2)[k % 2] if n > 9 else (1, 2, 3, 3, 4)[k % 5]
        deck = list(DECKS)[k % len(DECKS)]
        raw: dict[str, Any] = {"tokens": tokens, "deck": DECKS[deck]}
        if deck in ("blockers", "tiny", "lowonly") and sum({**DEFAULT, **DECKS[deck]}.values()) < n + 1:
            raw["deck"] = {**DECKS[deck], "5": n}
        if deck in ("jolly", "lowonly"):  # re-entries make long matches: a few manches show them
            raw["max_manches"] = 12
        seed = SEEDS[k % len(SEEDS)] if k < 2 * len(SEEDS) else pick.getrandbits(64 + k)
        out.append(play(n, seed, raw, pick, (0.3, 0.6, 0.85)[k % 3]))
    for k in range(8):  # a face-up card reached again acts by itself (always swap, always block)
        out.append(play(6 + k % 4, pick.getrandbits(64), {"tokens": 1, "deck": DECKS["skips"]}, pick, 1.0))
    for k in range(30):  # reshuffle false (only below 5 players), refills from the used cards
        raw = {"reshuffle": False, "tokens": 1 + k % 4, "deck": DECKS[list(DECKS)[k % len(DECKS)]]}
        out.append(play(4, pick.getrandbits(40) if k > 5 else SEEDS[k], raw, pick, (0.3, 0.7)[k % 2]))
    for k in range(12):  # max_manches ends the match in a draw among the survivors
        n = 4 + k % 9
        out.append(play(n, pick.getrandbits(70), {"max_manches": 1 + k % 3}, pick, 0.5))
    for k in range(6):  # the moves of part of a match
        out.append(play(5 + k, pick.getrandbits(63), {}, pick, 0.5, cut=3 + 5 * k))
    return out


def canon(view: Any) -> bytes:
    """A view as compact JSON (what the page's ``JSON.stringify`` makes of the same value):
    the keys in the same order too."""
    return orjson.dumps(view)


def expected(case: Case) -> tuple[list[int], list[str], list[list[Any]], set[str]]:
    """Python's legal counts, digests and views (0: every seat's at the deal; i + 1: decision
    i's sent view, then every seat's after it), and what happened (``features``)."""
    state = GAME.setup(case.n, case.seed, case.options)
    start = [GAME.view(state, s) for s in range(case.n)]
    legal, digests, views = [], [hashlib.sha1(b"\n".join(map(canon, start))).hexdigest()], [start]
    seen: set[str] = set()
    last = start[0]
    for f in frames(GAME, case.options, case.seed, case.n, case.moves, after=True):
        group = [f.sent, *(f.after or [])]
        legal.append(f.n_legal)
        digests.append(hashlib.sha1(b"\n".join(map(canon, group))).hexdigest())
        views.append(group)
        if not case.options["reshuffle"] and group[1]["deck_size"] > last["deck_size"]:
            seen.add("refill" if group[1]["manche"] != last["manche"] else "refill mid-manche")
        features(seen, last, group[1:])
        last = group[1]
    return legal, digests, views, seen


def features(seen: set[str], last: dict[str, Any], after: list[dict[str, Any]]) -> None:
    """Add to ``seen`` what the decision from ``last`` (seat 0's view) to ``after`` showed."""
    now = after[0]
    if any("sat_out" in v for v in after):
        seen.add("sat_out")
    events = now["previous_events"] if now["manche"] != last["manche"] else []
    if now["turn"] is None:  # over: this manche's events stay in ``events``
        events = [*events, *now["events"]]
        if len(now["out"]) < now["players"] - 1:
            seen.add("draw among survivors")
    for e in events:
        seen.add(e["type"])
        for flag in ("auto", "blocked", "nobody_loses"):
            if e.get(flag):
                seen.add(f"{e['type']} {flag}")
        if e["type"] == "eliminated" and e["card"] is not None:
            seen.add("eliminated mid-manche")


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    """The first key path where the JSON values ``a`` (JavaScript) and ``b`` (Python) differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: {'missing in JavaScript' if k not in a else 'not in Python'}"
            d = first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := first_difference(x, y, f"{where}[{i}]"))), None)
    return None if a == b and type(a) is type(b) else f"{where}: JavaScript {a!r}, Python {b!r}"


def explain(page: Any, case: Case, i: int, python: list[list[Any]]) -> str:
    """Decision ``i``'s (or the deal's, -1) first difference between the page and Python."""
    js = page.evaluate("([d, o, i]) => decisionViews(d, o, i)", [case.doc(), case.options, i])
    group = json.loads(json.dumps(python[i + 1]))
    py = {"after": group} if i < 0 else {"sent": group[0], "after": group[1:]}
    where = "the deal" if i < 0 else f"decision {i} (seat {case.moves[i].seat}, {case.moves[i].action!r})"
    return f"{case.label}: {where}: {first_difference(js, py) or 'same values, other key order'}"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One Chromium page (file://, where crypto.subtle exists) holding ``G.rebuild``."""
    blank = tmp_path_factory.mktemp("replay_js") / "blank.html"
    blank.write_text("<!doctype html><title>dieci replay</title>")
    with launched() as browser:
        p = browser.new_page()
        p.goto(blank.as_uri())
        p.add_script_tag(content="const G = {};\n" + ENGINE.read_text())
        p.add_script_tag(content=CHECK_JS)
        yield p


def check(page: Any, batch: list[Case]) -> set[str]:
    """Every view and legal count of every match of ``batch`` equals Python's; returns
    what happened in the matches."""
    with ThreadPoolExecutor(1) as python:  # Python's side meanwhile, on the other core
        wanted = python.submit(lambda: [expected(c) for c in batch])
        got = page.evaluate("(b) => digests(b)", [[c.doc(), c.options] for c in batch])
        sides = wanted.result()
    seen: set[str] = set()
    for case, js, (legal, digests, views, happened) in zip(batch, got, sides, strict=True):
        assert "error" not in js, f"{case.label}: the page refused the match: {js.get('error')}"
        seen |= happened
        assert js["legal"] == legal, f"{case.label}: legal counts differ"
        assert len(js["digests"]) == len(digests), (
            f"{case.label}: {len(js['digests']) - 1} decisions, not {len(digests) - 1}"
        )
        for i, (a, b) in enumerate(zip(js["digests"], digests)):
            assert a == b, explain(page, case, i - 1, views)
    return seen


def test_every_view_of_many_matches_equals_python(page: Any) -> None:
    """Each match's rebuilt views and legal counts are Python's, at every seat count and option."""
    batch = cases()
    assert {c.n for c in batch} == set(range(4, 13))
    rules = check(page, batch)
    wanted = {"keep", "ask", "accept", "block", "block auto", "skip", "skip auto", "void", "unwind", "token"}
    wanted |= {"eliminated", "eliminated mid-manche", "draw", "draw blocked", "showdown", "showdown nobody_loses"}
    wanted |= {"reenter", "sat_out", "refill", "draw among survivors"}
    assert wanted <= rules, f"no match reached {sorted(wanted - rules)}"


def test_deals_at_generator_edges(page: Any) -> None:
    """Seeds 0, 1, 2**32-1, 2**32, 2**64-1 and 2**127 deal as CPython's Random does (the
    whole deck shuffled once, then the deals of every manche and the dealer's draws)."""
    pick = random.Random(7)
    batch = [
        play(n, seed, raw, pick, 0.5) for seed in MT_EDGES for n, raw in ((4, {"reshuffle": False}), (9, {"tokens": 2}))
    ]
    batch += [Case(f"{c.label} (deal only)", c.n, c.seed, c.options, []) for c in batch]
    check(page, batch)
    # the seeds differ by one bit or one word: their deals must differ too
    deals = {json.dumps(expected(c)[2][0]) for c in batch if not c.moves}
    assert len(deals) == len(MT_EDGES) * 2


def test_refuses_what_python_refuses(page: Any) -> None:
    """A move by the wrong seat or an action the rules refuse is refused by both."""
    case = play(5, 2**60 + 3, {}, random.Random(3), 0.5)
    wrong_seat = [*case.moves[:4], Move((case.moves[4].seat + 1) % 5, 4, case.moves[4].action, "b")]
    bad_action = [*case.moves[:4], Move(case.moves[4].seat, 4, "fold", "b")]
    for moves in (wrong_seat, bad_action):
        bad = Case(case.label, case.n, case.seed, case.options, moves)
        with pytest.raises(ReplayError):
            list(frames(GAME, bad.options, bad.seed, bad.n, bad.moves, after=True))
        (js,) = page.evaluate("(b) => digests(b)", [[bad.doc(), bad.options]])
        assert "decision 5" in js.get("error", ""), js
