"""Verdicts (pure): bootstrap intervals over deals, rank intervals, Plackett-Luce ratings,
head-to-head and seat bias, on seeded synthetic journals and hand-made ones with
known answers. Takes about 5 s (2 s of it the 2,000-match interval test)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.optimize import minimize

from referee.games import get_game
from referee.games.base import ranks_from_scores
from referee.record import MatchRecord
from referee.stats.standings import compute_standings
from referee.stats.verdicts import (
    HISTORY_POINTS,
    analyse,
    bootstrap_rng,
    ratio_difference_intervals,
    resample_weights,
)

pytestmark = pytest.mark.parallel

NIMMT = get_game("nimmt_plus")  # competitive, higher is better
THE_GAME = get_game("the_game")  # cooperative, lower is better


def rec(
    index: int,
    bots: list[str],
    scores: list[float],
    *,
    deal: int | None = None,
    lower: bool = False,
    ranks: list[int] | None = None,
) -> MatchRecord:
    """A journal record of a finished match (ranks from the scores unless given)."""
    return MatchRecord(
        id=f"m{index:06d}",
        index=index,
        seed=index,
        bots=bots,
        scores=scores,
        ranks=ranks or ranks_from_scores(scores, lower),
        lower_is_better=lower,
        forfeited=[],
        faults=[],
        latency_ms=[[1.0] for _ in bots],
        decisions=[1] * len(bots),
        stats=[{} for _ in bots],
        details={},
        duration_s=0.0,
        deal=deal,
    )


def synthetic(matches: int, strength: dict[str, float], seed: int = 5, noise: float = 10.0) -> list[MatchRecord]:
    """Every bot at every table, seats rotating; a bot's score is its strength plus noise."""
    rng = random.Random(seed)
    names = list(strength)
    out = []
    for i in range(matches):
        shift = i % len(names)
        seats = names[shift:] + names[:shift]
        out.append(rec(i, seats, [round(rng.gauss(strength[n], noise), 3) for n in seats]))
    return out


def width(interval: list[float]) -> float:
    return interval[1] - interval[0]


def test_intervals_shrink_as_matches_grow() -> None:
    strength = {"a": 12.0, "b": 10.0, "c": 8.0}
    runs = [analyse(NIMMT, list(strength), synthetic(n, strength), seed=1, resamples=500) for n in (20, 200, 2000)]
    for name in strength:
        score = [width(v.bots[name]["mean_score_ci"]) for v in runs]
        rank = [width(v.bots[name]["mean_rank_ci"]) for v in runs]
        assert score[0] > score[1] > score[2] > 0, (name, score)
        assert rank[0] > rank[1] > rank[2] > 0, (name, rank)


def test_a_truly_better_bot_is_first_with_rank_interval_one_to_one() -> None:
    strength = {"weak": 10.0, "strong": 30.0, "middle": 12.0, "other": 11.0}
    records = synthetic(200, strength)
    verdicts = analyse(NIMMT, list(strength), records, seed=3)
    rows = compute_standings(NIMMT, list(strength), records)
    assert rows[0]["name"] == "strong" and rows[0]["rank"] == 1
    assert verdicts.bots["strong"]["rank_interval"] == [1, 1]
    for name in ("weak", "middle", "other"):
        lo, hi = verdicts.bots[name]["rank_interval"]
        assert 2 <= lo <= hi <= 4
        assert verdicts.bots[name]["rating"]["mu"] < verdicts.bots["strong"]["rating"]["mu"]
    for row in rows:  # the standings' point estimates lie in their own intervals
        lo, hi = verdicts.bots[row["name"]]["mean_score_ci"]
        assert lo <= row["mean_score"] <= hi
        lo, hi = verdicts.bots[row["name"]]["mean_rank_ci"]
        assert lo <= row["mean_rank"] <= hi


def test_the_records_of_a_deal_are_always_resampled_together() -> None:
    # Each deal is played twice with the seats swapped; a's two scores on a deal cancel
    # out exactly, so every resample of whole deals gives a a mean score of exactly 100
    # and a mean rank of exactly 1.5. Resampling single records could not.
    rng = random.Random(11)
    paired, unpaired = [], []
    for d in range(40):
        x = round(rng.uniform(-100, 100), 2) or 1.0
        for i, (bots, scores) in enumerate(((["a", "b"], [100 + x, 100 - x]), (["b", "a"], [100 + x, 100 - x]))):
            paired.append(rec(2 * d + i, bots, scores, deal=d))
            unpaired.append(rec(2 * d + i, bots, scores))
    together = analyse(NIMMT, ["a", "b"], paired, seed=1)
    apart = analyse(NIMMT, ["a", "b"], unpaired, seed=1)
    assert together.method["deals"] == 40 and apart.method["deals"] == 80
    assert together.bots["a"]["mean_score_ci"] == [100.0, 100.0]
    assert together.bots["a"]["mean_rank_ci"] == [1.5, 1.5]
    assert width(apart.bots["a"]["mean_score_ci"]) > 20
    assert width(apart.bots["a"]["mean_rank_ci"]) > 0.1


def tables(rounds: int, duplicate: bool, seed: int, drawn: bool = False) -> list[MatchRecord]:
    """5 bots of skill 3, 1.5, 1.5, 0, -2 at 4-seat tables, laid out as the schedule does:
    round robin (every 4 of the 5, the table rotated by the round) or, ``drawn``, 5 tables a
    round of 4 bots drawn at random (format ``random``); with ``duplicate`` every table is a
    deal played in its 4 seat rotations. Score = skill + the luck of the hand held
    (N(0, 10): the deal effect) + play noise (N(0, 5))."""
    skill = {"a": 3.0, "b": 1.5, "c": 1.5, "d": 0.0, "e": -2.0}
    names = list(skill)
    rng = np.random.default_rng(seed)
    out: list[MatchRecord] = []
    for r in range(rounds):
        for left_out in reversed(names):
            combo = [n for n in names if n != left_out]
            table = [names[i] for i in rng.permutation(5)[:4]] if drawn else combo[r % 4 :] + combo[: r % 4]
            luck = rng.normal(0.0, 10.0, 4)
            for rot in range(4 if duplicate else 1):
                seats = table[rot:] + table[:rot]  # seat s holds hand s of the deal
                scores = [round(float(skill[b] + luck[s] + rng.normal(0.0, 5.0)), 3) for s, b in enumerate(seats)]
                out.append(rec(len(out), seats, scores, deal=len(out) // 4 if duplicate else None))
    return out


def test_duplicate_deals_narrow_the_published_difference_intervals() -> None:
    # 80 matches each: 20 duplicate deals vs 80 plain ones. The hand's luck cancels in a
    # bot's results over the rotations of a deal, so the neighbour differences are narrower.
    names = ["a", "b", "c", "d", "e"]
    plain = analyse(NIMMT, names, tables(16, False, 7), seed=1)
    dup = analyse(NIMMT, names, tables(4, True, 7), seed=1)
    assert plain.method["deals"] == 80 and dup.method["deals"] == 20
    for key in ("mean_rank_diff_ci", "mean_score_diff_ci"):
        wide = [width(d[key]) for d in plain.differences]
        narrow = [width(d[key]) for d in dup.differences]
        assert len(wide) == len(narrow) == 4
        assert sum(narrow) < 0.8 * sum(wide), (key, narrow, wide)


def neighbour_rank_differences(records: list[MatchRecord]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimates and 95 % intervals of the mean-rank differences of neighbours (by mean rank),
    from the array functions the leaderboard calls (without the rating fit: fast)."""
    names = sorted({b for r in records for b in r.bots})
    deals = sorted({r.index if r.deal is None else r.deal for r in records})
    count, rank = np.zeros((len(deals), len(names))), np.zeros((len(deals), len(names)))
    for r in records:
        d = deals.index(r.index if r.deal is None else r.deal)
        for bot, rk in zip(r.bots, r.ranks):
            count[d, names.index(bot)] += 1
            rank[d, names.index(bot)] += rk
    order = np.argsort(rank.sum(0) / count.sum(0), kind="stable")
    w = resample_weights(len(deals), 500, bootstrap_rng(1))
    iv = ratio_difference_intervals(w, rank, count, order[:-1], order[1:])
    return iv.est, iv.lo, iv.hi


def test_few_duplicate_deals_give_bounded_difference_intervals() -> None:
    # 5 duplicate deals on drawn tables (20 matches), 40 tournaments: the bootstrap-t divided
    # by resampled errors near 0 (resamples of 2-3 distinct deals): its mean-rank difference
    # intervals reached past +-3, where no difference can be, in 11 of them (one 1,093,207
    # wide); the
    # few-deals interval (Student-t on the jackknife error, widened to the percentile
    # interval) stays inside [-3, 3], and is narrower than without duplicate deals.
    totals = {False: 0.0, True: 0.0}
    for seed in range(40):
        for duplicate in (False, True):
            est, lo, hi = neighbour_rank_differences(tables(1 if duplicate else 4, duplicate, seed, drawn=True))
            assert ((lo > -3) & (lo <= est) & (est <= hi) & (hi < 3)).all(), (seed, duplicate, lo, hi)
            totals[duplicate] += float((hi - lo).sum())
    assert totals[True] < 0.9 * totals[False], totals


def test_verdicts_depend_on_the_records_and_seed_not_their_order() -> None:
    strength = {"a": 11.0, "b": 10.0, "c": 9.0}
    records = synthetic(60, strength)
    shuffled = records[:]
    random.Random(2).shuffle(shuffled)
    first = analyse(NIMMT, list(strength), records, seed=7, resamples=300)
    assert analyse(NIMMT, list(strength), shuffled, seed=7, resamples=300) == first
    other_seed = analyse(NIMMT, list(strength), records, seed=8, resamples=300)
    assert [other_seed.bots[n]["mean_score_ci"] for n in strength] != [first.bots[n]["mean_score_ci"] for n in strength]


def test_head_to_head_and_seat_bias_on_a_hand_made_journal() -> None:
    records = [
        rec(0, ["a", "b", "c"], [10, 20, 30]),  # ranks 3 2 1
        rec(1, ["b", "c", "a"], [5, 5, 9]),  # ranks 2 2 1
        rec(2, ["c", "a", "b"], [1, 7, 7]),  # ranks 3 1 1
    ]
    v = analyse(NIMMT, ["a", "b", "c"], list(reversed(records)), seed=1, resamples=200)
    h2h = {
        (p["bot"], p["opponent"]): (p["meetings"], p["above"], p["below"], p["ties"], p["share"])
        for p in v.head_to_head
    }
    assert len(h2h) == 6
    assert h2h[("a", "b")] == (3, 1, 1, 1, 0.5) and h2h[("b", "a")] == (3, 1, 1, 1, 0.5)
    assert h2h[("a", "c")] == (3, 2, 1, 0, 0.6667) and h2h[("c", "a")] == (3, 1, 2, 0, 0.3333)
    assert h2h[("b", "c")] == (3, 1, 1, 1, 0.5) and h2h[("c", "b")] == (3, 1, 1, 1, 0.5)
    assert v.seat_bias is not None
    seats = {s["seat"]: s for s in v.seat_bias}
    assert sorted(seats) == [0, 1, 2] and all(s["matches"] == 3 for s in seats.values())
    assert (seats[0]["mean_score"], seats[0]["mean_rank"]) == (5.3333, 2.6667)
    assert (seats[1]["mean_score"], seats[1]["mean_rank"]) == (10.6667, 1.6667)
    assert (seats[2]["mean_score"], seats[2]["mean_rank"]) == (15.3333, 1.0)
    assert seats[2]["mean_rank_ci"] == [1.0, 1.0]  # seat 2 won every match, in every resample
    lo, hi = seats[0]["mean_score_ci"]
    assert lo < 5.3333 < hi  # 3 deals: wide (Student-t on 2 degrees of freedom at least)


def test_cooperative_deals_are_compared_and_rated_as_one_game() -> None:
    # Team format: each deal played by every bot as a homogeneous team; lower is better.
    scores = {0: {"a": 10, "b": 20, "c": 10}, 1: {"a": 5, "b": 0, "c": 30}}
    records, index = [], 0
    for deal, by_bot in scores.items():
        for name, s in by_bot.items():
            records.append(rec(index, [name] * 3, [s] * 3, deal=deal, lower=True, ranks=[1, 1, 1]))
            index += 1
    v = analyse(THE_GAME, ["a", "b", "c"], records, seed=1, resamples=200)
    h2h = {(p["bot"], p["opponent"]): (p["meetings"], p["above"], p["below"], p["ties"]) for p in v.head_to_head}
    assert h2h[("a", "b")] == (2, 1, 1, 0)
    assert h2h[("a", "c")] == (2, 1, 0, 1) and h2h[("c", "a")] == (2, 0, 1, 1)
    assert v.seat_bias is None and v.bots["a"]["mean_rank_ci"] is None
    assert v.method["deals"] == 2 and v.rating_history["games"] == 2
    games = [{n: r for n, r in zip(by, ranks_from_scores([by[n] for n in by], True))} for by in scores.values()]
    mu, sigma = reference_plackett_luce(games, ["a", "b", "c"])
    for i, n in enumerate("abc"):
        assert v.bots[n]["rating"]["mu"] == pytest.approx(mu[i], abs=2e-4)
        assert v.bots[n]["rating"]["sigma"] == pytest.approx(sigma[i], abs=2e-3)


def reference_plackett_luce(games: list[dict[str, int]], names: list[str]) -> tuple[list[float], list[float]]:
    """Plain maximum likelihood of the Plackett-Luce model (ties as Breslow, prior: one win and one loss
    against a reference of strength 1) by a general optimiser, and standard errors from a numerical Hessian."""
    pos = {n: i for i, n in enumerate(names)}

    def nll(theta: np.ndarray) -> float:
        total = 0.0
        for game in games:
            for name, rank in game.items():
                rest = [m for m, r in game.items() if r >= rank]
                if len(rest) >= 2:
                    total += theta[pos[name]] - np.log(sum(np.exp(theta[pos[m]]) for m in rest))
        total += float(np.sum(theta - 2 * np.log1p(np.exp(theta))))  # the prior's win and loss
        return -total

    fit = minimize(nll, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10})
    eps, n = 1e-4, len(names)
    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            h[i, j] = (
                nll(fit.x + e_i + e_j) - nll(fit.x + e_i - e_j) - nll(fit.x - e_i + e_j) + nll(fit.x - e_i - e_j)
            ) / (4 * eps * eps)
    return list(fit.x), list(np.sqrt(np.diag(np.linalg.inv(h))))


def test_rating_is_the_plackett_luce_maximum_likelihood_and_its_history_is_thinned() -> None:
    strength = {"strong": 20.0, "weak": 5.0, "mid": 10.0}
    records = synthetic(300, strength)
    v = analyse(NIMMT, list(strength), records, seed=1, resamples=10)
    games = [dict(zip(r.bots, r.ranks)) for r in records]
    mu, sigma = reference_plackett_luce(games, list(strength))
    for i, n in enumerate(strength):
        assert v.bots[n]["rating"]["mu"] == pytest.approx(mu[i], abs=2e-4)
        assert v.bots[n]["rating"]["sigma"] == pytest.approx(sigma[i], abs=2e-3)
    shuffled = records[:]
    random.Random(3).shuffle(shuffled)
    again = analyse(NIMMT, list(strength), shuffled, seed=1, resamples=10)
    assert {n: again.bots[n]["rating"] for n in strength} == {n: v.bots[n]["rating"] for n in strength}
    hist = v.rating_history
    assert hist["games"] == 300 and len(hist["step"]) == HISTORY_POINTS
    assert hist["step"][0] == 0 and hist["step"][-1] == 300 and hist["step"] == sorted(set(hist["step"]))
    for n in strength:
        assert hist["mu"][n][0] == 0.0 and hist["mu"][n][-1] == v.bots[n]["rating"]["mu"]
    assert (
        v.bots["strong"]["rating"]["ordinal"] > v.bots["mid"]["rating"]["ordinal"] > v.bots["weak"]["rating"]["ordinal"]
    )
