"""referee/games/nimmt_plus/replay.js in the system Chromium: ``G.rebuild(doc, options)``
rebuilds from a match's moves every view ``frames(..., after=True)`` yields in Python.

Matches are played through the Python rules with seeded random legal moves (every variant,
``zero_heads`` on and off, 2-7 seats, seeds 0 and past 2**53), plus the sample leaderboard's
real matches; all are rebuilt in one page, a batch per evaluate, and every start, sent and
after view (as JSON: same keys, values and types) and every legal count is compared.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from referee.errors import ReplayError
from referee.games.nimmt_plus.rules import GAME, VARIANTS
from referee.match.frames import frames
from referee.record import BOT, Move
from referee.store import replay_data, transcripts
from referee.store.matches import match_of
from referee.store.tournament_file import load_output_dir
from tests.support.browser import launched

pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "referee" / "games" / "nimmt_plus" / "replay.js"
LEADERBOARD = ROOT / "leaderboards" / "nimmt_plus"
EDGE_SEEDS = [0, 1, 2**32 - 1, 2**32, 2**53, 2**53 + 1, 2**64 - 1, 2**127, -(2**70) - 3]
SORTED = orjson.OPT_SORT_KEYS
# reply fields a bot may send along (the game takes none: Game.apply_extras keeps the state)
EXTRAS: list[dict[str, Any]] = [{"claims": [1, 2]}, {"claims": "none"}, {"note": None}, {"x": {"y": [0]}}]


@dataclass
class Case:
    """One match to rebuild: its name, seats, seed, checked options and moves."""

    name: str
    n: int
    seed: int
    options: dict[str, Any]
    moves: list[Move]

    def doc(self) -> dict[str, Any]:
        """The pack's per-match document (seed as a decimal string, extras by index)."""
        out: dict[str, Any] = {
            "seed": str(self.seed),
            "bots": [f"bot-{s}" for s in range(self.n)],
            "seat": [m.seat for m in self.moves],
            "action": [m.action for m in self.moves],
        }
        extras = {str(i): m.extras for i, m in enumerate(self.moves) if m.extras}
        if extras:
            out["extras"] = extras
        return out


def played(name: str, n: int, seed: int, settings: Mapping[str, Any], rng: random.Random, extras: bool = False) -> Case:
    """A whole match through the Python rules, each move drawn from the legal ones by ``rng``;
    with ``extras``, some decisions carry reply fields the game does not take."""
    options = GAME.check_options(n, settings)
    state = GAME.setup(n, seed, options)
    moves: list[Move] = []
    while not GAME.is_over(state):
        for s in GAME.to_act(state):
            action = rng.choice(GAME.legal(state, s))
            state = GAME.apply(state, s, action)
            more: dict[str, Any] | None = None
            if extras and rng.random() < 0.1:
                more = rng.choice(EXTRAS)
            moves.append(Move(s, len(moves), action, BOT, extras=more))
    return Case(name, n, seed, options, moves)


def random_cases() -> list[Case]:
    """Every variant at every seat count, zero_heads 0 and 3, varied seeds (0, past 2**53,
    past 2**64), some with extras; and more of the usual table (plus, 4 seats)."""
    rng = random.Random(35)
    cases = []
    for variant in VARIANTS:
        for n in range(2, 8):
            for k in range(3 if n <= 4 else 1):
                seed = [rng.getrandbits(130), 0, 2**53 + rng.getrandbits(20)][(k + n) % 3]
                settings = {"variant": variant, "zero_heads": 3 if (k + n) % 2 else 0}
                cases.append(played(f"{variant}/{n}/{k}", n, seed, settings, rng, extras=k == 1))
    for k in range(10):
        cases.append(played(f"plus/4/r{k}", 4, rng.getrandbits(63), {}, rng))
    return cases


def leaderboard_cases() -> Iterator[Case]:
    """The real matches of the sample 6 nimmt! leaderboard (read, never changed)."""
    tournament, records = load_output_dir(LEADERBOARD)
    by_id = {str(r["id"]): r for r in records}
    for tr in transcripts.read_all(LEADERBOARD):
        m = match_of(GAME, tournament["settings"], by_id[tr.id], tr)
        yield Case(f"{LEADERBOARD.name}/{tr.id}", len(m.record["bots"]), int(m.record["seed"]), m.options, tr.moves)


def resolved(entries: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Every view of a replay data ``views`` list, whole (the viewer's V(), in Python)."""
    out: list[Any] = []
    for e in entries:
        if "f" in e:
            out.append(e["f"])
            continue
        base = out[e["b"]]
        v = dict(base)
        v.update(e.get("set", {}))
        for k, tail in e.get("app", {}).items():
            v[k] = base[k] + tail
        for k in e.get("del", []):
            del v[k]
        out.append(v)
    return out


def difference(js: Any, py: Any) -> str:
    """The first key (or index) where ``js`` and ``py`` differ, with both values."""
    if isinstance(js, dict) and isinstance(py, dict):
        for k in list(py) + [k for k in js if k not in py]:
            if k not in js or k not in py or orjson.dumps(js[k], option=SORTED) != orjson.dumps(py[k], option=SORTED):
                return f"key {k!r}: JS {_short(js.get(k, '<missing>'))} != Python {_short(py.get(k, '<missing>'))}"
    return f"JS {_short(js)} != Python {_short(py)}"


def _short(value: Any) -> str:
    """``value`` as JSON, cut to 300 characters."""
    return json.dumps(value)[:300]


def mismatch(case: Case, out: Mapping[str, Any]) -> str | None:
    """The first difference of the JS rebuild ``out`` from Python's frames, or None."""
    where = f"match {case.name} (seed {case.seed}, {case.n} seats, {case.options})"
    if "error" in out:
        return f"{where}: the JS refused the match: {out['error']}"
    views = resolved(out["views"])
    blobs: dict[int, bytes] = {}
    # (JS index, Python view) pairs already found equal, by id of the Python view (kept
    # alive here, so no id is reused): frames() sends a seat the very view object it made
    # after the decision before
    known: dict[int, tuple[int, Any]] = {}
    last: dict[int, tuple[int, Any]] = {}  # per seat, the pair checked last

    def check(index: int, expected: Any, seat: int, what: str) -> str | None:
        """None when the JS view ``index`` is ``expected`` (seat ``seat``'s), else the difference."""
        if known.get(id(expected), (None, None))[0] == index:
            return None
        prev = last.get(seat)
        # the same JS index as before and a Python view equal to the one checked then:
        # checked already (Python's views never trade a type for an equal one, True for 1)
        if not (prev is not None and prev[0] == index and prev[1] == expected):
            if index not in blobs:
                blobs[index] = orjson.dumps(views[index], option=SORTED)
            if blobs[index] != orjson.dumps(expected, option=SORTED):
                return f"{where}: {what}: {difference(views[index], expected)}"
        known[id(expected)] = last[seat] = (index, expected)
        return None

    state = GAME.setup(case.n, case.seed, case.options)
    for s in range(case.n):
        if bad := check(out["start"][s], GAME.view(state, s), s, f"seat {s}'s view at the deal"):
            return bad
    count = 0
    for f in frames(GAME, case.options, case.seed, case.n, case.moves, after=True):
        i, s, count = f.index, f.move.seat, f.index + 1
        if i >= len(out["sent"]):
            return f"{where}: the JS stops after {i} decisions, Python goes on"
        if len(out["after"][i]) != case.n:
            return f"{where}: decision {i + 1}: {len(out['after'][i])} views after it, not one per seat"
        if out["legal"][i] != f.n_legal:
            return f"{where}: decision {i + 1}: {out['legal'][i]} legal actions, Python {f.n_legal}"
        if bad := check(out["sent"][i], f.sent, s, f"decision {i + 1}: the view seat {s} was sent"):
            return bad
        for k, view in enumerate(f.after or ()):
            if bad := check(out["after"][i][k], view, k, f"decision {i + 1}: seat {k}'s view after it"):
                return bad
    lengths = {len(out[key]) for key in ("sent", "after", "legal")}
    if lengths != {count}:
        return f"{where}: the JS has {sorted(lengths)} decisions, Python {count}"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """The system Chromium, once for the module."""
    with launched() as b:
        yield b


@pytest.fixture(scope="module")
def rebuild(browser: Any) -> Iterator[Any]:
    """``rebuild(pairs)``: G.rebuild over a batch of (doc, options) in one Chromium page."""
    page = browser.new_page()
    page.set_content("<!doctype html><title>replay.js</title>")
    # as the viewer inlines it: inside an IIFE where `const G={}` exists
    page.add_script_tag(
        content="window.rebuildAll=(()=>{const G={};\n"
        + SCRIPT.read_text(encoding="utf-8")
        + "\nreturn batch=>JSON.stringify(JSON.parse(batch).map(([d,o])=>"
        "{try{return G.rebuild(d,o);}catch(e){return {error:String(e&&e.message)};}}));})();"
    )

    def run(pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
        """G.rebuild's output (or {"error": message}) for each pair, in order (passed and
        returned as JSON text: Playwright's checks of a structured argument cost more)."""
        out: list[dict[str, Any]] = []
        for k in range(0, len(pairs), 40):
            out += orjson.loads(page.evaluate("batch => window.rebuildAll(batch)", json.dumps(pairs[k : k + 40])))
        return out

    yield run
    page.close()


def check_all(rebuild: Any, cases: Sequence[Case]) -> None:
    """Rebuild ``cases`` in the page and fail on the first difference from Python."""
    outs = rebuild([(c.doc(), c.options) for c in cases])
    for case, out in zip(cases, outs, strict=True):
        bad = mismatch(case, out)
        assert bad is None, bad


def test_random_matches_rebuild_every_view(rebuild: Any) -> None:
    """Every variant, option and seat count: all views and legal counts equal frames()'s."""
    cases = random_cases()
    assert {(c.options["variant"], c.options["zero_heads"]) for c in cases} == {
        (v, z) for v in VARIANTS for z in (0, 3)
    }
    assert {c.n for c in cases} == set(range(2, 8))
    assert any(c.seed >= 2**64 for c in cases) and any(c.seed == 0 for c in cases)
    assert any(m.extras for c in cases for m in c.moves)
    check_all(rebuild, cases)


def test_sample_leaderboards_rebuild_every_view(rebuild: Any) -> None:
    """The real matches of the sample leaderboard (the bots' own choices) rebuild exactly,
    and into the very view table its published replay data holds (replay_data.make's)."""
    cases = list(leaderboard_cases())[::2]  # every other: 20 of its 40 (the module's time)
    assert len(cases) >= 20
    outs = rebuild([(c.doc(), c.options) for c in cases])
    for case, out in zip(cases, outs, strict=True):
        bad = mismatch(case, out)
        assert bad is None, bad
        published = replay_data.read(LEADERBOARD, case.name.split("/")[-1])
        for key in ("views", "start", "sent", "after", "legal"):
            assert out[key] == published[key], f"{case.name}: {key} differs from the published replay data"


def test_deal_of_edge_seeds(rebuild: Any) -> None:
    """The deal of every variant for MT19937 seeding edge cases (0, word edges, 2**127,
    negative: Python seeds with the absolute value), and one decision past it."""
    cases = []
    for seed in EDGE_SEEDS:
        for variant in VARIANTS:
            n = 3 if variant == "plus_dealt_zeros" else 5
            options = GAME.check_options(n, {"variant": variant})
            state = GAME.setup(n, seed, options)
            s = GAME.to_act(state)[0]
            cases.append(Case(f"{variant}/{seed}", n, seed, options, [Move(s, 0, GAME.legal(state, s)[-1], BOT)]))
    check_all(rebuild, cases)


def test_partial_and_overlong_moves(rebuild: Any) -> None:
    """Moves that stop inside a simultaneous turn, or go on past the match's end, rebuild
    as frames() reads them (up to the last move, up to the end)."""
    rng = random.Random(7)
    whole = played("cut", 5, 2**60 + 11, {"variant": "plus_dealt_zeros"}, rng)
    simple = played("simple", 3, 99, {"variant": "simple"}, rng)
    cases = [
        Case("cut", whole.n, whole.seed, whole.options, whole.moves[:7]),
        Case("none", whole.n, whole.seed, whole.options, []),
        Case("overlong", simple.n, simple.seed, simple.options, simple.moves + simple.moves[:3]),
    ]
    check_all(rebuild, cases)


def test_refused_moves_are_refused(rebuild: Any) -> None:
    """A move out of turn or not in the hand: Python's frames refuses it, so does the JS."""
    rng = random.Random(8)
    base = played("base", 4, 12345, {}, rng)
    wrong_seat = list(base.moves)
    wrong_seat[2] = Move(0, 2, wrong_seat[2].action, BOT)
    not_held = list(base.moves)
    not_held[1] = Move(not_held[1].seat, 1, [105], BOT)
    unsorted = list(base.moves)
    unsorted[0] = Move(0, 0, [3, 1], BOT)
    cases = [
        Case(name, 4, base.seed, base.options, moves)
        for name, moves in (("seat", wrong_seat), ("card", not_held), ("order", unsorted))
    ]
    outs = rebuild([(c.doc(), c.options) for c in cases])
    for case, out in zip(cases, outs, strict=True):
        with pytest.raises(ReplayError):
            list(frames(GAME, case.options, case.seed, case.n, case.moves, after=True))
        assert "error" in out, f"{case.name}: the JS took a move the rules refuse"
    assert outs[0]["error"].startswith("decision 3 is seat 0's")
    assert outs[1]["error"].startswith("decision 2 is refused")


def test_the_comparison_finds_a_changed_view(rebuild: Any) -> None:
    """The checker is no rubber stamp: one card changed in a stored view, or a seat's
    after-index pointing elsewhere, is reported with the match, the decision and the key."""
    case = played("probe", 4, 31337, {}, random.Random(9))
    (out,) = rebuild([(case.doc(), case.options)])
    assert mismatch(case, out) is None
    changed = json.loads(json.dumps(out))
    i = 20
    k = changed["after"][i][1]
    changed["views"].append({"b": k, "set": {"totals": [9, 9, 9, 9]}})
    changed["after"][i][1] = len(changed["views"]) - 1
    bad = mismatch(case, changed)
    assert bad is not None and f"decision {i + 1}: seat 1's view after it: key 'totals'" in bad
    changed = json.loads(json.dumps(out))
    changed["legal"][5] += 1
    assert "decision 6: " in (mismatch(case, changed) or "")


def test_the_file_sets_g_rebuild_and_no_global(browser: Any) -> None:
    """Loaded as a plain script after ``const G={}``, the file adds G.rebuild and no global
    (the viewer inlines it in its own scope), and runs with the defaults of the options."""
    page = browser.new_page()
    page.set_content(
        "<!doctype html><title>globals</title>"
        "<script>window.before=Object.getOwnPropertyNames(window);const G={};</script>"
    )
    page.add_script_tag(content=SCRIPT.read_text(encoding="utf-8"))
    added = page.evaluate("() => Object.getOwnPropertyNames(window).filter(k => !window.before.includes(k))")
    assert added == ["before"], f"replay.js made globals: {added}"
    assert page.evaluate("() => Object.keys(G)") == ["rebuild"]
    case = played("defaults", 4, 2**64 + 5, {}, random.Random(10))
    out = page.evaluate("doc => JSON.stringify(G.rebuild(doc, {}))", case.doc())
    page.close()
    assert mismatch(case, json.loads(out)) is None
