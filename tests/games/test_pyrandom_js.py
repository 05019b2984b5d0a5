"""``referee/games/pyrandom.js`` alone in the system Chromium against CPython: for seeds at
the generator's edges (0, 1, negative, word boundaries, past 2**53, 2**127, a key longer
than the state) and random big ones, thousands of draws (past 624 words: every twist and the
tempering run again and again) of getrandbits(k) for k 1..32, random() and randbelow(n),
then shuffles of 0 to 600 items three times over, all equal ``random.Random(seed)`` and
``referee.games.base.shuffle`` draw for draw; and the file defines ``PyRandom`` only."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from referee.games.base import shuffle
from tests.support.browser import launched
from tests.support.replay_js import GAMES, SHARED, top_level

pytestmark = pytest.mark.parallel

PYRANDOM = GAMES / "pyrandom.js"
SEEDS = [0, 1, -5, 2**32 - 1, 2**32, 2**53 + 1, 2**64 - 1, 2**127, -(2**70) - 3]
SIZES = [0, 1, 2, 7, 104, 600]
BOUNDS = [1, 2, 3, 7, 104, 1000, 2**31 - 1, 2**31, 2**32 - 1]  # randbelow(n) for each
ROUNDS = 100  # of 32 getrandbits, a random() and the randbelows: about 3,700 words a seed

# The same program on both sides: rounds of draws, then the shuffles, then one more word.
DRAW = """([seed, rounds, bounds, sizes]) => {
  const g = PyRandom.seeded(seed);
  const draws = [];
  for (let r = 0; r < rounds; r++) {
    for (let k = 1; k <= 32; k++) draws.push(g.getrandbits(k));
    draws.push(g.random());
    for (const n of bounds) draws.push(g.randbelow(n));
  }
  const shuffles = [];
  for (let t = 0; t < 3; t++) {
    for (const size of sizes) {
      const x = Array.from({length: size}, (_, i) => i);
      g.shuffle(x);
      shuffles.push(x);
    }
  }
  draws.push(g.getrandbits(32));
  return JSON.stringify({draws, shuffles});
}"""


def cpython(seed: int) -> dict[str, Any]:
    """The program of ``DRAW`` run by ``random.Random(seed)`` and ``referee.games.base.shuffle``."""
    g = random.Random(seed)
    draws: list[Any] = []
    for _ in range(ROUNDS):
        draws += [g.getrandbits(k) for k in range(1, 33)]
        draws.append(g.random())
        draws += [g._randbelow(n) for n in BOUNDS]
    shuffles = []
    for _ in range(3):
        for size in SIZES:
            x = list(range(size))
            shuffle(g, x)
            shuffles.append(x)
    draws.append(g.getrandbits(32))
    return {"draws": draws, "shuffles": shuffles}


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    """One Chromium page with pyrandom.js loaded as a plain script (the globals it made noted)."""
    with launched() as browser:
        p = browser.new_page()
        p.set_content(
            "<!doctype html><title>pyrandom</title><script>window.before=Object.getOwnPropertyNames(window)</script>"
        )
        p.add_script_tag(content=PYRANDOM.read_text(encoding="utf-8"))
        yield p


def big_seeds() -> list[int]:
    """Random seeds of many sizes, one with more 32-bit words than MT19937 has (624)."""
    rng = random.Random(2026)
    return [rng.getrandbits(bits) for bits in (31, 64, 96, 200, 1000)] + [rng.getrandbits(20000) | 1 << 19999]


@pytest.mark.parametrize(
    "seed", SEEDS + big_seeds(), ids=lambda s: str(s) if abs(s) < 2**130 else f"{s.bit_length()} bits"
)
def test_draws_and_shuffles_equal_cpython(page: Any, seed: int) -> None:
    """Every draw and shuffle of the seed's generator is CPython's."""
    # past 4,300 digits Python writes no decimal text: such a seed crosses as hex (BigInt reads both)
    text = str(seed) if seed.bit_length() < 4000 else hex(seed)
    label = text if len(text) < 50 else f"of {seed.bit_length()} bits"
    js = json.loads(page.evaluate(DRAW, [text, ROUNDS, BOUNDS, SIZES]))
    py = cpython(seed)
    assert len(js["draws"]) == len(py["draws"]) > 3000
    bad = next(
        (i for i, (a, b) in enumerate(zip(js["draws"], py["draws"], strict=True)) if a != b or type(a) is not type(b)),
        None,
    )
    assert bad is None, f"seed {label}: draw {bad}: JS {js['draws'][bad]!r}, CPython {py['draws'][bad]!r}"
    for i, (a, b) in enumerate(zip(js["shuffles"], py["shuffles"], strict=True)):
        assert a == b, f"seed {label}: shuffle {i} (of {len(b)} items) differs"
    assert sorted(py["shuffles"][-1]) == list(range(600)) and py["shuffles"][-1] != py["shuffles"][-7]


def test_the_seed_may_be_text_a_number_or_a_bigint(page: Any) -> None:
    """``seeded`` takes the decimal text a pack holds, a number or a BigInt: one generator."""
    same = page.evaluate(
        """() => [["12345", 12345, 12345n, " 12345 "], ["-9", -9, 9n, "9"]].map((forms) =>
             new Set(forms.map((s) => { const g = PyRandom.seeded(s); return [g.getrandbits(32), g.random()].join(); })).size)"""
    )
    assert same == [1, 1]
    g = random.Random(12345)
    assert page.evaluate("() => PyRandom.seeded('12345').getrandbits(32)") == g.getrandbits(32)


def test_out_of_range_draws_are_refused(page: Any) -> None:
    """getrandbits outside 1..32 and randbelow outside 1..2**32-1 (or not whole) throw, never draw wrongly."""
    refused = page.evaluate(
        """() => [[0], [33], [1.5]].map(([k]) => { try { PyRandom.seeded(1).getrandbits(k); return null; }
             catch (e) { return e instanceof RangeError; } }).concat([0, -1, 2.5, 2 ** 32].map((n) => {
             try { PyRandom.seeded(1).randbelow(n); return null; } catch (e) { return e instanceof RangeError; } }))"""
    )
    assert refused == [True] * 7


def test_the_shared_files_define_one_name_each(page: Any) -> None:
    """pyrandom.js (and viewtable.js) make no property of window and, at their top level, one
    constant each; every engine is one IIFE: the viewer inlines them all in one scope."""
    added = page.evaluate("() => Object.getOwnPropertyNames(window).filter((k) => !window.before.includes(k))")
    assert added == ["before"]
    assert page.evaluate("() => Object.keys(PyRandom)") == ["seeded"]
    for path in SHARED:
        name = path.stem.replace("pyrandom", "PyRandom").replace("viewtable", "ViewTable")
        assert top_level(path.read_text(encoding="utf-8")) == [f"const {name} = (function () {{", "})();"], path.name
    for engine in sorted(GAMES.glob("*/replay.js")):
        lines = top_level(engine.read_text(encoding="utf-8"))
        assert lines in (["G.rebuild = (function () {", "})();"], ["(function () {", "})();"]), f"{engine}: {lines}"
