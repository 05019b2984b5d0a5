"""Standings from match records (pure): the same records always give the same table.

Bots are ordered by mean rank (lower is better), then mean score in the game's sense,
then wins, then name; a win is a rank of 1. In cooperative games a bot is credited once
per match it played in, ordered by mean score, and wins by the ``won`` stat. What counts
as one result (a "credit") is decided once, in ``columns.credit_mask``, and the verdicts
use the same credits. A bot disqualified in any record ranks "DQ", below every other bot, with a note
from its faults and decisions before that record. Response times and voided decisions
vary from run to run, so they live apart (``compute_timings``, ``timings.json``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from referee.games.base import Game
from referee.record import FAULT_KINDS, MatchRecord
from referee.stats.columns import LATENCY_BUCKETS, Columns, build_columns, credit_mask, wins
from referee.store.timings import nearest_rank

DQ = "DQ"  # the rank shown for a disqualified bot


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
    """One row per bot, ranked, from match records (see ``standings_from_columns``)."""
    return standings_from_columns(game, record_columns(game, bot_names, records))


def record_columns(game: Game, bot_names: Sequence[str], records: Iterable[MatchRecord]) -> Columns:
    """The columns of in-memory match records (tests, small tools)."""
    return build_columns((r.to_json() for r in records), bot_names, [s.key for s in game.info.stats])


def standings_from_columns(game: Game, cols: Columns) -> list[dict[str, Any]]:
    """One row per bot, ranked; every bot of the config appears, played or not (a bot
    removed from the tournament, ``cols.listed``, has no row: it only counts for others)."""
    coop = game.info.cooperative
    n = len(cols.names)
    seated = cols.seated
    credit = credit_mask(cols, coop)
    bot = cols.bot[credit]

    def per_bot(values: Any, mask: Any = None) -> Any:
        m = seated if mask is None else mask
        return np.bincount(cols.bot[m], weights=np.asarray(values)[m], minlength=n)

    matches = np.bincount(bot, minlength=n)
    win_count = per_bot(wins(cols, coop), credit)
    rank_sum = per_bot(cols.rank, credit)
    score_sum = per_bot(cols.score, credit)
    faults = [per_bot(cols.faults[:, :, k]) for k in range(len(FAULT_KINDS))]
    notice, forfeits = per_bot(cols.notice), per_bot(cols.forfeited)
    decisions, restarts = per_bot(cols.decisions), per_bot(cols.restarts)
    stat_means = {}
    for j, stat in enumerate(cols.stat_keys):
        values = cols.stats[:, :, j]
        present = credit & ~np.isnan(values)
        count = np.bincount(cols.bot[present], minlength=n)
        total = np.bincount(cols.bot[present], weights=values[present], minlength=n)
        stat_means[stat] = [total[i] / count[i] if count[i] else None for i in range(n)]
    dq = disqualifications(cols)
    rows = []
    for i, name in enumerate(cols.names[: cols.ranked]):
        played = int(matches[i])
        fault_counts = {k: int(faults[j][i]) for j, k in enumerate(FAULT_KINDS)}
        row: dict[str, Any] = {
            "rank": 0,
            "name": name,
            "matches": played,
            "wins": int(win_count[i]),
            "win_rate": rnd(win_count[i] / played) if played else None,
            "mean_rank": rnd(rank_sum[i] / played) if played else None,
            "mean_score": rnd(score_sum[i] / played) if played else None,
            "faults": {**fault_counts, "total": sum(fault_counts.values())},
            "notice_faults": int(notice[i]),
            "forfeits": int(forfeits[i]),
            "decisions": int(decisions[i]),
            "restarts": int(restarts[i]),
            "disqualified": name in dq,
            "disqualified_note": dq.get(name),
        }
        for spec in game.info.stats:
            row[spec.key] = rnd(stat_means[spec.key][i])
        rows.append(row)

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return order_key(
            row["matches"],
            row["mean_rank"],
            row["mean_score"],
            row["wins"],
            row["name"],
            lower=cols.lower,
            coop=coop,
            disqualified=row["disqualified"],
        )

    rows.sort(key=key)
    for i, row in enumerate(rows):
        prev = rows[i - 1] if i else None
        same = prev is not None and key(prev)[:3] == key(row)[:3] and row["matches"] > 0
        row["rank"] = DQ if row["disqualified"] else prev["rank"] if same and prev else i + 1
    return rows


def disqualifications(cols: Columns) -> dict[str, str]:
    """Every disqualified bot with its note: faults and decisions up to and including the
    match (in fixture order) in which it was first listed as disqualified."""
    notes: dict[str, str] = {}
    if not cols.disqualified.any():
        return notes
    act_faults = cols.faults.sum(axis=2)
    for b in sorted(set(cols.bot[cols.disqualified].tolist())):
        mine = cols.bot == b
        row = int(np.argmax((mine & cols.disqualified).any(axis=1)))
        upto = mine[: row + 1]
        faults = int(act_faults[: row + 1][upto].sum())
        decisions = int(cols.decisions[: row + 1][upto].sum())
        notes[cols.names[b]] = _dq_note(cols.ids.get(int(cols.index[row]), ""), faults, decisions)
    return notes


def compute_timings(bot_names: Sequence[str], records: Sequence[MatchRecord]) -> dict[str, Any]:
    """Response times of in-memory records, exact: per bot decisions, p50, p90, p99 and max ms
    (nearest rank), voided decisions of the matches it sat in; the run's match seconds and voided."""
    lat: dict[str, list[float]] = {n: [] for n in bot_names}
    voided = dict.fromkeys(bot_names, 0)
    for rec in records:
        for seat, name in enumerate(rec.bots):
            lat[name].extend(rec.latency_ms[seat] if seat < len(rec.latency_ms) else ())
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
        "voided": sum(r.voided for r in records),
        "bots": bots,
    }


def timings_from_columns(cols: Columns) -> dict[str, Any]:
    """Response times per bot (decisions, p50, p90, p99, max ms: upper edges of a log-scale
    histogram, 100 bins per decade), voided decisions of the matches it sat in, and the
    run's total match seconds and voided decisions."""
    n = len(cols.names)
    # a bot sitting several seats of one match counts that match's voided decisions once
    first = credit_mask(cols, True)
    voided = np.bincount(
        cols.bot[first], weights=np.broadcast_to(cols.voided[:, None], cols.bot.shape)[first], minlength=n
    )
    bots = {}
    for i, name in enumerate(cols.names[: cols.ranked]):
        h = cols.latency_hist[i] if cols.latency_hist.shape[0] > i else np.zeros(0, np.int64)
        total = int(h.sum())
        bots[name] = {
            "decisions": total,
            "p50_ms": _hist_percentile(h, 50),
            "p90_ms": _hist_percentile(h, 90),
            "p99_ms": _hist_percentile(h, 99),
            "max_ms": rnd(float(cols.latency_max[i]), 3) if total else None,
            "voided": int(voided[i]),
        }
    return {
        "matches": cols.matches,
        "match_seconds": rnd(cols.duration_s),
        "voided": int(cols.voided.sum()),
        "bots": bots,
    }


def _hist_percentile(h: Any, q: float) -> float | None:
    """The nearest-rank ``q`` percentile of a response-time histogram (a bin's upper edge)."""
    nz = np.flatnonzero(h)  # the empty bins change nothing: skipped (most are empty)
    b = nearest_rank(zip(nz.tolist(), h[nz].tolist()), int(h.sum()), q)
    return None if b is None else rnd(LATENCY_BUCKETS.upper(b), 3)


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
