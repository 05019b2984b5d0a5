"""Verdicts you can trust (pure, no I/O): how sure the standings are, and what else the
journal says about the bots.

Everything is computed from the journal records sorted by ``index`` (fixture order,
never file order), the game, the bot names (config order) and the tournament seed, so
the same journal always gives the same numbers:

- Intervals: per bot, mean score and mean rank with a 95 % bootstrap percentile
  interval. The bootstrap resamples DEALS with replacement: records sharing a ``deal``
  value form one deal and always travel together, so duplicate rotations (and team
  deals) stay paired; a record without ``deal`` is a deal of its own. Per-deal sums
  are precomputed per bot, so one resample costs O(deals) C-level additions per bot.
  The generator is a ``random.Random`` seeded from sha256 of the tournament seed.
- Rank interval: in every resample the bots are ordered by the standings' own rule
  (``standings.order_key``, shared ranks included); reported is the 2.5-97.5 %
  percentile range of each bot's position. A disqualified bot ("DQ") has none.
- Rating: OpenSkill Plackett-Luce over games in fixture order. Competitive games: each
  record is one game, each bot a team of one with its best rank in the record.
  Cooperative games: each deal is one game among the bots that played it, ranked by
  their mean score on the deal in the game's sense. Reported: mu, sigma, ordinal
  (mu - 3 sigma), and the mu of every bot after each game, thinned to at most
  ``HISTORY_POINTS`` evenly spaced games (first and last kept).
- Head-to-head, for every ordered pair (A, B): meetings (competitive: records where
  both sat; cooperative: deals both played), A above B, B above A, ties, and A's share
  (above + ties / 2) / meetings. The comparison uses the same per-game ranks as the
  rating.
- Seat bias (competitive games only: in a cooperative game every seat shares the
  table's score, so there is nothing to compare and it is None): per seat position
  (0-based, as in the journal), matches, mean score and mean rank, with intervals from
  the same resamples.

A resample in which a bot played no deal is left out of that bot's intervals. Every
float leaves through ``standings.rnd``, so published bytes are stable.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from openskill.models import PlackettLuce

from ..games.base import Game, ranks_from_scores
from ..record import MatchRecord
from .standings import credits, disqualifications, order_key, percentile, rnd

DEFAULT_RESAMPLES = 2000
CONFIDENCE = 0.95
HISTORY_POINTS = 200

Columns = tuple[list[float], list[float], list[float], list[float]]  # per deal: count, score, rank, wins
Sums = tuple[float, float, float, float]  # the same four summed over the deals of one resample
Key = tuple[str, str | int]  # ("bot", name) or ("seat", position)


@dataclass
class Verdicts:
    """What the journal says beyond the standings (see the module docstring)."""

    bots: dict[str, dict[str, Any]]
    head_to_head: list[dict[str, Any]]
    seat_bias: list[dict[str, Any]] | None
    rating_history: dict[str, Any]
    method: dict[str, Any]


def analyse(
    game: Game, bot_names: Sequence[str], records: Sequence[MatchRecord], seed: int, resamples: int = DEFAULT_RESAMPLES
) -> Verdicts:
    """Intervals, rank intervals, ratings, head-to-head and seat bias of a journal."""
    recs = sorted(records, key=lambda r: r.index)
    coop = game.info.cooperative
    lower = recs[0].lower_is_better if recs else False
    deals = group_deals(recs)
    dq = set(disqualifications(recs))
    bot_cols = bot_columns(deals, bot_names, coop)
    seat_cols = {} if coop else seat_columns(deals)
    columns: dict[Key, Columns] = {("bot", n): c for n, c in bot_cols.items()}
    columns.update({("seat", s): c for s, c in seat_cols.items()})
    sums = resample_sums(columns, len(deals), resamples if deals else 0, bootstrap_rng(seed))
    games = contests(deals, coop, lower)
    ratings, history = rate(games, bot_names)
    positions = _positions(sums, bot_names, lower=lower, coop=coop, dq=dq)
    scores = _bot_scores(recs, bot_names, coop)
    bots = {}
    for name in bot_names:
        samples = sums[("bot", name)]
        count = bot_cols[name][0]
        span = _percentile_pair(positions[name])
        bots[name] = {
            "deals": sum(1 for c in count if c),
            "mean_score_ci": _interval([s[1] / s[0] for s in samples if s[0]]),
            "mean_rank_ci": None if coop else _interval([s[2] / s[0] for s in samples if s[0]]),
            "rank_interval": None if name in dq or not any(count) or span is None else [int(span[0]), int(span[1])],
            "rating": ratings[name],
            "score_summary": _summary(sorted(scores[name])),
        }
    return Verdicts(
        bots=bots,
        head_to_head=head_to_head(games, bot_names),
        seat_bias=None if coop else _seat_bias(seat_cols, sums),
        rating_history=history,
        method={
            "unit": "deal",
            "deals": len(deals),
            "resamples": resamples,
            "confidence": CONFIDENCE,
            "interval": "bootstrap percentile",
            "rng": "random.Random seeded from sha256 of the tournament seed",
            "rating": "OpenSkill Plackett-Luce (mu 25, sigma 25/3), ordinal = mu - 3 sigma",
            "rating_games": len(games),
        },
    )


def deal_key(rec: MatchRecord) -> tuple[str, int]:
    """The deal ``rec`` belongs to: its ``deal`` value, else a deal of its own."""
    return ("match", rec.index) if rec.deal is None else ("deal", rec.deal)


def group_deals(records: Sequence[MatchRecord]) -> list[list[MatchRecord]]:
    """The records grouped by deal, deals in the order of their first fixture."""
    deals: dict[tuple[str, int], list[MatchRecord]] = {}
    for rec in sorted(records, key=lambda r: r.index):
        deals.setdefault(deal_key(rec), []).append(rec)
    return list(deals.values())


def bootstrap_rng(seed: int) -> random.Random:
    """The resampling generator of the tournament with ``seed`` (never the global one)."""
    return random.Random(int.from_bytes(hashlib.sha256(f"verdicts/{seed}".encode()).digest()[:8], "big"))


def bot_columns(deals: Sequence[Sequence[MatchRecord]], bot_names: Sequence[str], coop: bool) -> dict[str, Columns]:
    """Per bot and deal: credited results, score sum, rank sum and wins."""
    cols = {n: _zero_columns(len(deals)) for n in bot_names}
    for d, deal in enumerate(deals):
        for rec in deal:
            for c in credits(rec, coop):
                _add(cols[c.name], d, c.score, c.rank, c.win)
    return cols


def seat_columns(deals: Sequence[Sequence[MatchRecord]]) -> dict[int, Columns]:
    """Per seat position and deal: matches, score sum, rank sum and wins."""
    seats = max((len(rec.bots) for deal in deals for rec in deal), default=0)
    cols = {s: _zero_columns(len(deals)) for s in range(seats)}
    for d, deal in enumerate(deals):
        for rec in deal:
            for s in range(len(rec.bots)):
                _add(cols[s], d, float(rec.scores[s]), rec.ranks[s], rec.ranks[s] == 1)
    return cols


def resample_sums(
    columns: Mapping[Key, Columns], n_deals: int, resamples: int, rng: random.Random
) -> dict[Key, list[Sums]]:
    """For each resample of the deals, every entity's column sums over the drawn deals."""
    out: dict[Key, list[Sums]] = {k: [] for k in columns}
    population = range(n_deals)
    for _ in range(resamples):
        pick = _picker(rng.choices(population, k=n_deals))
        for key, (count, score, rank, wins) in columns.items():
            out[key].append((sum(pick(count)), sum(pick(score)), sum(pick(rank)), sum(pick(wins))))
    return out


def contests(deals: Sequence[Sequence[MatchRecord]], coop: bool, lower: bool) -> list[dict[str, int]]:
    """The rated games in fixture order, each a rank per bot (1 is best); at least 2 bots each."""
    games: list[dict[str, int]] = []
    for deal in deals:
        if coop:
            scores: dict[str, list[float]] = {}
            for rec in deal:
                for c in credits(rec, True):
                    scores.setdefault(c.name, []).append(c.score)
            means = [statistics.fmean(v) for v in scores.values()]
            games.append(dict(zip(scores, ranks_from_scores(means, lower))))
            continue
        for rec in deal:
            best: dict[str, int] = {}
            for c in credits(rec, False):
                best[c.name] = min(best.get(c.name, c.rank), c.rank)
            games.append(best)
    return [g for g in games if len(g) >= 2]


def rate(
    games: Sequence[Mapping[str, int]], bot_names: Sequence[str]
) -> tuple[dict[str, dict[str, float | None]], dict[str, Any]]:
    """OpenSkill Plackett-Luce ratings after ``games`` and the (thinned) history of mu."""
    model = PlackettLuce()
    ratings = {n: model.rating() for n in bot_names}
    snapshots = [[ratings[n].mu for n in bot_names]]
    for game in games:
        names = list(game)
        rated = model.rate([[ratings[n]] for n in names], ranks=[game[n] for n in names])
        for name, team in zip(names, rated):
            ratings[name] = team[0]
        snapshots.append([ratings[n].mu for n in bot_names])
    steps = _thin(len(snapshots))
    history = {
        "games": len(games),
        "step": steps,
        "mu": {n: [rnd(snapshots[s][i]) for s in steps] for i, n in enumerate(bot_names)},
    }
    final = {
        n: {"mu": rnd(r.mu), "sigma": rnd(r.sigma), "ordinal": rnd(r.mu - 3 * r.sigma)} for n, r in ratings.items()
    }
    return final, history


def head_to_head(games: Sequence[Mapping[str, int]], bot_names: Sequence[str]) -> list[dict[str, Any]]:
    """Every ordered pair of distinct bots: meetings, above, below, ties and share."""
    tally = {(a, b): [0, 0, 0, 0] for a in bot_names for b in bot_names if a != b}
    for game in games:
        for a, ra in game.items():
            for b, rb in game.items():
                if a != b:
                    t = tally[(a, b)]
                    t[0] += 1
                    t[1 if ra < rb else 2 if ra > rb else 3] += 1
    return [
        {
            "bot": a,
            "opponent": b,
            "meetings": m,
            "above": x,
            "below": y,
            "ties": z,
            "share": rnd((x + z / 2) / m) if m else None,
        }
        for (a, b), (m, x, y, z) in tally.items()
    ]


def _positions(
    sums: Mapping[Key, list[Sums]], bot_names: Sequence[str], *, lower: bool, coop: bool, dq: set[str]
) -> dict[str, list[int]]:
    """Each bot's leaderboard position in every resample (shared ranks as in the standings)."""
    out: dict[str, list[int]] = {n: [] for n in bot_names}
    resamples = len(sums[("bot", bot_names[0])]) if bot_names else 0
    for r in range(resamples):
        keys = {}
        for n in bot_names:
            count, score, rank, wins = sums[("bot", n)][r]
            keys[n] = order_key(
                int(count),
                rank / count if count else None,
                score / count if count else None,
                int(wins),
                n,
                lower=lower,
                coop=coop,
                disqualified=n in dq,
            )[:3]
        for n in bot_names:
            out[n].append(1 + sum(1 for m in bot_names if keys[m] < keys[n]))
    return out


def _seat_bias(seat_cols: Mapping[int, Columns], sums: Mapping[Key, list[Sums]]) -> list[dict[str, Any]]:
    rows = []
    for seat in sorted(seat_cols):
        count, score, rank, _ = (sum(c) for c in seat_cols[seat])
        samples = sums[("seat", seat)]
        rows.append(
            {
                "seat": seat,
                "matches": int(count),
                "mean_score": rnd(score / count) if count else None,
                "mean_score_ci": _interval([s[1] / s[0] for s in samples if s[0]]),
                "mean_rank": rnd(rank / count) if count else None,
                "mean_rank_ci": _interval([s[2] / s[0] for s in samples if s[0]]),
            }
        )
    return rows


def _bot_scores(records: Sequence[MatchRecord], bot_names: Sequence[str], coop: bool) -> dict[str, list[float]]:
    """Every credited score of every bot."""
    out: dict[str, list[float]] = {n: [] for n in bot_names}
    for rec in records:
        for c in credits(rec, coop):
            out[c.name].append(c.score)
    return out


def _summary(sorted_scores: Sequence[float]) -> dict[str, float | None] | None:
    """Five-number summary (nearest-rank quartiles) of a bot's credited scores."""
    if not sorted_scores:
        return None
    return {
        "min": rnd(sorted_scores[0]),
        "q1": rnd(percentile(sorted_scores, 25)),
        "median": rnd(percentile(sorted_scores, 50)),
        "q3": rnd(percentile(sorted_scores, 75)),
        "max": rnd(sorted_scores[-1]),
    }


def _interval(values: list[float]) -> list[float | None] | None:
    """The rounded central ``CONFIDENCE`` percentile interval of bootstrap ``values``."""
    pair = _percentile_pair(values)
    return None if pair is None else [rnd(pair[0]), rnd(pair[1])]


def _percentile_pair(values: Sequence[float]) -> tuple[float, float] | None:
    """The central ``CONFIDENCE`` percentile interval of ``values`` (nearest rank)."""
    ordered = sorted(values)
    tail = (1 - CONFIDENCE) / 2 * 100
    lo, hi = percentile(ordered, tail), percentile(ordered, 100 - tail)
    return None if lo is None or hi is None else (lo, hi)


def _thin(n: int) -> list[int]:
    """At most ``HISTORY_POINTS`` evenly spaced indices of ``range(n)``, first and last kept."""
    if n <= HISTORY_POINTS:
        return list(range(n))
    return sorted({round(i * (n - 1) / (HISTORY_POINTS - 1)) for i in range(HISTORY_POINTS)})


def _picker(indices: list[int]) -> Callable[[Sequence[float]], Sequence[float]]:
    """Picks the drawn deals out of a column (itemgetter, also for a single deal)."""
    if len(indices) == 1:
        only = indices[0]
        return lambda column: (column[only],)
    return itemgetter(*indices)


def _zero_columns(n_deals: int) -> Columns:
    return ([0.0] * n_deals, [0.0] * n_deals, [0.0] * n_deals, [0.0] * n_deals)


def _add(cols: Columns, deal: int, score: float, rank: int, win: bool) -> None:
    cols[0][deal] += 1
    cols[1][deal] += score
    cols[2][deal] += rank
    cols[3][deal] += win
