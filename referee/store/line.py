"""The shape of a journal line, declared once: ``LINE``, a table of fields with types and bounds.

Everything that touches a line's shape derives from this table: ``check_line`` (the one
validator, built from it) refuses a line with a message naming the field; the journal's
writer checks every line it writes with it and its reader every line it reads
(``store.journal``); ``referee verify`` reads through that reader; and ``stats.columns``
reads only checked lines, so it converts and never checks a shape again. The bounds are
those of the columns: counts and indices fit int64, scores stay exact in float64 sums.

A bound ``SEATS`` counts the table's seats (the length of ``bots``). Two checks derive
from the table: ``check_line`` walks it and names the first field that does not fit;
``quick_fits``, a function written out from the same table as Python source (a few
straight-line tests per field) and compiled once, as ``dataclasses`` does, accepts a
line parsed by orjson in one pass and says only yes or "not sure" (then ``check_line``
decides and names the field). A journal of a million lines is read at the speed of a
hand-written check, from nothing but the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

from referee.record import FAULT_KINDS

MAX_SEATS = 64
MAX_STR = 4096  # characters of any string field (fault details are cut to 300 when written)
MAX_DEPTH = 32  # nesting of ``details``
MAX_COUNT = 2**63 - 1  # counts and indices: int64 columns
MAX_SCORE = 1e15  # magnitude of a score: its sums stay exact in float64
SEATS = -1  # a bound that stands for the number of seats
MAX_FAULTS = 1_000_000

Fail = Callable[[str, str], NoReturn]
_NUMBERS = frozenset((int, float))
_ABSENT = object()  # a key the line does not have


class Value(Protocol):
    """What one JSON value of a line must be."""

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """Call ``fail(key, problem)`` unless ``v`` fits (``n``: the seats)."""
        ...

    def emit(self, x: str, out: Source) -> None:
        """Append to ``out`` Python statements that return False unless the value in the
        variable ``x`` fits, for a line parsed by orjson (no NaN, infinity or integer
        beyond 64 bits) and nested shallow; the variable ``n`` holds the seats."""
        ...


@dataclass
class Source:
    """Python source being written: its lines, the indent, fresh variable names."""

    lines: list[str]
    pad: str = "    "
    made: int = 0

    def add(self, line: str) -> None:
        """Append one line at the current indent."""
        self.lines.append(self.pad + line)

    def refuse_if(self, cond: str) -> None:
        """Append ``if cond: return False``."""
        self.add(f"if {cond}:")
        self.add("    return False")

    def name(self) -> str:
        """A fresh variable name."""
        self.made += 1
        return f"v{self.made}"

    @contextmanager
    def block(self, head: str) -> Iterator[None]:
        """``head`` (an ``if``/``for`` line), then the lines added inside, indented."""
        self.add(head)
        self.pad += "    "
        try:
            yield
        finally:
            self.pad = self.pad[:-4]


def _bound_src(b: int) -> str:
    return "n" if b == SEATS else "(n - 1)" if b == SEATS - 1 else repr(b)


def _bound(b: int, n: int) -> int:
    return n if b == SEATS else n - 1 if b == SEATS - 1 else b


@dataclass(frozen=True)
class Int:
    """An integer from ``lo`` to ``hi`` (``SEATS``: the seats, ``SEATS - 1``: the last seat)."""

    lo: int
    hi: int
    name: str = ""
    null: bool = False  # JSON null fits too

    def what(self, n: int) -> str:
        """The phrase the message uses."""
        lo, hi = _bound(self.lo, n), _bound(self.hi, n)
        rng = f"an integer >= {lo}" if hi >= MAX_COUNT else f"an integer from {lo} to {hi}"
        text = f"{self.name} ({rng})" if self.name else rng
        return f"{text} or null" if self.null else text

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if v is None and self.null:
            return
        if type(v) is not int or not _bound(self.lo, n) <= v <= _bound(self.hi, n):
            fail(key, f"must be {self.what(n)}")

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        cond = f"type({x}) is not int or not {_bound_src(self.lo)} <= {x} <= {_bound_src(self.hi)}"
        out.refuse_if(f"{x} is not None and ({cond})" if self.null else cond)


@dataclass(frozen=True)
class Number:
    """A finite number (an integer of at most 64 bits), of magnitude below ``limit``."""

    limit: float = math.inf

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if type(v) not in _NUMBERS:
            fail(key, f"must be a number, got {type(v).__name__}")
        if type(v) is int and v.bit_length() > 64:
            fail(key, "must be a number (an integer of at most 64 bits)")
        if not math.isfinite(v):
            fail(key, "must be a finite number")
        if not -self.limit < v < self.limit:
            fail(key, f"must be a number between -{self.limit:g} and {self.limit:g}")

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        limit = "" if self.limit == math.inf else f" or not {-self.limit!r} < {x} < {self.limit!r}"
        out.refuse_if(f"type({x}) not in _NUMBERS{limit}")


@dataclass(frozen=True)
class Text:
    """A string of ``lo`` to ``hi`` characters."""

    lo: int
    hi: int
    name: str = ""

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if type(v) is not str or not self.lo <= len(v) <= self.hi:
            what = f"a string of {self.lo}-{self.hi} characters"
            fail(key, f"must be {self.name} ({what})" if self.name else f"must be {what}")

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        out.refuse_if(f"type({x}) is not str or not {self.lo} <= len({x}) <= {self.hi}")


@dataclass(frozen=True)
class Flag:
    """true or false."""

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if type(v) is not bool:
            fail(key, "must be true or false")

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        out.refuse_if(f"type({x}) is not bool")


@dataclass(frozen=True)
class OneOf:
    """One of a few strings."""

    choices: tuple[str, ...]

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if v not in self.choices or type(v) is not str:
            fail(key, f"must be one of {', '.join(self.choices)}")

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        out.refuse_if(f"type({x}) is not str or {x} not in {self.choices!r}")


@dataclass(frozen=True)
class Tree:
    """A JSON object nested at most ``MAX_DEPTH`` deep, its numbers finite (a game's ``details``).

    ``check_line(..., walk_trees=False)`` skips the walk for a line known shallow and finite."""

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if type(v) is not dict:
            fail(key, "must be an object")

    def walk(self, v: Any, key: str, level: int, fail: Fail) -> None:
        """``v`` nested at most ``MAX_DEPTH - level`` deep, its numbers finite."""
        if level > MAX_DEPTH:
            fail(key, f"nested deeper than {MAX_DEPTH}")
        if isinstance(v, dict):
            for x in v.values():
                self.walk(x, key, level + 1, fail)
        elif isinstance(v, list):
            for x in v:
                self.walk(x, key, level + 1, fail)
        elif isinstance(v, float) and not math.isfinite(v):
            fail(key, "holds a non-finite number")

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``: no walk (the quick check is for lines nested shallow)."""
        out.refuse_if(f"type({x}) is not dict")


@dataclass(frozen=True)
class NumberMap:
    """An object of numbers, its keys at most ``key_max`` characters (a seat's ``stats``)."""

    key_max: int = 64

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if type(v) is not dict:
            fail(key, "must be an object of numbers")
        for k, x in v.items():
            if len(k) > self.key_max:
                fail(key, f"has a key longer than {self.key_max} characters")
            _NUMBER.check(x, f"{key}.{k}", n, fail)

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        out.refuse_if(f"type({x}) is not dict")
        k, v = out.name(), out.name()
        with out.block(f"for {k}, {v} in {x}.items():"):
            out.refuse_if(f"len({k}) > {self.key_max} or type({v}) not in _NUMBERS")


_NUMBER = Number()


@dataclass(frozen=True)
class Field:
    """A key of an object, what its value must be and whether it may be absent."""

    key: str
    value: Value
    required: bool = True


@dataclass(frozen=True)
class Record:
    """An object with the ``fields`` (other keys are let be)."""

    fields: tuple[Field, ...]

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if type(v) is not dict:
            fail(key, "must be an object")
        check_fields(v, self.fields, n, fail, f"{key}.")

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        out.refuse_if(f"type({x}) is not dict")
        emit_fields(self.fields, x, out)


@dataclass(frozen=True)
class ListOf:
    """A list of ``lo`` to ``hi`` items, each an ``item``."""

    item: Value
    lo: int
    hi: int

    def check(self, v: Any, key: str, n: int, fail: Fail) -> None:
        """See ``Value``."""
        if type(v) is not list:
            fail(key, "must be a list")
        lo, hi = _bound(self.lo, n), _bound(self.hi, n)
        if not lo <= len(v) <= hi:
            fail(key, f"has {len(v)} entries, expected {lo if lo == hi else f'{lo}-{hi}'}")
        for i, x in enumerate(v):
            self.item.check(x, f"{key}[{i}]", n, fail)

    def emit(self, x: str, out: Source) -> None:
        """See ``Value``."""
        lo, hi = _bound_src(self.lo), _bound_src(self.hi)
        out.refuse_if(f"type({x}) is not list or not {lo} <= len({x}) <= {hi}")
        item = out.name()
        with out.block(f"for {item} in {x}:"):
            self.item.emit(item, out)


def emit_fields(fields: Sequence[Field], doc: str, out: Source) -> None:
    """Append the statements that return False unless the ``fields`` of the object in
    the variable ``doc`` fit (see ``Value.emit``)."""
    for f in fields:
        x = out.name()
        out.add(f"{x} = {doc}.get({f.key!r}, _ABSENT)")
        if f.required:
            f.value.emit(x, out)
            continue
        with out.block(f"if {x} is not _ABSENT:"):
            f.value.emit(x, out)


def per_seat(item: Value) -> ListOf:
    """A list of one ``item`` per seat."""
    return ListOf(item, SEATS, SEATS)


COUNT = Int(0, MAX_COUNT, "a count")
SEAT = Int(0, SEATS - 1, "a seat")
SEAT_LIST = ListOf(SEAT, 0, SEATS)
NAME = Text(1, 64, "a bot name")
NOTE = Text(0, MAX_STR)

FAULT = Record(
    (
        Field("seat", SEAT),
        Field("decision", Int(0, MAX_COUNT, "a decision number", null=True), required=False),
        Field("kind", OneOf(FAULT_KINDS)),
        Field("phase", NOTE, required=False),
        Field("detail", NOTE, required=False),
        Field("bot", NOTE, required=False),
        Field("latency_ms", Number(), required=False),
    )
)

# The line, in the order its keys are written (MatchRecord.to_json) and checked.
LINE = (
    Field("id", Text(1, 64)),
    Field("index", Int(0, MAX_COUNT)),
    Field("seed", Int(0, 2**256 - 1)),
    Field("bots", ListOf(NAME, 1, MAX_SEATS)),  # its length is the number of seats
    Field("scores", per_seat(Number(MAX_SCORE))),
    Field("ranks", per_seat(Int(1, SEATS))),
    Field("lower_is_better", Flag()),
    Field("forfeited", SEAT_LIST),
    Field("faults", ListOf(FAULT, 0, MAX_FAULTS)),
    Field("latency_ms", per_seat(ListOf(Number(), 0, MAX_FAULTS)), required=False),  # older journals
    Field("decisions", per_seat(COUNT)),
    Field("stats", per_seat(NumberMap())),
    Field("details", Tree()),  # the game's flat summary (store.journal.journal_details)
    Field("duration_s", Number()),
    Field("deal_hash", Text(0, 64)),
    Field("restarts", per_seat(COUNT), required=False),
    Field("disqualified", SEAT_LIST, required=False),
    Field("voided", Int(0, MAX_COUNT), required=False),
    Field("deal", Int(0, MAX_COUNT), required=False),  # where several fixtures share a deal
    Field("versions", per_seat(Text(1, 64, "a version id")), required=False),  # run/versions.py
)
SEATS_KEY = "bots"


def _compile_quick() -> Callable[[Any], bool]:
    """``quick_fits``, written out from ``LINE`` and compiled once."""
    out = Source(["def quick_fits(doc):"])
    out.refuse_if(f"type(doc) is not dict or type(doc.get({SEATS_KEY!r})) is not list")
    out.add(f"n = len(doc[{SEATS_KEY!r}])")
    emit_fields(LINE, "doc", out)
    out.add("return True")
    scope: dict[str, Any] = {"_NUMBERS": _NUMBERS, "_ABSENT": _ABSENT}
    exec(compile("\n".join(out.lines) + "\n", f"<{__name__}.quick_fits>", "exec"), scope)
    fn: Callable[[Any], bool] = scope["quick_fits"]
    fn.__doc__ = "True only if ``doc``, a line parsed by orjson and nested shallow, fits ``LINE`` (False: not sure)."
    return fn


quick_fits = _compile_quick()


def check_fields(doc: dict[str, Any], fields: Sequence[Field], n: int, fail: Fail, prefix: str = "") -> None:
    """Check the ``fields`` of ``doc`` in order."""
    for f in fields:
        if f.key in doc:
            f.value.check(doc[f.key], prefix + f.key, n, fail)
        elif f.required:
            fail(prefix + f.key, "missing")


def check_line(doc: Any, fail: Fail, walk_trees: bool = True) -> None:
    """``doc`` checked against ``LINE``: ``fail(key, problem)`` at the first field that does not fit.

    ``walk_trees=False`` for a line whose nesting and numbers are known safe (see ``Tree``)."""
    if type(doc) is not dict:
        fail("", "not a JSON object")
    bots = doc.get(SEATS_KEY)
    n = len(bots) if type(bots) is list else 0
    for f in LINE:
        if f.key in doc:
            v = doc[f.key]
            f.value.check(v, f.key, n, fail)
            if walk_trees and isinstance(f.value, Tree):
                f.value.walk(v, f.key, 0, fail)
        elif f.required:
            fail(f.key, "missing")
