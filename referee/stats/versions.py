"""Each bot's versions over a journal: which versions played, ordered by their first match,
and how many matches each (pure; the lines are watched as they stream by)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any


class VersionTally:
    """Counts the ``versions`` of journal lines as they stream to another reader.

    A bot's versions are ordered by the lowest fixture index each played (then by id): a
    version changes only between runs, so this is the order of the runs, and it depends
    on the set of lines alone, not on their order in the file (the standings are a pure
    function of the journal)."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, int]] = {}  # bot -> version -> matches
        self.first: dict[str, dict[str, int]] = {}  # bot -> version -> lowest fixture index
        self.seen = False

    def watch(self, records: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """``records`` unchanged, each line's versions counted on the way."""
        counts, first = self.counts, self.first
        for doc in records:
            versions = doc.get("versions")
            if versions:
                self.seen = True
                for bot, v in dict(zip(doc["bots"], versions)).items():  # a match once per bot
                    per = counts.get(bot)
                    if per is None:
                        per = counts[bot] = {}
                    per[v] = per.get(v, 0) + 1
                    low = first.setdefault(bot, {})
                    index = int(doc.get("index", 0))
                    low[v] = min(low.get(v, index), index)
            yield doc

    def fields(self, bot: str) -> dict[str, Any]:
        """``version`` (the latest) and ``versions`` [{version, matches}] (oldest first) of ``bot``."""
        per = self.counts.get(bot, {})
        low = self.first.get(bot, {})
        order = sorted(per, key=lambda v: (low[v], v))
        return {
            "version": order[-1] if order else None,
            "versions": [{"version": v, "matches": per[v]} for v in order],
        }
