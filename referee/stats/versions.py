"""Each bot's versions over a journal: which versions played, in the order they first
appear, and how many matches each (pure; the lines are watched as they stream by)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any


class VersionTally:
    """Counts the ``versions`` of journal lines as they stream to another reader.

    A bot's versions come in the order of their first line in the journal: a version
    changes only between runs, and a run appends after the runs before it, so the order
    is the order of the runs (the counts do not depend on the order at all)."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}  # bot -> version -> matches (insertion: first seen)
        self.seen = False

    def watch(self, records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """``records`` unchanged, each line's versions counted on the way."""
        counts = self.counts
        for doc in records:
            versions = doc.get("versions")
            if versions:
                self.seen = True
                for bot, v in dict(zip(doc["bots"], versions)).items():  # a match once per bot
                    per = counts.get(bot)
                    if per is None:
                        per = counts[bot] = {}
                    per[v] = per.get(v, 0) + 1
            yield doc

    def fields(self, bot: str) -> dict[str, Any]:
        """``version`` (the latest) and ``versions`` [{version, matches}] (oldest first) of ``bot``."""
        per = self.counts.get(bot, {})
        return {
            "version": next(reversed(per), None) if per else None,
            "versions": [{"version": v, "matches": n} for v, n in per.items()],
        }
