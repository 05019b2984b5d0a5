"""The journal ``matches.jsonl``: the one module that writes, reads, checks and tallies it.

One JSON object per line, one line per finished match, written whole and flushed as
the match ends (a killed run loses only the matches in flight; a full disk cuts the file
back to its last complete line). Reading streams checked dicts; a torn or damaged
*last* line is dropped, anything else wrong is a ``JournalError`` naming the file, the
line and the field. A line's shape (its keys in order, their types and bounds) is
declared once, in ``store.line.LINE``; the writer checks each line it writes against it,
so the journal never holds a line its readers would refuse.
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
from referee.record import MatchRecord
from referee.store.files import ClosedOnExit  # re-exported: a failed write names its file
from referee.store.files import write_error as write_error
from referee.store.line import MAX_DEPTH as MAX_DEPTH  # re-exported: tournament.json's checks use them
from referee.store.line import MAX_SEATS as MAX_SEATS
from referee.store.line import MAX_STR as MAX_STR
from referee.store.line import check_line, quick_fits

JOURNAL = "matches.jsonl"

MAX_LINE_BYTES = 4 * 1024 * 1024  # a line longer than this is refused (a hand-edited or hostile file)


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
    """The journal line of ``rec`` (with its newline); ``details`` as ``journal_details``.

    The line is read back through ``parse_line``: a line the readers would refuse (a bug
    in a game) is a JournalError here, never a line in the journal."""
    try:
        doc = rec.to_json()
        doc["details"] = journal_details(doc["details"])
        line = dumps(doc)
    except ValueError as exc:  # NaN or infinity in a score or a stat: a bug in a game, not a line to write
        raise JournalError(f"match {rec.id}: {exc}; refusing to write non-standard JSON") from exc
    parse_line(line, f"match {rec.id}: refusing to write a line the journal's readers refuse")
    return line + "\n"


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
    """One journal line parsed and checked against ``store.line.LINE``; JournalError naming
    ``where`` and the field.

    orjson parses; the stdlib parser runs only where orjson may differ from it (orjson
    refused the line, or the line holds an integer orjson would turn into a float), so
    what is accepted and every message are the stdlib's. A line orjson parsed holds no
    NaN, infinity or integer beyond 64 bits, and one whose brackets nest shallow
    (``_shallow``) needs no walk through ``details``.
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
    return validate_line(doc, where, walk_trees=not _shallow(data))


_DIGITS_AS_ZERO = bytes(ord("0") if chr(b).isdigit() and b < 128 else b for b in range(256))
_JSON_STR = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_MARK = bytes(b for b in range(256) if b not in b'[]{}"\\')


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


def no_constant(name: str) -> Any:
    """``parse_constant`` for ``json.loads``: NaN and infinities are refused."""
    raise ValueError(f"{name} is not a number in standard JSON")


def validate_line(doc: Any, where: str, walk_trees: bool = True) -> dict[str, Any]:
    """``doc`` checked against ``store.line.LINE``; returned as is, or a JournalError naming
    ``where`` and the field. ``walk_trees=False``: ``doc`` was parsed by orjson from a line
    nested shallow, so ``line.quick_fits`` may accept it in one pass."""

    if walk_trees or not quick_fits(doc):

        def fail(key: str, problem: str) -> NoReturn:
            raise JournalError(f"{where}: field {key}: {problem}" if key else f"{where}: {problem}")

        check_line(doc, fail, walk_trees)
    return doc  # type: ignore[no-any-return]


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


def count_lines(path: Path) -> int:
    """The complete lines of the journal at ``path`` (read in 1 MiB chunks, never parsed)."""
    count = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            count += chunk.count(b"\n")
    return count


def has_lines(path: Path) -> bool:
    """True when the journal at ``path`` exists and is not empty."""
    return path.is_file() and path.stat().st_size > 0


def repair(path: Path, good_end: int) -> None:
    """Cut a torn last line off the journal at ``path`` (bytes past ``good_end``)."""
    if path.exists() and good_end < path.stat().st_size:
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
