"""Replay data: what the viewer draws of one match, the one reader and writer of its files.

Format 1's doc is what a replay pack holds of a match of a game without ``replay.js``
(``store.packs``, every match, written by the run; there without ``ms``); the files below
are for folders made before packs, and for ``referee replay OUT MATCH --html``.

``OUT/replays/data/<match>.js`` is a script the viewer page (``replays/index.html``) adds
at run time (a script, not a fetch: Chromium refuses fetch on file://)::

    /* referee replay data 1 <key> */
    replayData({...});

The key names the journal line the data was made from (``key``: its id, seed, seats, deal,
decision counts and scores, never a timing): a file whose key differs is made again.

The object (version 1; keys left out when empty)::

    {"format": 1, "id": "m000042", "index": 42, "seed": "6824308284528368047",  # a string: exact in JavaScript
     "game": "nimmt_plus", "deal": "<deal hash>", "bots": [...], "scores": [...], "ranks": [...],
     "forfeited": [...], "faults": [<the journal's fault objects>],
     "views": [{"f": <a whole view>} | {"b": i, "set": {k: v}, "app": {k: [...]}, "del": [k]}],
     "start": [<view index of each seat at the deal>],
     "seat": [...], "decision": [...], "action": [...], "by": "bbf...",   # one entry per decision
     "ms": [...], "legal": [<legal action counts>], "sent": [<view index the seat was sent>],
     "after": [[<view index of every seat once the decision is applied>], ...],
     "fault": {"<i>": kind}, "extras": {"<i>": {...}}, "log": {"<i>": text}}

A view entry is whole (``f``) or the difference from the latest view stored before it, of
any seat (``b``: seats share the public part of the table): keys set, lists appended to,
keys deleted; a seat's unchanged view is the same index. Decisions are numbered from 1
(entry i is decision i + 1). The file is a pure function of the match's journal line and
transcript, so a file present is never stale and is not made twice. The journal and transcripts keep the seed as a JSON
integer (their formats do not change).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from referee.config.model import NAME_RE
from referee.errors import ReplayError
from referee.record import FALLBACK
from referee.store.files import atomic_write
from referee.store.matches import Match

FOLDER = "replays/data"
FORMAT = 1
_HEAD = f"/* referee replay data {FORMAT} ".encode()
_OPEN = b" */\nreplayData("
_TAIL = b");\n"
_MISSING = object()


def path(out: Path, match_id: str) -> Path:
    """The data file of ``match_id`` in the output folder ``out``."""
    if not NAME_RE.match(match_id):  # a match id follows the name rule
        raise ReplayError(f"match id {match_id!r} cannot name a replay file (letters, digits, _ . -)")
    return out / FOLDER / f"{match_id}.js"


def key(record: Mapping[str, Any]) -> str:
    """The key of a journal line: what the data of its match depends on, timings aside."""
    fields = [record.get(k) for k in ("id", "index", "seed", "bots", "deal_hash", "decisions", "scores")]
    return hashlib.sha256(json.dumps(fields, separators=(",", ":")).encode()).hexdigest()[:16]


def present(out: Path, record: Mapping[str, Any]) -> bool:
    """True when ``out`` holds the data of the journal line ``record``, in this format."""
    head = _HEAD + key(record).encode() + _OPEN
    try:
        with path(out, str(record["id"])).open("rb") as fh:
            return fh.read(len(head)) == head
    except (OSError, ReplayError):
        return False


def write(out: Path, m: Match) -> Path:
    """Make the data of ``m`` and write it into ``out``; return its path."""
    p = path(out, str(m.record["id"]))
    doc = make(m)
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(p, _HEAD + key(m.record).encode() + _OPEN + encode(doc) + _TAIL)
    return p


def read(out: Path, match_id: str) -> dict[str, Any]:
    """The data of ``match_id`` as written; ReplayError when missing or not this format."""
    p = path(out, match_id)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{p}: cannot read ({exc.strerror})") from exc
    start = raw.find(_OPEN)
    if not raw.startswith(_HEAD) or start < 0 or not raw.endswith(_TAIL):
        raise ReplayError(f"{p}: not replay data of format {FORMAT}")
    try:
        doc: dict[str, Any] = json.loads(raw[start + len(_OPEN) : -len(_TAIL)])
    except ValueError as exc:
        raise ReplayError(f"{p}: damaged ({exc})") from exc
    return doc


def make(m: Match) -> dict[str, Any]:
    """The replay data of ``m``: the views at the deal, then per decision what changed."""
    rec = m.record
    n = len(rec["bots"])
    table = _Views(n)
    state = m.game.setup(n, rec["seed"], m.options)
    start = [table.ref(s, m.game.view(state, s)) for s in range(n)]
    doc = header(m.game.info.id, rec)
    cols: dict[str, list[Any]] = {k: [] for k in ("seat", "decision", "action", "ms", "legal", "sent", "after")}
    by, fault, extras, log = [], {}, {}, {}
    for f in m.frames(after=True):
        mv, i = f.move, f.index
        for key, value in (("seat", mv.seat), ("decision", mv.decision), ("action", mv.action), ("ms", mv.ms)):
            cols[key].append(value)
        cols["legal"].append(f.n_legal)
        cols["sent"].append(table.ref(mv.seat, f.sent))
        cols["after"].append([table.ref(s, v) for s, v in enumerate(f.after or ())])
        by.append("f" if mv.by == FALLBACK else "b")
        if mv.fault:
            fault[str(i)] = mv.fault
        if mv.extras:
            extras[str(i)] = mv.extras
        if mv.log:
            log[str(i)] = mv.log
    doc.update({"fault": fault} if fault else {})
    doc.update({"views": table.views, "start": start, **cols, "by": "".join(by)})
    doc.update({k: v for k, v in (("extras", extras), ("log", log)) if v})
    return doc


def header(game: str, rec: Mapping[str, Any]) -> dict[str, Any]:
    """What a replay doc says of the match of journal line ``rec`` before its decisions
    (``forfeited`` and ``faults`` only when there are some); the seed as a string."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "id": str(rec["id"]),
        "index": rec["index"],
        "seed": str(rec["seed"]),
        "game": game,
        "deal": rec.get("deal_hash", ""),
        "bots": list(rec["bots"]),
        "scores": rec["scores"],
        "ranks": rec["ranks"],
    }
    optional = {"forfeited": rec.get("forfeited"), "faults": rec.get("faults")}
    doc.update({k: v for k, v in optional.items() if v})
    return doc


class _Views:
    """The views of a match, each stored once: a seat's unchanged view is the same index
    (dict equality, no serialising to compare), a changed one the difference from the
    latest stored view of any seat (seats share the public part of the table)."""

    def __init__(self, n: int) -> None:
        self.views: list[dict[str, Any]] = []
        self.last: list[tuple[int, Any] | None] = [None] * n
        self.latest: tuple[int, Any] | None = None

    def ref(self, seat: int, view: Any) -> int:
        """The index of ``view`` (seat ``seat``'s), stored if it differs from the seat's last."""
        prev = self.last[seat]
        if prev is not None and (prev[1] is view or prev[1] == view):
            return prev[0]
        self.views.append(_delta(self.latest, view) if self.latest is not None else {"f": view})
        self.latest = self.last[seat] = (len(self.views) - 1, view)
        return len(self.views) - 1


def _delta(prev: tuple[int, Any], view: Any) -> dict[str, Any]:
    """``view`` as a difference from ``prev`` (index, view); whole when either is not an object."""
    base_i, base = prev
    if not isinstance(view, dict) or not isinstance(base, dict):
        return {"f": view}
    put: dict[str, Any] = {}
    app: dict[str, Any] = {}
    for k, v in view.items():
        old = base.get(k, _MISSING)
        if old == v and type(old) is type(v):
            continue
        if isinstance(v, list) and isinstance(old, list) and 0 < len(old) < len(v) and v[: len(old)] == old:
            app[k] = v[len(old) :]
        else:
            put[k] = v
    out: dict[str, Any] = {"b": base_i}
    if put:
        out["set"] = put
    if app:
        out["app"] = app
    gone = [k for k in base if k not in view]
    if gone:
        out["del"] = gone
    return out


def encode(doc: dict[str, Any]) -> bytes:
    """A doc as compact JSON, ASCII only (orjson; the standard library for integers past 64 bits)."""
    try:
        raw = orjson.dumps(doc)
    except TypeError:
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode()
    return raw if raw.isascii() else json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode()
