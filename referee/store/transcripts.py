"""The transcripts: every decision of every match, the one reader and writer of their files.

``OUT/transcripts/part-NNNNN.jsonl.gz``: one gzip-compressed JSON line per match, flushed
before the match's journal line; a new part every ``PER_PART`` matches and every run, so
a part torn by a kill is never appended to (reading drops its torn tail). A line (keys
left out when empty)::

    {"id": "m000042", "seed": 123,
     "seats":   [0, 1, 2, 3, 0, ...],       # the seat of each decision, in play order
     "actions": [[27], [5, 6], ...],        # the action as played, one per decision
     "by":      "bbbbf...",                 # b: the bot chose it, f: the fallback did
     "ms":      [12, 8, null, ...],         # response time in tenths of a ms (null: not asked)
     "faults":  [[4, "timeout"], ...],      # decision index -> fault kind
     "extras":  [[9, {"claims": ...}], ...],  # reply fields besides action (The Game)
     "logs":    [[0, "the bot's log"], ...]}   # the bot's optional log, as capped by match

A seat's decision number is its count of earlier decisions in the match (as ``play_match`` does).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

import orjson

from referee.bots.client.protocol import dumps
from referee.errors import OutputError, TranscriptError
from referee.record import BOT, FALLBACK, MatchRecord, Move
from referee.store.files import ClosedOnExit, write_error

FOLDER = "transcripts"
PER_PART = 1000  # matches per part file: a million matches make a thousand files
MODES = ("all", "none")
_PREFIX, _SUFFIX = "part-", ".jsonl.gz"


@dataclass
class Transcript:
    """One match's decisions as the transcript keeps them: columns, one entry per
    decision in play order (``ms`` in tenths of a millisecond, None when the bot was not
    asked; ``by`` a string of "b"/"f"); faults, extras and logs by decision index."""

    id: str
    seed: int
    seats: list[int]
    actions: list[Any]
    by: str
    ms: list[int | None]
    faults: dict[int, str]
    extras: dict[int, dict[str, Any]]
    logs: dict[int, str]

    @property
    def moves(self) -> list[Move]:
        """The decisions as ``Move`` records (seat decision numbers counted per seat)."""
        counts: dict[int, int] = {}
        out = []
        for i, s in enumerate(self.seats):
            d = counts.get(s, 0)
            counts[s] = d + 1
            t = self.ms[i]
            by = BOT if self.by[i] == "b" else FALLBACK
            ms = None if t is None else t / 10
            out.append(Move(s, d, self.actions[i], by, self.faults.get(i), ms, self.extras.get(i), self.logs.get(i)))
        return out


def encode(rec: MatchRecord) -> dict[str, Any]:
    """The transcript line of ``rec`` as a JSON-ready dict."""
    moves = rec.moves
    line: dict[str, Any] = {
        "id": rec.id,
        "seed": rec.seed,
        "seats": [m.seat for m in moves],
        "actions": [m.action for m in moves],
        "by": "".join("b" if m.by == BOT else "f" for m in moves),
        "ms": [None if m.ms is None else round(m.ms * 10) for m in moves],
    }
    sparse = {
        "faults": [[i, m.fault] for i, m in enumerate(moves) if m.fault is not None],
        "extras": [[i, m.extras] for i, m in enumerate(moves) if m.extras],
        "logs": [[i, m.log] for i, m in enumerate(moves) if m.log],
    }
    line.update({k: v for k, v in sparse.items() if v})
    return line


def line_of(rec: MatchRecord) -> bytes:
    """The transcript line of ``rec`` as written: compact JSON and a newline, by the wire
    messages' encoder (orjson, byte for byte the stdlib's but for the spelling of some
    floats; a NaN a bot slipped into its reply's extra fields is written ``null``, valid
    JSON, where the stdlib wrote ``NaN``); ``rec.transcript`` when it was made where the
    match was played."""
    if rec.transcript is not None:
        return rec.transcript
    return dumps(encode(rec), check_finite=False) + b"\n"


def decode(line: dict[str, Any]) -> Transcript:
    """The transcript of one line; TranscriptError when the line is not a transcript."""
    try:
        seats, actions, by, ms = line["seats"], line["actions"], line["by"], line["ms"]
        n = len(seats)
        if not (len(actions) == len(by) == len(ms) == n) or not _ints(seats) or (seats and min(seats) < 0):
            raise ValueError("columns of different lengths or a bad seat")
        faults = {int(i): str(k) for i, k in line.get("faults", ())}
        extras = {int(i): dict(e) for i, e in line.get("extras", ())}
        logs = {int(i): str(t) for i, t in line.get("logs", ())}
        if by.strip("bf") or not set(map(type, ms)) <= _INT_OR_NONE:
            raise ValueError("by holds other letters than b and f, or ms other values than integers and null")
        return Transcript(str(line["id"]), int(line["seed"]), seats, actions, by, ms, faults, extras, logs)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        mid = line.get("id") if isinstance(line, dict) else "?"
        raise TranscriptError(f"match {mid}: not a transcript ({exc})") from exc


_INT_OR_NONE = {int, type(None)}


def _ints(values: list[Any]) -> bool:
    """True when every value is a JSON integer (no bools, no floats)."""
    return set(map(type, values)) <= {int}


class Writer(ClosedOnExit):
    """Appends transcripts to the parts of ``out/transcripts``; a no-op when disabled.
    A part that cannot be written (a full disk) is an ``OutputError`` naming it; after
    that the writer takes no more matches and closes without a second error."""

    def __init__(self, out: Path, enabled: bool = True, resume: bool = False, per_part: int = PER_PART) -> None:
        self.enabled = enabled
        self.folder = out / FOLDER
        self.per_part = per_part
        self._fh: IO[bytes] | None = None
        self._path = self.folder
        self._z: Any = None
        self._in_part = 0
        self._next = 0
        self._failed: OutputError | None = None
        if not enabled:
            return
        try:
            if not resume and self.folder.exists():  # a fresh run: the old transcripts go with the old journal
                prev = out / (FOLDER + ".prev")
                shutil.rmtree(prev, ignore_errors=True)
                self.folder.replace(prev)
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_error(self.folder, exc) from exc
        self._next = max((_part_number(p) for p in _parts(self.folder)), default=-1) + 1

    def write(self, rec: MatchRecord) -> None:
        """Append ``rec``'s transcript and flush it to the file (before its journal line)."""
        if not self.enabled:
            return
        if self._failed is not None:
            raise self._failed
        try:
            if self._fh is None or self._in_part >= self.per_part:
                self._roll()
            assert self._fh is not None
            self._fh.write(self._z.compress(line_of(rec)) + self._z.flush(zlib.Z_SYNC_FLUSH))
            self._fh.flush()
        except OSError as exc:
            self._fail(exc)
        self._in_part += 1

    def close(self) -> None:
        """End the current part's gzip stream and close it."""
        if self._fh is None:
            return
        fh, self._fh = self._fh, None
        if self._failed is not None:  # its bytes could not be written: readers drop the torn tail
            with contextlib.suppress(OSError):
                fh.close()
            return
        try:
            fh.write(self._z.flush(zlib.Z_FINISH))
            fh.close()
        except OSError as exc:
            with contextlib.suppress(OSError):
                fh.close()
            self._fail(exc)

    def _fail(self, exc: OSError) -> NoReturn:
        self._failed = write_error(self._path, exc)
        raise self._failed from exc

    def _roll(self) -> None:
        self.close()
        self._path = self.folder / f"{_PREFIX}{self._next:05d}{_SUFFIX}"
        self._next += 1
        self._fh = open(self._path, "wb")  # noqa: SIM115 - kept open across matches, closed by close()
        # wbits 31: a gzip stream. Level 6 (zlib's default), not 9: on 6 nimmt! lines 150
        # against 530 µs of CPU a match for 3 % more bytes (592 against 575 a match), and
        # this runs in the process that writes the journal (the head, with Dask workers)
        self._z = zlib.compressobj(6, zlib.DEFLATED, 31)
        self._in_part = 0


def exists(out: Path) -> bool:
    """True when ``out`` has a transcripts folder with at least one part."""
    return (out / FOLDER).is_dir() and any(_parts(out / FOLDER))


def read_lines(out: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every complete transcript line of ``out`` in the order written, with its part.

    The torn tail of a part (a kill in the middle of a write) is left out.
    """
    for part, raw in _raw_lines(out):
        try:
            line = orjson.loads(raw)
        except orjson.JSONDecodeError:  # past orjson's limits (integers over 64 bits, NaN): the stdlib's
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise TranscriptError(f"{part}: a line that is not JSON ({exc})") from exc
        yield part, line


def _raw_lines(out: Path) -> Iterator[tuple[Path, bytes]]:
    folder = out / FOLDER
    if not folder.is_dir():
        return
    for part in _parts(folder):
        z = zlib.decompressobj(31)
        rest = b""
        with open(part, "rb") as fh:
            while chunk := fh.read(1 << 20):
                try:
                    data = rest + z.decompress(chunk)
                except zlib.error:
                    break  # damaged from here on: what came before stands
                lines = data.split(b"\n")
                rest = lines.pop()
                for raw in lines:
                    if raw.strip():
                        yield part, raw
                if z.eof:
                    break
        # ``rest`` without its newline is a line cut short by a kill: dropped


def find_many(out: Path, ids: set[str]) -> dict[str, Transcript]:
    """The transcripts of ``ids`` (the last written of each), in one pass that parses only
    their lines."""
    heads = {json.dumps({"id": i}, separators=(",", ":"))[:-1].encode() + b",": i for i in ids}
    found: dict[str, tuple[Path, bytes]] = {}
    for part, raw in _raw_lines(out):
        if raw.startswith(b'{"id":"'):  # as Writer writes it: the id is read without parsing the line
            comma = raw.find(b",")
            mid = heads.get(raw[: comma + 1]) if comma > 0 else None
        else:
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise TranscriptError(f"{part}: a line that is not JSON ({exc})") from exc
            mid = str(line.get("id")) if isinstance(line, dict) and str(line.get("id")) in ids else None
        if mid is not None:
            found[mid] = (part, raw)
    out_: dict[str, Transcript] = {}
    for mid, (part, raw) in found.items():
        try:
            out_[mid] = decode(json.loads(raw))
        except (ValueError, TranscriptError) as exc:
            raise TranscriptError(f"{part}: match {mid}: {exc}") from exc
    return out_


def find(out: Path, match_id: str) -> Transcript | None:
    """The transcript of ``match_id`` in ``out`` (the last one written), or None."""
    return find_many(out, {match_id}).get(match_id)


def read_all(out: Path) -> Iterator[Transcript]:
    """Every transcript of ``out`` in the order written (a match played again after a
    resume appears twice; the later one is the one its journal line belongs to)."""
    for part, line in read_lines(out):
        try:
            yield decode(line)
        except TranscriptError as exc:
            raise TranscriptError(f"{part}: {exc}") from exc


def _parts(folder: Path) -> list[Path]:
    return sorted((p for p in folder.glob(f"{_PREFIX}*{_SUFFIX}") if _part_number(p) >= 0), key=_part_number)


def _part_number(p: Path) -> int:
    digits = p.name[len(_PREFIX) : -len(_SUFFIX)]
    return int(digits) if digits.isdigit() else -1
