"""The array verdicts equal a plain reference computation (issue 13): small random
tournaments, duplicate and not, cooperative and not, with forfeits, faults and a
disqualified bot; the reference is written here with loops over the records."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest

from referee.games import get_game
from referee.games.base import ranks_from_scores
from referee.record import MatchRecord
from referee.stats.standings import compute_standings, record_columns
from referee.stats.verdicts import (
    CONFIDENCE,
    analyse,
    bootstrap_rng,
    ratio_intervals,
    resample_weights,
)

pytestmark = pytest.mark.parallel

NAMES = ["a", "b", "c", "d", "e"]


def tournament(seed: int, coop: bool, dup: bool) -> list[MatchRecord]:
    rng = random.Random(seed)
    out: list[MatchRecord] = []
    deals = rng.randint(3, 9)
    for d in range(deals):
        table = rng.sample(NAMES, 3)
        rotations = 3 if dup else 1
        for r in range(rotations):
            seats = table[r:] + table[:r]
            if coop:
                seats = [seats[0]] * 2 + [seats[1]]  # a bot may hold several seats
                left = float(rng.randint(0, 20))
                scores = [left] * 3
                ranks = [1, 1, 1]
                stats = [{"cards_left": left, "won": 1 if left == 0 else 0}] * 3
            else:
                scores = [float(rng.randint(0, 30)) for _ in seats]
                ranks = ranks_from_scores(scores, False)
                stats = [{"heads_per_hand": float(rng.randint(0, 9))} for _ in seats]
            i = len(out)
            faults = [{"seat": 1, "phase": "act", "kind": rng.choice(["timeout", "illegal"])}] if i % 4 == 1 else []
            out.append(
                MatchRecord(
                    id=f"m{i:06d}",
                    index=i,
                    seed=i,
                    bots=seats,
                    scores=scores,
                    ranks=ranks,
                    lower_is_better=coop,
                    forfeited=[2] if i % 5 == 2 else [],
                    faults=faults,
                    latency_ms=[[1.0] for _ in seats],
                    decisions=[3, 2, 4],
                    stats=stats,
                    details={},
                    duration_s=0.0,
                    disqualified=[0] if (i > 6 and seats[0] == "e") else [],
                    extra={"deal": d} if dup else {},
                )
            )
    return out


def credits(rec: MatchRecord, coop: bool) -> list[tuple[int, str]]:
    seen: set[str] = set()
    out = []
    for seat, name in enumerate(rec.bots):
        if coop and name in seen:
            continue
        seen.add(name)
        out.append((seat, name))
    return out


CASES = [(seed, coop, dup) for seed in range(6) for coop in (False, True) for dup in (False, True)]


@pytest.mark.parametrize(("seed", "coop", "dup"), CASES)
def test_array_verdicts_equal_the_plain_reference(seed: int, coop: bool, dup: bool) -> None:
    game = get_game("the_game" if coop else "nimmt_plus")
    records = tournament(seed, coop, dup)
    rows = {r["name"]: r for r in compute_standings(game, NAMES, records)}
    # standings
    score, rank, wins, faults = defaultdict(list), defaultdict(list), defaultdict(int), defaultdict(int)
    forfeits, decisions = defaultdict(int), defaultdict(int)
    for rec in records:
        for seat, name in credits(rec, coop):
            score[name].append(rec.scores[seat])
            rank[name].append(rec.ranks[seat])
            wins[name] += (rec.stats[seat].get("won") == 1) if coop else rec.ranks[seat] == 1
        for seat, name in enumerate(rec.bots):
            forfeits[name] += seat in rec.forfeited
            decisions[name] += rec.decisions[seat]
        for f in rec.faults:
            faults[rec.bots[f["seat"]]] += 1
    for name in NAMES:
        r = rows[name]
        assert r["matches"] == len(score[name]) and r["wins"] == wins[name]
        if score[name]:
            assert r["mean_score"] == round(sum(score[name]) / len(score[name]), 4)
            assert r["mean_rank"] == round(sum(rank[name]) / len(rank[name]), 4)
        assert r["faults"]["total"] == faults[name] and r["forfeits"] == forfeits[name]
        assert r["decisions"] == decisions[name]
        assert r["disqualified"] == any(rec.bots[s] == name for rec in records for s in rec.disqualified)
    # head-to-head: per game (match, or deal in cooperative games) each bot's best rank / mean score
    games: list[dict[str, float]] = []
    if coop:
        per_deal: dict[object, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for rec in records:
            for seat, name in credits(rec, True):
                per_deal[rec.extra.get("deal", ("m", rec.index))][name].append(rec.scores[seat])
        for by in per_deal.values():
            games.append({n: float(np.mean(v)) for n, v in by.items()})  # lower is better
    else:
        for rec in records:
            best: dict[str, float] = {}
            for seat, name in enumerate(rec.bots):
                best[name] = min(best.get(name, 99), rec.ranks[seat])
            games.append(best)
    v = analyse(game, NAMES, records, seed=seed, resamples=300)
    for p in v.head_to_head:
        a, b = p["bot"], p["opponent"]
        met = [g for g in games if a in g and b in g and len(g) >= 2]
        assert p["meetings"] == len(met)
        assert p["above"] == sum(g[a] < g[b] for g in met) and p["below"] == sum(g[a] > g[b] for g in met)
    # the bootstrap: the same draws, each resample's mean computed by a loop over the drawn deals
    cols = record_columns(game, NAMES, records)
    deal_of = {}
    for rec in records:
        deal_of.setdefault(rec.extra.get("deal", ("m", rec.index)), len(deal_of))
    n_deals = len(deal_of)
    w = resample_weights(n_deals, 300, bootstrap_rng(seed))
    assert v.method["deals"] == n_deals == cols.n_deals
    count = np.zeros((n_deals, len(NAMES)))
    total = np.zeros((n_deals, len(NAMES)))
    for rec in records:
        u = deal_of[rec.extra.get("deal", ("m", rec.index))]
        for seat, name in credits(rec, coop):
            count[u, NAMES.index(name)] += 1
            total[u, NAMES.index(name)] += rec.scores[seat]
    iv = ratio_intervals(w, total, count)
    for r in range(0, 300, 37):
        for j in range(len(NAMES)):
            drawn = [u for u in range(n_deals) for _ in range(int(w[r, u]))]
            c = sum(count[u, j] for u in drawn)
            expect = sum(total[u, j] for u in drawn) / c if c else np.nan
            assert (np.isnan(expect) and np.isnan(iv.boot[r, j])) or iv.boot[r, j] == pytest.approx(expect)
    low, high = game.info.score_bounds(3)  # a published interval is cut at the game's score range
    for j, name in enumerate(NAMES):
        got = v.bots[name]["mean_score_ci"]
        if got is not None:
            assert got == [round(max(low, iv.lo[j]), 4), round(min(high, iv.hi[j]), 4)]
            assert got[0] <= rows[name]["mean_score"] <= got[1]
    assert 0 < CONFIDENCE < 1
