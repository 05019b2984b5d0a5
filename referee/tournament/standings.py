"""Standings from match records (pure): the same records always give the same table.

Bots are ordered by mean rank (lower is better), then mean score in the game's sense,
then wins, then name. A win is a rank of 1 (shared ranks count for every holder).

Cooperative games: every seat shares the table's score, so a bot is credited once per
match it played in (however many seats it held), bots are ordered by mean score, and
a win is a match whose ``won`` stat is 1.

What counts as one result of a bot (a "credit") is decided once, in ``credits``, and
the verdicts (intervals, ratings) use the same credits, so their point estimates are
the standings' own numbers.

Optional record fields (absent in older journals: zero / empty): ``restarts`` (per
seat, restarts of its managed bot during the match, summed per bot) and
``disqualified`` (seats whose bot was already disqualified for its fault rate and was
played by the fallback). A bot listed as disqualified in any record is ranked "DQ", below every other bot,
with a note computed from its faults and decisions in the fixtures before that record.

Response times are not standings: they differ from run to run, so they live apart in
``compute_timings`` (``timings.json``), and the standings stay byte-for-byte stable.
So does ``voided`` (decisions replayed because the referee itself was late): it
depends on the referee's load, not on the bots.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..games.base import Game
from ..record import FAULT_KINDS, MatchRecord

DQ = "DQ"  # the rank shown for a disqualified bot


@dataclass(frozen=True)
class Credit:
    """One result credited to a bot: its score, rank and win in one seat of a record."""

    seat: int
    name: str
    score: float
    rank: int
    win: bool


def credits(rec: MatchRecord, coop: bool) -> list[Credit]:
    """The results ``rec`` credits: every seat, or in cooperative games each bot once."""
    out: list[Credit] = []
    seen: set[str] = set()
    for seat, name in enumerate(rec.bots):
        if coop and name in seen:
            continue
        seen.add(name)
        win = rec.stats[seat].get("won", 0) == 1 if coop else rec.ranks[seat] == 1
        out.append(Credit(seat, name, float(rec.scores[seat]), int(rec.ranks[seat]), bool(win)))
    return out


def disqualifications(records: Iterable[MatchRecord]) -> dict[str, str]:
    """Every disqualified bot with its note, from the records in fixture order."""
    faults: dict[str, int] = {}
    decisions: dict[str, int] = {}
    notes: dict[str, str] = {}
    for rec in sorted(records, key=lambda r: r.index):
        # a bot can be disqualified during a match: the decisions it was asked in that
        # match came before, so they count toward its note
        for seat, name in enumerate(rec.bots):
            decisions[name] = decisions.get(name, 0) + rec.decisions[seat]
        for fault in rec.faults:
            if fault["phase"] == "act":
                name = rec.bots[fault["seat"]]
                faults[name] = faults.get(name, 0) + 1
        for seat in rec.disqualified:
            name = rec.bots[seat]
            if name not in notes:
                notes[name] = _dq_note(rec.id, faults.get(name, 0), decisions.get(name, 0))
    return notes


def order_key(
    matches: int,
    mean_rank: float | None,
    mean_score: float | None,
    wins: int,
    name: str,
    *,
    lower: bool,
    coop: bool,
    disqualified: bool,
) -> tuple[Any, ...]:
    """The sort key of a leaderboard row; rows whose first three items are equal share a rank.

    Played bots come first, then bots without a match, then disqualified bots.
    """
    if matches == 0 or mean_score is None:
        return (2 if disqualified else 1, 0.0, 0.0, 0, name)
    group = 2 if disqualified else 0
    score = mean_score if lower else -mean_score
    if coop or mean_rank is None:
        return (group, score, 0.0, -wins, name)
    return (group, mean_rank, score, -wins, name)


def compute_standings(game: Game, bot_names: Sequence[str], records: Sequence[MatchRecord]) -> list[dict[str, Any]]:
    """One row per bot, ranked; every bot of the config appears, played or not."""
    lower = records[0].lower_is_better if records else False
    coop = game.info.cooperative
    per: dict[str, dict[str, Any]] = {
        n: {
            "scores": [],
            "ranks": [],
            "wins": 0,
            "faults": dict.fromkeys(FAULT_KINDS, 0),
            "phase_faults": 0,
            "decisions": 0,
            "stats": {s.key: [] for s in game.info.stats},
            "forfeits": 0,
            "restarts": 0,
        }
        for n in bot_names
    }
    for rec in sorted(records, key=lambda r: r.index):
        for seat, name in enumerate(rec.bots):
            p = per[name]
            p["decisions"] += rec.decisions[seat]
            p["forfeits"] += seat in rec.forfeited
            p["restarts"] += rec.restarts[seat] if seat < len(rec.restarts) else 0
        for c in credits(rec, coop):
            p = per[c.name]
            p["scores"].append(c.score)
            p["ranks"].append(c.rank)
            p["wins"] += c.win
            for stat, values in p["stats"].items():
                if stat in rec.stats[c.seat]:
                    values.append(rec.stats[c.seat][stat])
        for fault in rec.faults:
            p = per[rec.bots[fault["seat"]]]
            if fault["phase"] == "act":
                p["faults"][fault["kind"]] += 1
            else:
                p["phase_faults"] += 1
    dq = disqualifications(records)
    rows = []
    for name in bot_names:
        p = per[name]
        n = len(p["scores"])
        row: dict[str, Any] = {
            "rank": 0,
            "name": name,
            "matches": n,
            "wins": p["wins"],
            "win_rate": rnd(p["wins"] / n) if n else None,
            "mean_rank": rnd(statistics.fmean(p["ranks"])) if n else None,
            "mean_score": rnd(statistics.fmean(p["scores"])) if n else None,
            "faults": {**p["faults"], "total": sum(p["faults"].values())},
            "notice_faults": p["phase_faults"],
            "forfeits": p["forfeits"],
            "decisions": p["decisions"],
            "restarts": p["restarts"],
            "disqualified": name in dq,
            "disqualified_note": dq.get(name),
        }
        for spec in game.info.stats:
            values = p["stats"][spec.key]
            row[spec.key] = rnd(statistics.fmean(values)) if values else None
        rows.append(row)

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return order_key(
            row["matches"],
            row["mean_rank"],
            row["mean_score"],
            row["wins"],
            row["name"],
            lower=lower,
            coop=coop,
            disqualified=row["disqualified"],
        )

    rows.sort(key=key)
    for i, row in enumerate(rows):
        prev = rows[i - 1] if i else None
        same = prev is not None and key(prev)[:3] == key(row)[:3] and row["matches"] > 0
        row["rank"] = DQ if row["disqualified"] else prev["rank"] if same and prev else i + 1
    return rows


def compute_timings(bot_names: Sequence[str], records: Sequence[MatchRecord]) -> dict[str, Any]:
    """Response times per bot (decisions, p50, p90, p99, max ms, voided decisions of the
    matches it sat in) and the run's total match seconds and voided decisions."""
    lat: dict[str, list[float]] = {n: [] for n in bot_names}
    voided = dict.fromkeys(bot_names, 0)
    for rec in records:
        for seat, name in enumerate(rec.bots):
            lat[name].extend(rec.latency_ms[seat])
        for name in set(rec.bots):
            voided[name] += rec.voided
    bots = {}
    for name in bot_names:
        values = sorted(lat[name])
        bots[name] = {
            "decisions": len(values),
            "p50_ms": rnd(percentile(values, 50)),
            "p90_ms": rnd(percentile(values, 90)),
            "p99_ms": rnd(percentile(values, 99)),
            "max_ms": rnd(values[-1]) if values else None,
            "voided": voided[name],
        }
    total = math.fsum(rec.duration_s for rec in sorted(records, key=lambda r: r.index))
    return {
        "matches": len(records),
        "match_seconds": rnd(total),
        "voided": sum(rec.voided for rec in records),
        "bots": bots,
    }


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The ``q`` percentile (0..100) by the nearest-rank method, or None when empty."""
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, math.ceil(q / 100.0 * len(sorted_values)) - 1))
    return sorted_values[k]


def rnd(x: float | None, digits: int = 4) -> float | None:
    """``x`` rounded for publishing (stable bytes; never ``-0.0``), or None."""
    return None if x is None else round(float(x), digits) + 0.0


def _dq_note(match_id: str, faults: int, decisions: int) -> str:
    share = f" ({100 * faults / decisions:.0f} %)" if decisions else ""
    return f"disqualified in {match_id}: faults in {faults} of {decisions} decisions{share}"
