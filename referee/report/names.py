"""File names of per-bot pages: safe on case-insensitive disks and on Windows."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def bot_files(names: Iterable[str]) -> dict[str, str]:
    """Each bot name's page file stem: the name in lower case, plus ``-`` and six hex digits
    of its SHA-256 when another name differs from it only in case, or when the lower-case
    name is a device name Windows reserves (``con``, ``nul``, ...). Bot names are already
    letters, digits, ``_ . -`` (config), so nothing else needs escaping."""
    names = list(names)
    folded = Counter(n.lower() for n in names)
    out = {}
    for n in names:
        low = n.lower()
        clash = folded[low] > 1 or low.split(".")[0] in _RESERVED
        out[n] = f"{low}-{hashlib.sha256(n.encode()).hexdigest()[:6]}" if clash else low
    return out
