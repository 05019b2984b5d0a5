"""Standings from match records (pure): the same records always give the same table.

Bots are ordered by mean rank (lower is better), then mean score in the game's sense,
then wins, then name. A win is a rank of 1 (shared ranks count for every holder).

Cooperative games: every seat shares the table's score, so a bot is credited once per
match it played in (however many seats it held), bots are ordered by mean score, and
a win is a match whose ``won`` stat is 1.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from ..bots.http import FAULT_KINDS
from ..games.base import Game
from ..match import MatchRecord


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The ``q`` percentile (0..100) by the nearest-rank method, or None when empty."""
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, math.ceil(q / 100.0 * len(sorted_values)) - 1))
    return sorted_values[k]


def ci95(values: Sequence[float]) -> float | None:
    """Half-width of the 95 % confidence interval of the mean (normal approximation)."""
    if len(values) < 2:
        return None
    return 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def compute_standings(game: Game, bot_names: Sequence[str], records: Sequence[MatchRecord]) -> list[dict[str, Any]]:
    """One row per bot, ranked; every bot of the config appears, played or not."""
    lower = records[0].lower_is_better if records else False
    per: dict[str, dict[str, Any]] = {
        n: {"scores": [], "ranks": [], "wins": 0, "faults": dict.fromkeys(FAULT_KINDS, 0), "phase_faults": 0,
            "lat": [], "decisions": 0, "stats": {s.key: [] for s in game.info.stats}, "forfeits": 0}
        for n in bot_names
    }
    coop = game.info.cooperative
    for rec in sorted(records, key=lambda r: r.index):
        credited: set[str] = set()
        for seat, name in enumerate(rec.bots):
            p = per[name]
            p["lat"].extend(rec.latency_ms[seat])
            p["decisions"] += rec.decisions[seat]
            p["forfeits"] += seat in rec.forfeited
            if coop and name in credited:
                continue
            credited.add(name)
            p["scores"].append(rec.scores[seat])
            p["ranks"].append(rec.ranks[seat])
            p["wins"] += rec.stats[seat].get("won", 0) == 1 if coop else rec.ranks[seat] == 1
            for key, values in p["stats"].items():
                if key in rec.stats[seat]:
                    values.append(rec.stats[seat][key])
        for fault in rec.faults:
            p = per[rec.bots[fault["seat"]]]
            if fault["phase"] == "act":
                p["faults"][fault["kind"]] += 1
            else:
                p["phase_faults"] += 1
    rows = []
    for name in bot_names:
        p = per[name]
        lat = sorted(p["lat"])
        n = len(p["scores"])
        row: dict[str, Any] = {
            "rank": 0,
            "name": name,
            "matches": n,
            "wins": p["wins"],
            "win_rate": _r(p["wins"] / n) if n else None,
            "mean_rank": _r(statistics.fmean(p["ranks"])) if n else None,
            "mean_score": _r(statistics.fmean(p["scores"])) if n else None,
            "score_ci95": _r(ci95(p["scores"])),
            "faults": {**p["faults"], "total": sum(p["faults"].values())},
            "notice_faults": p["phase_faults"],
            "forfeits": p["forfeits"],
            "decisions": p["decisions"],
            "p50_ms": _r(percentile(lat, 50)),
            "p99_ms": _r(percentile(lat, 99)),
        }
        for spec in game.info.stats:
            values = p["stats"][spec.key]
            row[spec.key] = _r(statistics.fmean(values)) if values else None
        rows.append(row)

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        if row["matches"] == 0:
            return (1, 0.0, 0.0, 0, row["name"])
        score = row["mean_score"] if lower else -row["mean_score"]
        if coop:
            return (0, score, 0.0, -row["wins"], row["name"])
        return (0, row["mean_rank"], score, -row["wins"], row["name"])

    rows.sort(key=key)
    for i, row in enumerate(rows):
        prev = rows[i - 1] if i else None
        same = prev is not None and key(prev)[:3] == key(row)[:3] and row["matches"] > 0
        row["rank"] = prev["rank"] if same and prev else i + 1
    return rows


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(float(x), digits)
