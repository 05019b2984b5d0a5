"""The journal ``matches.jsonl``: the one module that writes, reads, checks and tallies it.

One JSON object per line, one line per finished match, written whole and flushed as
the match ends (a killed run loses only the matches in flight; a full disk cuts the file
back to its last complete line). Reading streams validated dicts; a torn or damaged
*last* line is dropped, anything else wrong is a ``JournalError`` naming the file, the
line and the field. A line (keys in this order; bracketed ones only when they happened)::

    id, index, seed, bots, scores, ranks, lower_is_better, forfeited, faults [{seat, bot,
    decision, phase, kind, detail, latency_ms}], [latency_ms (older journals)], decisions,
    stats, details (the game's flat summary), duration_s, deal_hash, [restarts],
    [disqualified], [voided], [deal: where several fixtures share a deal],
    [versions: each seat's bot version, a short hex id (run/versions.py); journals of
    earlier referees have none]
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol

import orjson

from referee.errors import JournalError, RefereeError
from referee.record import FAULT_KINDS, MatchRecord
from referee.store.files import ClosedOnExit  # re-exported: a failed write names its file
from referee.store.files import write_error as write_error

JOURNAL = "matches.jsonl"

MAX_LINE_BYTES = 4 * 1024 * 1024  # a line longer than this is refused (a hand-edited or hostile file)
MAX_SEATS = 64
MAX_STR = 4096  # characters of any string field (fault details are cut to 300 when written)
MAX_DEPTH = 32  # nesting of ``details``


def dumps(obj: Any) -> str:
    """Compact JSON with NaN and infinities refused (standard JSON only)."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def journal_details(details: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a game's ``details`` the journal keeps: its top-level summary.

    Numbers, strings, flags and flat lists of them stay; nested breakdowns (per hand,
    per round, per turn) leave the line: the transcript holds every decision, and
    ``referee verify`` / ``referee replay`` rebuild them through the rules.
    """
    return {k: v for k, v in details.items() if _flat(v)}


def _flat(v: Any) -> bool:
    if isinstance(v, list):
        return all(x is None or isinstance(x, str | int | float) for x in v)
    return v is None or isinstance(v, str | int | float)


def record_line(rec: MatchRecord) -> str:
    """The journal line of ``rec`` (with its newline); ``details`` as ``journal_details``."""
    try:
        doc = rec.to_json()
        doc["details"] = journal_details(doc["details"])
        return dumps(doc) + "\n"
    except ValueError as exc:  # NaN or infinity in a score or a stat: a bug in a game, not a line to write
        raise JournalError(f"match {rec.id}: {exc}; refusing to write non-standard JSON") from exc


class JournalWriter(ClosedOnExit):
    """Appends match lines to the journal at ``path``, each written whole as it ends.

    Unbuffered: a line is written at once (no bytes left in a buffer that a later close
    could append after a cut back). A failed write cuts the partial line back and raises
    ``OutputError``; once space is freed, writing may go on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fh = open(path, "ab", buffering=0)  # noqa: SIM115 (held for the whole run)
        except OSError as exc:
            raise write_error(path, exc) from exc
        self._good = self._fh.tell()

    def write(self, rec: MatchRecord) -> None:
        """Append the line of ``rec``; on a write error cut the partial line and raise OutputError."""
        data = memoryview(record_line(rec).encode())
        try:
            while data:
                data = data[self._fh.write(data) or 0 :]
        except OSError as exc:
            with contextlib.suppress(OSError):  # else every reader drops the torn line anyway
                os.ftruncate(self._fh.fileno(), self._good)
            raise write_error(self.path, exc) from exc
        self._good = self._fh.tell()

    def close(self) -> None:
        """Sync to disk and close."""
        if self._fh.closed:
            return
        try:
            os.fsync(self._fh.fileno())
        except OSError as exc:
            raise write_error(self.path, exc) from exc
        finally:
            self._fh.close()


class JournalReader:
    """The validated lines of the journal at ``path``, read once, line by line.

    Iterate it to get each line as a dict; afterwards ``good_end`` is the byte offset
    where the complete lines end (a torn last line starts there) and ``lines`` the
    number of the last line yielded.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.good_end = 0
        self.lines = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 (closed below, after the generator ends)
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot read: {exc.strerror or exc}") from exc
        with fh:
            damaged: JournalError | None = None  # a bad line, forgiven only if it is the last
            pos = number = 0
            while raw := fh.readline(MAX_LINE_BYTES + 1):
                number += 1
                if damaged is not None:
                    if raw.strip():
                        raise JournalError(f"{damaged}; it is not the last line: the journal is damaged")
                    continue
                if not raw.endswith(b"\n"):
                    if len(raw) > MAX_LINE_BYTES:
                        raise JournalError(f"{self.path}: line {number}: longer than {MAX_LINE_BYTES} bytes")
                    break  # torn last line: a write cut short by a kill
                pos += len(raw)
                if not raw.strip():
                    self.good_end = pos
                    continue
                try:
                    doc = parse_line(raw, f"{self.path}: line {number}")
                except JournalError as exc:
                    damaged = exc
                    continue
                self.good_end = pos
                self.lines = number
                yield doc


def read_journal(path: Path) -> Iterator[dict[str, Any]]:
    """The validated lines of the journal at ``path``, streamed (see ``JournalReader``)."""
    return iter(JournalReader(path))


def parse_line(raw: bytes | str, where: str) -> dict[str, Any]:
    """One journal line parsed and validated; JournalError naming ``where`` and the field.

    orjson parses; the stdlib parser runs only where orjson may differ from it (orjson
    refused the line, or the line holds an integer orjson would turn into a float), so
    what is accepted and every message are the stdlib's. A line of the common shape is
    accepted by one quick pass (``_common_shape``); anything else goes through the
    detailed checks of ``validate_line``, which name the field.
    """
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    doc: Any = None
    if not _big_int(data):
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            doc = None
    if doc is None:  # JSON null is not an object either: the stdlib path says so
        try:
            doc = json.loads(raw, parse_constant=no_constant)
        except RecursionError as exc:
            raise JournalError(f"{where}: nested too deeply") from exc
        except ValueError as exc:
            raise JournalError(f"{where}: not JSON ({exc})") from exc
        return validate_line(doc, where)
    # orjson gives no NaN, infinity or integer beyond 64 bits: only shape and depth to check
    if _common_shape(doc) and _shallow(data):
        return doc  # type: ignore[no-any-return]
    return validate_line(doc, where)


_DIGITS_AS_ZERO = bytes(ord("0") if chr(b).isdigit() and b < 128 else b for b in range(256))
_JSON_STR = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_MARK = bytes(b for b in range(256) if b not in b'[]{}"\\')
_NUM = (int, float)


def _shallow(data: bytes) -> bool:
    """True if the line's brackets nest at most ``MAX_DEPTH + 1`` deep (``details`` shallow).

    ``details`` sits at bracket depth 2, so at most ``MAX_DEPTH + 1`` levels means no node
    of ``details`` is deeper than ``MAX_DEPTH``; a deeper line takes the exact check. The
    work is in C: strings dropped, then innermost pairs peeled (each round peels at most
    two levels, so a line that empties in ``MAX_DEPTH // 2`` rounds is shallow enough).
    """
    marks = data.translate(None, _NOT_MARK)  # quotes, backslashes and brackets only: short
    if b"\\" in marks:
        brackets = _JSON_STR.sub(b"", data).translate(None, _NOT_MARK)
    else:
        brackets = b"".join(marks.split(b'"')[::2])  # odd parts are inside strings
    for _ in range(MAX_DEPTH // 2):
        if not brackets:
            return True
        brackets = brackets.replace(b"[]", b"").replace(b"{}", b"")
    return not brackets


def _big_int(data: bytes) -> bool:
    """True if ``data`` may hold an integer orjson reads differently from the stdlib.

    orjson turns integers from 2**64 up (and below -2**63) into floats: 20 digits in a
    row, or 19 after a minus sign (conservative: long fractions count too; they are rare).
    """
    digits = data.translate(_DIGITS_AS_ZERO)
    return b"00000000000000000000" in digits or b"-0000000000000000000" in digits


def _common_shape(doc: Any) -> bool:
    """A quick, conservative pass over a line orjson parsed: True only if it is valid.

    False means "not sure": ``validate_line`` then decides and names the field. Numbers
    from orjson are finite and within 64 bits, so only types and ranges are checked.
    """
    if type(doc) is not dict:
        return False
    g = doc.get
    ident, index, seed, bots = g("id"), g("index"), g("seed"), g("bots")
    if type(ident) is not str or not 0 < len(ident) <= 64:
        return False
    if type(index) is not int or index < 0 or type(seed) is not int or seed < 0:
        return False
    if type(bots) is not list or not 0 < len(bots) <= MAX_SEATS:
        return False
    n = len(bots)
    for b in bots:
        if type(b) is not str or not 0 < len(b) <= 64:
            return False
    scores, ranks, decisions, stats = g("scores"), g("ranks"), g("decisions"), g("stats")
    if type(scores) is not list or len(scores) != n or type(ranks) is not list or len(ranks) != n:
        return False
    if type(decisions) is not list or len(decisions) != n or type(stats) is not list or len(stats) != n:
        return False
    for x in scores:
        if type(x) not in _NUM:
            return False
    for r in ranks:
        if type(r) is not int or not 1 <= r <= n:
            return False
    for d in decisions:
        if type(d) is not int or d < 0:
            return False
    for st in stats:
        if type(st) is not dict:
            return False
        for k, v in st.items():
            if len(k) > 64 or type(v) not in _NUM:
                return False
    if type(g("lower_is_better")) is not bool or type(g("details")) is not dict:
        return False
    if type(g("duration_s")) not in _NUM:
        return False
    deal_hash = g("deal_hash")
    if type(deal_hash) is not str or len(deal_hash) > 64:
        return False
    forfeited, faults = g("forfeited"), g("faults")
    if type(forfeited) is not list or type(faults) is not list:
        return False
    if forfeited and not _seats_ok(forfeited, n):
        return False
    if faults:
        return False  # rare: the detailed checks
    if "latency_ms" in doc:
        return False  # older journals: the detailed checks
    for key in ("voided", "deal"):
        v = g(key, 0)
        if type(v) is not int or v < 0:
            return False
    if "disqualified" in doc:
        dq = doc["disqualified"]
        if type(dq) is not list or not _seats_ok(dq, n):
            return False
    if "restarts" in doc:
        restarts = doc["restarts"]
        if type(restarts) is not list or len(restarts) != n:
            return False
        for r in restarts:
            if type(r) is not int or r < 0:
                return False
    if "versions" in doc:
        versions = doc["versions"]
        if type(versions) is not list or len(versions) != n:
            return False
        for v in versions:
            if type(v) is not str or not 0 < len(v) <= 64:
                return False
    return True


def _seats_ok(seats: list[Any], n: int) -> bool:
    return len(seats) <= n and all(type(s) is int and 0 <= s < n for s in seats)


def no_constant(name: str) -> Any:
    """``parse_constant`` for ``json.loads``: NaN and infinities are refused."""
    raise ValueError(f"{name} is not a number in standard JSON")


def validate_line(doc: Any, where: str) -> dict[str, Any]:
    """``doc`` checked against the line shape above; returned as is, or a JournalError."""
    if not isinstance(doc, dict):
        raise JournalError(f"{where}: not a JSON object")
    c = FieldCheck(where)
    c.string(doc, "id", 64)
    c.integer(doc, "index", 0)
    c.integer(doc, "seed", 0)
    bots = c.lst(doc, "bots", 1, MAX_SEATS)
    n = len(bots)
    for i, b in enumerate(bots):
        if not isinstance(b, str) or not 0 < len(b) <= 64:
            c.fail(f"bots[{i}]", "must be a bot name (a string of 1-64 characters)")
    for i, s in enumerate(c.lst(doc, "scores", n, n)):
        c.number_value(f"scores[{i}]", s)
    for i, r in enumerate(c.lst(doc, "ranks", n, n)):
        if not _is_int(r) or not 1 <= r <= n:
            c.fail(f"ranks[{i}]", f"must be an integer from 1 to {n}")
    if not isinstance(doc.get("lower_is_better"), bool):
        c.fail("lower_is_better", "missing or not true/false")
    c.seats(doc, "forfeited", n)
    for i, f in enumerate(c.lst(doc, "faults", 0, 1_000_000)):
        key = f"faults[{i}]"
        if not isinstance(f, dict):
            c.fail(key, "must be an object")
        if not _is_int(f.get("seat")) or not 0 <= f["seat"] < n:
            c.fail(f"{key}.seat", f"must be a seat from 0 to {n - 1}")
        if f.get("decision") is not None and (not _is_int(f["decision"]) or f["decision"] < 0):
            c.fail(f"{key}.decision", "must be a decision number or null")
        if f.get("kind") not in FAULT_KINDS:
            c.fail(f"{key}.kind", f"must be one of {', '.join(FAULT_KINDS)}")
        for k in ("phase", "detail", "bot"):
            if k in f and (not isinstance(f[k], str) or len(f[k]) > MAX_STR):
                c.fail(f"{key}.{k}", f"must be a string of at most {MAX_STR} characters")
        if "latency_ms" in f:
            c.number_value(f"{key}.latency_ms", f["latency_ms"])
    if "latency_ms" in doc:
        for s, seat in enumerate(c.lst(doc, "latency_ms", n, n)):
            if not isinstance(seat, list):
                c.fail(f"latency_ms[{s}]", "must be a list of numbers")
            for v in seat:
                c.number_value(f"latency_ms[{s}]", v)
    for i, d in enumerate(c.lst(doc, "decisions", n, n)):
        if not _is_int(d) or d < 0:
            c.fail(f"decisions[{i}]", "must be a count (an integer >= 0)")
    for i, st in enumerate(c.lst(doc, "stats", n, n)):
        if not isinstance(st, dict):
            c.fail(f"stats[{i}]", "must be an object of numbers")
        for k, v in st.items():
            if len(k) > 64:
                c.fail(f"stats[{i}]", "has a key longer than 64 characters")
            c.number_value(f"stats[{i}].{k}", v)
    if not isinstance(doc.get("details"), dict):
        c.fail("details", "missing or not an object")
    c.depth(doc["details"], "details", 0)
    c.number(doc, "duration_s")
    c.string(doc, "deal_hash", 64, empty=True)
    if "restarts" in doc:
        for i, r in enumerate(c.lst(doc, "restarts", n, n)):
            if not _is_int(r) or r < 0:
                c.fail(f"restarts[{i}]", "must be a count (an integer >= 0)")
    if "disqualified" in doc:
        c.seats(doc, "disqualified", n)
    if "voided" in doc:
        c.integer(doc, "voided", 0)
    if "deal" in doc:
        c.integer(doc, "deal", 0)
    if "versions" in doc:
        for i, v in enumerate(c.lst(doc, "versions", n, n)):
            if not isinstance(v, str) or not 0 < len(v) <= 64:
                c.fail(f"versions[{i}]", "must be a version id (a string of 1-64 characters)")
    return doc


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class FieldCheck:
    """Checks fields of a JSON document; a failure is an ``error`` naming ``where`` and the field."""

    where: str
    error: type[RefereeError] = JournalError

    def fail(self, key: str, problem: str) -> NoReturn:
        """Refuse field ``key``."""
        raise self.error(f"{self.where}: field {key}: {problem}")

    def string(self, doc: Mapping[str, Any], key: str, limit: int, empty: bool = False) -> None:
        """A string of at most ``limit`` characters (empty only with ``empty``)."""
        v = doc.get(key)
        if not isinstance(v, str) or len(v) > limit or (not v and not empty):
            self.fail(key, f"missing or not a string of {'0' if empty else '1'}-{limit} characters")

    def integer(self, doc: Mapping[str, Any], key: str, minimum: int) -> None:
        """An integer of at least ``minimum`` (and at most 256 bits)."""
        v = doc.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < minimum or v.bit_length() > 256:
            self.fail(key, f"missing or not an integer >= {minimum}")

    def number(self, doc: Mapping[str, Any], key: str) -> None:
        """A finite number, present."""
        if key not in doc:
            self.fail(key, "missing")
        self.number_value(key, doc[key])

    def number_value(self, key: str, v: Any) -> None:
        """``v`` a finite number (an integer of at most 64 bits)."""
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(key, f"must be a number, got {type(v).__name__}")
        if isinstance(v, int):
            if v.bit_length() > 64:
                self.fail(key, "an integer too large")
        elif not math.isfinite(v):
            self.fail(key, "must be a finite number")

    def lst(self, doc: Mapping[str, Any], key: str, lo: int, hi: int) -> list[Any]:
        """A list of ``lo`` to ``hi`` entries, returned."""
        v = doc.get(key)
        if not isinstance(v, list):
            self.fail(key, "missing or not a list")
        if not lo <= len(v) <= hi:
            self.fail(key, f"has {len(v)} entries, expected {lo if lo == hi else f'{lo}-{hi}'}")
        return v

    def seats(self, doc: Mapping[str, Any], key: str, n: int) -> None:
        """A list of seats of a table of ``n``."""
        for i, s in enumerate(self.lst(doc, key, 0, n)):
            if not _is_int(s) or not 0 <= s < n:
                self.fail(f"{key}[{i}]", f"must be a seat from 0 to {n - 1}")

    def depth(self, v: Any, key: str, level: int) -> None:
        """``v`` nested at most ``MAX_DEPTH - level`` deep, its numbers finite."""
        if level > MAX_DEPTH:
            self.fail(key, f"nested deeper than {MAX_DEPTH}")
        if isinstance(v, dict):
            for x in v.values():
                self.depth(x, key, level + 1)
        elif isinstance(v, list):
            for x in v:
                self.depth(x, key, level + 1)
        elif isinstance(v, float) and not math.isfinite(v):
            self.fail(key, "holds a non-finite number")


def line_record(doc: Mapping[str, Any]) -> MatchRecord:
    """A validated journal line as a MatchRecord (``latency_ms`` empty when the line has none)."""
    d = dict(doc)
    d.setdefault("latency_ms", [[] for _ in d["bots"]])
    return MatchRecord.from_json(d)


@dataclass
class BotTally:
    """One bot's counts over the journal, as fault-rate disqualification needs them."""

    decisions: int = 0
    faults: int = 0  # decisions in which the bot faulted (act phase)
    disqualified: bool = False


@dataclass
class JournalState:
    """What resume needs of a journal, compact: which fixtures are done (one bit each),
    per-bot tallies and the number of faults; never the records."""

    done: bytearray
    count: int = 0
    faults: int = 0
    bots: dict[str, BotTally] = field(default_factory=dict)
    good_end: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # grow: matches of bots no longer in the file, per bot

    def is_done(self, index: int) -> bool:
        """True when fixture ``index`` is in the journal."""
        return bool(self.done[index >> 3] & (1 << (index & 7)))

    def mark(self, index: int) -> None:
        """Record fixture ``index`` as done."""
        self.done[index >> 3] |= 1 << (index & 7)

    def add(self, doc: Mapping[str, Any]) -> None:
        """Tally one match (a validated line or ``MatchRecord.to_json()``)."""
        self.count += 1
        self.faults += len(doc["faults"])
        faulted = {(f["seat"], f["decision"]) for f in doc["faults"] if f.get("phase") == "act"}
        dq = set(doc.get("disqualified", ()))
        for s, bot in enumerate(doc["bots"]):
            t = self.bots.setdefault(bot, BotTally())
            t.decisions += doc["decisions"][s]
            t.faults += sum(1 for seat, _ in faulted if seat == s)
            if s in dq:
                t.disqualified = True


def empty_state(total: int) -> JournalState:
    """The state of an empty journal for a schedule of ``total`` fixtures."""
    return JournalState(bytearray((total + 7) // 8))


class FixtureLookup(Protocol):
    """What ``scan`` checks a line against: the schedule's fixture at an index."""

    @property
    def total(self) -> int:
        """The number of fixtures."""
        ...

    def expected(self, index: int) -> tuple[str, int, Sequence[int]]:
        """(id, seed, seats) of fixture ``index``."""
        ...

    def position(self, doc: Mapping[str, Any]) -> int | None:
        """The fixture a line is of (its ``index``, or in a tournament that grows the
        position its names give); None for a line of a bot no longer in the file."""
        ...


def scan(path: Path, schedule: FixtureLookup, bot_names: Sequence[str]) -> JournalState:
    """Read the journal at ``path`` once into a ``JournalState``, checking that every line
    belongs to ``schedule`` (its id, seed and bots); JournalError otherwise."""
    state = empty_state(schedule.total)
    if not path.exists():
        return state
    reader = JournalReader(path)
    known = set(bot_names)
    for doc in reader:
        i = schedule.position(doc)
        if i is None:  # grow: a bot removed from the file; its matches stay here, out of the standings
            for b in set(doc["bots"]) - known:
                state.left_out[b] = state.left_out.get(b, 0) + 1
            continue
        fits = 0 <= i < schedule.total
        if fits:
            fid, seed, seats = schedule.expected(i)
            # no seats: a ladder's tables come from its results (run.season checks them)
            same_bots = not seats or doc["bots"] == [bot_names[b] for b in seats]
            fits = doc["id"] == fid and doc["seed"] == seed and same_bots
        if not fits:
            raise JournalError(
                f"{path}: line {reader.lines}: match {doc['id']!r} does not belong to this tournament's schedule "
                "(another config, seed or bot list made it); use another --output or drop --resume"
            )
        if state.is_done(i):
            raise JournalError(f"{path}: line {reader.lines}: match {doc['id']!r} is in the journal twice")
        state.mark(i)
        state.add(doc)
    state.good_end = reader.good_end
    return state


def has_lines(path: Path) -> bool:
    """True when the journal at ``path`` exists and is not empty."""
    return path.is_file() and path.stat().st_size > 0


def repair(path: Path, good_end: int) -> None:
    """Cut a torn last line off the journal at ``path`` (bytes past ``good_end``)."""
    if path.exists() and good_end < path.stat().st_size:
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
