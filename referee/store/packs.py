"""Replay packs: every match's replay, written as matches finish; the one reader and writer
of ``OUT/replays/packs/``.

A pack is a script the viewer page adds at run time (Chromium refuses ``fetch`` on
``file://``), one line per match, in match index order::

    replayPack("m000042",42,"<base64 of the raw-deflated JSON doc>");

Pack ``NNNNNN.js`` holds the matches of indexes ``NNNNNN * PER_PACK`` to ``(NNNNNN + 1) *
PER_PACK - 1``, so a folder never holds more than one file per ``PER_PACK`` matches and the
viewer finds a match's pack from its index (a match id is ``m<index>``, six digits or more).
The doc is deflated raw (``zlib``, level 9, wbits -15) and base64'd; the page inflates it
from a Blob with ``DecompressionStream('deflate-raw')``. Two kinds, chosen per game:

- a game with a ``replay.js`` (``Game.replay_js``: a JavaScript engine that rebuilds the
  views from the seed and the moves): the MOVES only, format 1's key names without views::

    {"format": 1, "id", "index", "seed": "<decimal string>", "game", "deal", "bots", "scores",
     "ranks", "forfeited", "faults", "seat", "decision", "action", "by", "fault", "extras", "log"}

- any other game: the format-1 doc of ``store.replay_data.make`` (views as deltas), without
  ``ms`` (response times differ between two runs; the transcripts keep them).

Both are pure functions of the match's journal line and transcript, so the packs are byte
for byte the same at any concurrency, on Dask and after kill -9 with ``--resume``: a pack
file is always its entries sorted by index. A run appends each entry in index order
(``PackWriter``: finished matches wait in a small window so that a late one seldom comes
after a higher index; one that does is put in its place by rewriting its pack); a
resumed run first cuts a torn last line, drops entries whose match is not in the journal,
and makes those missing for matches that are (``repair``).
"""

from __future__ import annotations

import base64
import contextlib
import heapq
import json
import os
import re
import shutil
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import orjson

from referee.errors import ReplayError, TranscriptError
from referee.games.base import Game, OptionError
from referee.store import replay_data
from referee.store.files import ClosedOnExit, atomic_write, write_error
from referee.store.matches import Match
from referee.store.transcripts import Transcript, decode

FOLDER = "replays/packs"
PER_PACK = 500  # matches per pack file
WINDOW = 1024  # finished matches held back to be written in index order (a Dask batch is 64)
_RECORD_KEYS = ("id", "index", "seed", "bots", "scores", "ranks", "forfeited", "faults", "deal_hash")
_LINE = re.compile(rb'^replayPack\("([A-Za-z0-9_.-]{1,64})",(\d{1,18}),"([A-Za-z0-9+/]*={0,2})"\);$')


def pack_name(index: int) -> str:
    """The file name of the pack holding match ``index``."""
    return f"{index // PER_PACK:06d}.js"


def exists(out: Path) -> bool:
    """True when ``out`` has a packs folder (a run of this referee with transcripts)."""
    return (out / FOLDER).is_dir()


def record_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a journal line a pack entry uses, as the journal reads them back."""
    picked = {k: record[k] for k in _RECORD_KEYS if k in record}
    out: dict[str, Any] = json.loads(json.dumps(picked, separators=(",", ":"), allow_nan=False))
    return out


class Entries:
    """Makes the pack entries of one tournament's matches (its game and options)."""

    def __init__(self, game: Game, options: Mapping[str, Any]) -> None:
        self.game = game
        self.options = dict(options)
        self.moves_only = game.replay_js() is not None
        self._checked: dict[int, dict[str, Any]] = {}

    def doc(self, record: Mapping[str, Any], tr: Transcript) -> dict[str, Any]:
        """The doc of the match of journal line ``record`` (``record_fields``) and ``tr``."""
        if self.moves_only:
            return moves_doc(self.game.info.id, record, tr)
        n = len(record["bots"])
        if n not in self._checked:
            try:
                self._checked[n] = self.game.check_options(n, self.options)
            except OptionError as exc:
                raise ReplayError(f"options for {n} seats: {exc}") from exc
        doc = replay_data.make(Match(self.game, self._checked[n], dict(record), tr, ""))
        del doc["ms"]
        return doc

    def line(self, record: Mapping[str, Any], tr: Transcript) -> bytes:
        """The pack line of a match (``b""`` when the rules refuse its transcript: no entry)."""
        try:
            doc = self.doc(record, tr)
        except ReplayError:
            return b""
        return encode_line(str(record["id"]), int(record["index"]), doc)

    def line_of(self, record: Mapping[str, Any], transcript_line: bytes) -> bytes:
        """``line`` from the transcript line as written (``transcripts.line_of``)."""
        try:
            tr = decode(orjson.loads(transcript_line))
        except (ValueError, TranscriptError):
            return b""
        return self.line(record_fields(record), tr)


def moves_doc(game: str, record: Mapping[str, Any], tr: Transcript) -> dict[str, Any]:
    """The moves-only doc (a game with ``replay.js``): no views, no timings."""
    doc = replay_data.header(game, record)
    moves = tr.moves
    doc.update(
        {
            "seat": [m.seat for m in moves],
            "decision": [m.decision for m in moves],
            "action": [m.action for m in moves],
            "by": tr.by,
        }
    )
    sparse = {
        "fault": {str(i): k for i, k in sorted(tr.faults.items())},
        "extras": {str(i): e for i, e in sorted(tr.extras.items()) if e},
        "log": {str(i): t for i, t in sorted(tr.logs.items()) if t},
    }
    doc.update({k: v for k, v in sparse.items() if v})
    return doc


def encode_line(match_id: str, index: int, doc: Mapping[str, Any]) -> bytes:
    """One pack line: the doc as compact ASCII JSON, raw-deflated at level 9, base64'd."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15, 9)
    packed = z.compress(replay_data.encode(dict(doc))) + z.flush()
    return b'replayPack("%s",%d,"%s");\n' % (match_id.encode(), index, base64.b64encode(packed))


def parse_line(raw: bytes) -> tuple[str, int, bytes] | None:
    """(id, index, base64) of a pack line (without its newline); None when it is not one."""
    m = _LINE.match(raw)
    return None if m is None else (m[1].decode(), int(m[2]), m[3])


def inflate(b64: bytes) -> dict[str, Any]:
    """The doc of a pack entry's base64; ReplayError when damaged."""
    try:
        doc = json.loads(zlib.decompress(base64.b64decode(b64, validate=True), -15))
    except (ValueError, zlib.error) as exc:
        raise ReplayError(f"a damaged pack entry ({exc})") from exc
    if not isinstance(doc, dict):
        raise ReplayError("a pack entry that is not an object")
    return doc


def pack_files(out: Path) -> list[Path]:
    """The pack files of ``out``, in index order."""
    folder = out / FOLDER
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.js") if p.stem.isdigit())


def read_pack(path: Path) -> tuple[list[tuple[str, int, bytes]], bool]:
    """The entries of the pack at ``path`` in file order, and whether every line was one
    (a torn or damaged line is left out)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read ({exc.strerror})") from exc
    lines = raw.split(b"\n")
    tail = lines.pop()  # after the last newline: empty, or a line torn by a kill
    entries = [e for e in map(parse_line, lines) if e is not None]
    return entries, not tail and len(entries) == len(lines)


def read_all(out: Path) -> Iterator[tuple[Path, str, int, bytes]]:
    """Every entry of every pack of ``out``: (its pack, id, index, base64)."""
    for path in pack_files(out):
        for mid, index, b64 in read_pack(path)[0]:
            yield path, mid, index, b64


def find(out: Path, index: int) -> dict[str, Any] | None:
    """The doc of match ``index`` in the packs of ``out``, or None."""
    path = out / FOLDER / pack_name(index)
    if not path.is_file():
        return None
    found = [b64 for _, i, b64 in read_pack(path)[0] if i == index]
    return inflate(found[-1]) if found else None


def _sorted_bytes(entries: Iterable[tuple[int, bytes]]) -> bytes:
    """A pack's bytes: its lines, one per index (the last given wins), in index order."""
    return b"".join(line for _, line in sorted(dict(entries).items()))


class PackWriter(ClosedOnExit):
    """Writes pack lines as matches finish (see the module doc). A fresh run (not
    ``resume``) starts without packs: those of an earlier run are removed with its journal."""

    def __init__(self, out: Path, resume: bool, window: int = WINDOW) -> None:
        self.folder = out / FOLDER
        self.window = window
        self._heap: list[tuple[int, bytes]] = []
        self._last: dict[int, int] = {}  # pack number -> highest index written in it
        self._fh: IO[bytes] | None = None
        self._open = -1
        try:
            if not resume and self.folder.exists():
                shutil.rmtree(self.folder)
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_error(self.folder, exc) from exc

    def add(self, index: int, line: bytes) -> None:
        """Take the line of match ``index`` (``b""``: none); write the lowest held past the window."""
        if not line:
            return
        heapq.heappush(self._heap, (index, line))
        if len(self._heap) > self.window:
            self._write(*heapq.heappop(self._heap))

    def close(self) -> None:
        """Write every line held, in index order, and close."""
        try:
            while self._heap:
                self._write(*heapq.heappop(self._heap))
        finally:
            if self._fh is not None:
                self._fh.close()
                self._fh = None

    def _write(self, index: int, line: bytes) -> None:
        number = index // PER_PACK
        path = self.folder / pack_name(index)
        try:
            last = self._last.get(number)
            if last is None:
                last = self._last[number] = _last_index(path)
            if index > last:
                if self._open != number or self._fh is None:
                    if self._fh is not None:
                        self._fh.close()
                    self._fh, self._open = open(path, "ab", buffering=0), number  # noqa: SIM115
                self._fh.write(line)
            else:  # a match that finished after a higher index was written: its place, by a rewrite
                if self._fh is not None and self._open == number:
                    self._fh.close()
                    self._fh, self._open = None, -1
                entries = [(i, _line(m, i, b)) for m, i, b in read_pack(path)[0]]
                atomic_write(path, _sorted_bytes([*entries, (index, line)]))
            self._last[number] = max(last, index)
        except OSError as exc:
            raise write_error(path, exc) from exc


def _line(mid: str, index: int, b64: bytes) -> bytes:
    return b'replayPack("%s",%d,"%s");\n' % (mid.encode(), index, b64)


def _last_index(path: Path) -> int:
    """The highest index in the pack at ``path`` (-1 when there is none)."""
    if not path.is_file():
        return -1
    return max((i for _, i, _ in read_pack(path)[0]), default=-1)


def repair(out: Path, journal: Mapping[int, str]) -> set[int]:
    """Make the packs of ``out`` hold only matches of ``journal`` (index -> id), in index
    order, without a torn line; return the indexes they hold."""
    present: set[int] = set()
    for path in pack_files(out):
        entries, whole = read_pack(path)
        kept = [(i, _line(m, i, b)) for m, i, b in entries if journal.get(i) == m and pack_name(i) == path.name]
        data = _sorted_bytes(kept)
        present.update(i for i, _ in kept)
        if whole and len(kept) == len(entries) and data == b"".join(_line(*e) for e in entries):
            continue
        if data:
            atomic_write(path, data)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
    return present


def fill(
    writer: PackWriter,
    entries: Entries,
    records: Iterable[Mapping[str, Any]],
    find: Callable[[set[str]], Mapping[str, Transcript]],
) -> int:
    """Give ``writer`` the lines of ``records`` (journal lines missing from the packs),
    their transcripts from ``find`` (ids -> transcript); return how many."""
    wanted = {str(r["id"]): record_fields(r) for r in records}
    if not wanted:
        return 0
    found = find(set(wanted))
    for mid, rec in sorted(wanted.items(), key=lambda kv: int(kv[1]["index"])):
        tr = found.get(mid)
        if tr is not None:
            writer.add(int(rec["index"]), entries.line(rec, tr))
    return len(wanted)
