"""The games' replay engines (``referee/games/<id>/replay.js``) in the system Chromium, for
their tests: a page holding ``G.rebuild`` loaded as the viewer inlines it (the shared files
``pyrandom.js`` and ``viewtable.js`` first, then the engine, inside one function scope), a
match's doc, batches of rebuilds, and the comparison of every rebuilt view and legal count
with what ``frames(..., after=True)`` yields in Python, naming the first difference.

Views cross the page's wire as the CRC-32 and length of their compact JSON (UTF-8); the
page keeps the texts of the last batch and Python fetches one only where it differs.
"""

from __future__ import annotations

import contextlib
import functools
import json
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from referee.games.base import Game
from referee.match.frames import Frame, frames
from referee.record import Move
from tests.support.browser import launched

GAMES = Path(__file__).resolve().parents[2] / "referee" / "games"
# what every engine may use, inlined before it in this order
SHARED = (GAMES / "pyrandom.js", GAMES / "viewtable.js")
BATCH = 24  # docs per page.evaluate: the texts the page keeps for one batch stay modest

# Runs the source inside a function where ``G = {}`` exists (the viewer's IIFE); answers the
# globals it added (the harness's own ``__G`` aside).
LOAD = """(src) => {
  const before = new Set(Object.getOwnPropertyNames(window));
  const G = {};
  new Function("G", src)(G);
  window.__G = G;
  return Object.getOwnPropertyNames(window).filter((k) => !before.has(k) && k !== "__G");
}"""

# Rebuilds a batch: the output as JSON text, or {"error": message} for a refusal.
RAW = """(text) => JSON.stringify(JSON.parse(text).map(([doc, options]) => {
  try { return window.__G.rebuild(doc, options); } catch (e) { return {error: String(e && e.message)}; }
}))"""

# Rebuilds a batch; every view resolved whole (delta entries as replay_data defines them)
# and kept as JSON text in ``window.__texts``, sent back as its CRC-32 and UTF-8 length.
DIGESTS = """(text) => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  const utf8 = new TextEncoder();
  const digest = (t) => {
    const bytes = utf8.encode(t);
    let c = 0xffffffff;
    for (let i = 0; i < bytes.length; i++) c = table[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
    return [(c ^ 0xffffffff) >>> 0, bytes.length];
  };
  window.__texts = [];
  return JSON.stringify(JSON.parse(text).map(([doc, options]) => {
    let r;
    try { r = window.__G.rebuild(doc, options); } catch (e) { window.__texts.push([]); return {error: String(e && e.message)}; }
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
    return {views: texts.map(digest), start: r.start, sent: r.sent, after: r.after, legal: r.legal};
  }));
}"""

Digest = list[int]  # a view's compact JSON: its CRC-32 and its length in bytes


def engine_files(game_id: str) -> list[Path]:
    """The files the viewer inlines for ``game_id``'s engine, in order."""
    return [*SHARED, GAMES / game_id / "replay.js"]


def script(game_id: str) -> str:
    """The shared files and ``game_id``'s engine as one source, as the viewer inlines them."""
    return "\n".join(p.read_text(encoding="utf-8") for p in engine_files(game_id))


def top_level(text: str) -> list[str]:
    """The lines of a JS file that start a statement at its top level (no indent, not a
    comment): a file wrapped in one IIFE has its first and last line only."""
    return [line for line in text.splitlines() if line[:1] not in ("", " ", "/", "\t")]


@dataclass
class Case:
    """One match to rebuild: its label (for a failure), seats, seed, checked options and moves."""

    label: str
    n: int
    seed: int
    options: dict[str, Any]
    moves: list[Move]

    def doc(self) -> dict[str, Any]:
        """What a pack holds of the match: seed (a decimal string), bots, seats, actions, extras."""
        out: dict[str, Any] = {
            "seed": str(self.seed),
            "bots": [f"bot{s}" for s in range(self.n)],
            "seat": [m.seat for m in self.moves],
            "action": [m.action for m in self.moves],
        }
        extras = {str(i): m.extras for i, m in enumerate(self.moves) if m.extras}
        if extras:
            out["extras"] = extras
        return out


def digest(view: Any) -> Digest:
    """The digest of ``view`` as the page makes it (orjson writes compact JSON, as JSON.stringify does)."""
    text = orjson.dumps(view)
    return [zlib.crc32(text), len(text)]


def resolve(entries: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Every view of a replay data ``views`` list, whole (the viewer's V(), in Python)."""
    out: list[Any] = []
    for e in entries:
        if "f" in e:
            out.append(e["f"])
            continue
        base = out[e["b"]]
        v = {**base, **e.get("set", {})}
        v.update({k: base[k] + tail for k, tail in e.get("app", {}).items()})
        for k in e.get("del", []):
            del v[k]
        out.append(v)
    return out


@dataclass
class Rebuilt:
    """One rebuild (or its refusal, ``error``): every view as its digest, its text on demand."""

    error: str | None = None
    digests: list[Digest] = field(default_factory=list)
    start: list[int] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    after: list[list[int]] = field(default_factory=list)
    legal: list[int] = field(default_factory=list)
    text: Callable[[int], str] = str

    @classmethod
    def of(cls, out: Mapping[str, Any]) -> Rebuilt:
        """A raw output of ``G.rebuild`` (or ``{"error": ...}``), its views resolved in Python."""
        if "error" in out:
            return cls(error=str(out["error"]))
        texts = [orjson.dumps(v) for v in resolve(out["views"])]
        sums = [[zlib.crc32(t), len(t)] for t in texts]
        return cls(None, sums, out["start"], out["sent"], out["after"], out["legal"], lambda i: texts[i].decode())


class EnginePage:
    """One Chromium page holding a game's ``G.rebuild``, loaded as the viewer loads it."""

    def __init__(self, browser: Any, game_id: str) -> None:
        self.browser = browser
        self.page = browser.new_page()
        self.added: list[str] = self.page.evaluate(LOAD, script(game_id))  # globals made: none expected
        self.keys: list[str] = self.page.evaluate("Object.keys(window.__G)")  # what it set on G

    def raw(self, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[dict[str, Any]]:
        """``G.rebuild``'s output (or ``{"error": message}``) for each (doc, options), in order."""
        out: list[dict[str, Any]] = []
        for k in range(0, len(pairs), BATCH):
            out += orjson.loads(self.page.evaluate(RAW, json.dumps(pairs[k : k + BATCH])))
        return out

    def digested(self, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[Rebuilt]:
        """The rebuild of at most ``BATCH`` pairs as digests (the texts stay in the page)."""
        got = orjson.loads(self.page.evaluate(DIGESTS, json.dumps(pairs)))
        return [self._rebuilt(k, g) for k, g in enumerate(got)]

    def _rebuilt(self, k: int, g: dict[str, Any]) -> Rebuilt:
        """Batch item ``k``'s answer ``g`` as a ``Rebuilt`` fetching its texts from the page."""
        if "error" in g:
            return Rebuilt(error=g["error"])

        def text(i: int) -> str:
            out: str = self.page.evaluate("([k, i]) => window.__texts[k][i]", [k, i])
            return out

        return Rebuilt(None, g["views"], g["start"], g["sent"], g["after"], g["legal"], text)


@contextlib.contextmanager
def opened(game_id: str) -> Iterator[EnginePage]:
    """The system Chromium with one page holding ``game_id``'s engine, closed on exit."""
    with launched() as browser:
        yield EnginePage(browser, game_id)


@dataclass
class Want:
    """What ``frames`` gives for one case, every view as its digest."""

    start: list[Digest]
    sent: list[Digest]
    after: list[list[Digest]]
    legal: list[int]


def want(game: Game, case: Case, watch: Callable[[Case, list[Frame]], None] | None = None) -> Want:
    """Python's side of ``case``: the start views, then every decision's frame (shown to ``watch``)."""
    state = game.setup(case.n, case.seed, case.options)
    fs = list(frames(game, case.options, case.seed, case.n, case.moves, after=True))
    if watch is not None:
        watch(case, fs)
    known: dict[int, Digest] = {}  # frames() passes a seat's unchanged view on: digest it once

    def of(view: Any) -> Digest:
        if id(view) not in known:
            known[id(view)] = digest(view)
        return known[id(view)]

    return Want(
        [digest(game.view(state, s)) for s in range(case.n)],
        [of(f.sent) for f in fs],
        [[of(v) for v in f.after or ()] for f in fs],
        [f.n_legal for f in fs],
    )


def first_difference(want: Any, got: Any, at: str = "") -> str | None:
    """Where JSON values ``want`` (Python) and ``got`` (JS) first differ (values, types, keys;
    not the order of keys), as ``key <path>: ...``; None when equal."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in [*want, *(k for k in got if k not in want)]:
            if k not in want or k not in got:
                return f"key {at}{k!r}: {'missing in JS' if k not in got else 'not in Python'}"
            if d := first_difference(want[k], got[k], f"{at}{k!r}" if not at else f"{at}[{k!r}]"):
                return d
        return None
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return next((d for i, (w, g) in enumerate(zip(want, got)) if (d := first_difference(w, g, f"{at}[{i}]"))), None)
    if want == got and type(want) is type(got):
        return None
    return f"key {at or '(the view)'}: JS {json.dumps(got)[:300]} != Python {json.dumps(want)[:300]}"


def mismatch(game: Game, case: Case, w: Want, got: Rebuilt) -> str | None:
    """The first difference of the rebuild ``got`` from Python's ``w`` for ``case``, or None."""
    where = f"match {case.label} (seed {case.seed}, {case.n} seats)"
    if got.error is not None:
        return f"{where}: the JS refused the match: {got.error}"
    lengths = {len(x) for x in (got.sent, got.after, got.legal)}
    if lengths != {len(w.legal)} or len(got.start) != case.n:
        return (
            f"{where}: the JS has {sorted(lengths)} decisions and {len(got.start)} start views, Python {len(w.legal)}"
        )
    fs = functools.cache(lambda: list(frames(game, case.options, case.seed, case.n, case.moves, after=True)))

    def check(index: Any, expected: Digest, what: str, python: Callable[[], Any]) -> str | None:
        if not (isinstance(index, int) and 0 <= index < len(got.digests)):
            return f"{where}: {what}: view index {index} out of range"
        if got.digests[index] == expected:
            return None
        diff = first_difference(python(), json.loads(got.text(index)))
        return f"{where}: {what}: {diff or 'same values, other key order'}"

    state = functools.cache(lambda: game.setup(case.n, case.seed, case.options))
    for s in range(case.n):
        if bad := check(got.start[s], w.start[s], f"seat {s}'s view at the deal", lambda s=s: game.view(state(), s)):
            return bad
    for i, seat in enumerate(m.seat for m in case.moves[: len(w.legal)]):
        if got.legal[i] != w.legal[i]:
            return f"{where}: decision {i + 1}: {got.legal[i]} legal actions, Python {w.legal[i]}"
        if bad := check(
            got.sent[i], w.sent[i], f"decision {i + 1}: the view seat {seat} was sent", lambda i=i: fs()[i].sent
        ):
            return bad
        if len(got.after[i]) != case.n:
            return f"{where}: decision {i + 1}: {len(got.after[i])} views after it, not one per seat"
        for s, d in enumerate(w.after[i]):
            what = f"decision {i + 1}: seat {s}'s view after it"
            if bad := check(got.after[i][s], d, what, lambda i=i, s=s: (fs()[i].after or [])[s]):
                return bad
    return None


def check_all(
    engine: EnginePage, game: Game, cases: Sequence[Case], watch: Callable[[Case, list[Frame]], None] | None = None
) -> int:
    """Rebuild every case in the page and fail on the first difference from Python's frames
    (Python's side on a thread meanwhile; ``watch`` sees each case's frames); the decisions compared."""
    decisions = 0
    with ThreadPoolExecutor(1) as python:
        wants = [python.submit(want, game, case, watch) for case in cases]
        for b in range(0, len(cases), BATCH):
            batch = cases[b : b + BATCH]
            got = engine.digested([(c.doc(), c.options) for c in batch])
            for k, (case, g) in enumerate(zip(batch, got, strict=True)):
                w = wants[b + k].result()
                bad = mismatch(game, case, w, g)
                assert bad is None, bad
                decisions += len(w.legal)
    return decisions
