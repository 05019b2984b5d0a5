"""Keys of the tournament file, declared once as dataclass fields.

``setting(...)`` declares a key (type, default, bounds or choices, meaning) on the field
it fills; the parser's checks and messages, the field defaults and ``docs/config.md``
all come from that declaration.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields
from typing import Any


class _Required:
    def __repr__(self) -> str:
        return "required"


REQUIRED: Any = _Required()  # the default of a key that must be given


@dataclass(frozen=True)
class Key:
    """One key of the tournament file: its type, default, bounds or choices and meaning."""

    type: type
    default: Any = REQUIRED
    minimum: float | None = None  # at least this
    above: float | None = None  # more than this
    maximum: float | None = None  # at most this
    below: float | None = None  # less than this
    unit: str = ""  # after the lower bound in the message ("1 deal")
    note: str = ""  # after the bounds in the message ("(0: no limit)")
    choices: tuple[str, ...] = ()
    what: str = "value"  # "unknown <what> 'x'"
    explain: str = ""  # what the choices mean, in the message
    doc: str = ""

    def problem(self, value: Any) -> str | None:
        """Why ``value`` (already of the right type) is refused, or None."""
        if self.choices:
            if value in self.choices:
                return None
            explain = self.explain or "one of: " + ", ".join(self.choices)
            return f"unknown {self.what} {value!r}{hint(value, self.choices)} ({explain})"
        if self.bounds and not self._within(value):
            return f"must be {self.bounds}{' ' + self.note if self.note else ''}, got {value}"
        return None

    @property
    def bounds(self) -> str:
        """The allowed range in words ("at least 1", "above 0 and at most 1"), or ""."""
        parts = []
        if self.minimum is not None:
            parts.append(f"at least {_num(self.minimum)}{self.unit}")
        if self.above is not None:
            parts.append(f"above {_num(self.above)}")
        if self.maximum is not None:
            parts.append(f"at most {_num(self.maximum)}")
        if self.below is not None:
            parts.append(f"below {_num(self.below)}")
        return " and ".join(parts)

    def _within(self, value: float) -> bool:
        # written so that NaN is outside every range
        return (
            (self.minimum is None or value >= self.minimum)
            and (self.above is None or value > self.above)
            and (self.maximum is None or value <= self.maximum)
            and (self.below is None or value < self.below)
        )


def setting(
    default: Any = REQUIRED,
    *,
    kind: type | None = None,
    derived: bool = False,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
    unit: str = "",
    note: str = "",
    choices: tuple[str, ...] = (),
    what: str = "value",
    explain: str = "",
    doc: str = "",
) -> Any:
    """A dataclass field that is a key of the tournament file, declared once.

    ``default`` is the key's value when the file leaves it out (and the field's default);
    ``derived``: the parser computes the field from it (no field default); ``kind`` the
    value's type in the file when the default does not tell it."""
    typ = kind or type(default)
    key = Key(typ, default, minimum, above, maximum, below, unit, note, choices, what, explain, doc)
    meta = {"key": key}
    if default is REQUIRED or derived:
        return field(metadata=meta)
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


def choice(choices: tuple[str, ...], what: str = "value", *, explain: str = "", doc: str = "") -> Any:
    """A key of the file that takes one of ``choices``, the first by default; ``explain``
    (what they mean) is shown when a value is refused, and is the doc unless one is given."""
    return setting(choices[0], choices=choices, what=what, explain=explain, doc=doc or explain)


def keys_of(cls: type) -> dict[str, Key]:
    """The file keys a config dataclass declares, in declaration order."""
    return {f.name: f.metadata["key"] for f in fields(cls) if "key" in f.metadata}


def hint(word: str, choices: Any) -> str:
    """ " (did you mean 'x'?)" for the choice closest to ``word``, or ""."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def type_name(value: Any) -> str:
    """The TOML type of ``value`` in words ("an integer", "a table")."""
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _num(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"
