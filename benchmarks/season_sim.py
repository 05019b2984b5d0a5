"""A season that names its winners, by simulation (issue 33): the ladder with ``top = 3``
against uniform random tables at the same budget, on synthetic bots of known strength.

Bots are Plackett-Luce with log-strengths on one of two fields: ``even`` (evenly spaced,
the best about 1.4 mean ranks ahead of the worst at 4 seats: the top bots close
together) or ``normal`` (drawn N(0, 1) afresh each season). A table's finishing order is
strength plus standard Gumbel noise (exactly Plackett-Luce). The ladder's tables come from
``referee.run.ladder.choose_epoch`` (results counted one epoch late, as the runner does);
the random tables are ``k`` distinct bots drawn uniformly. The verdicts are the ones the
leaderboard publishes (``referee.stats.places``: the looks, the claims, the rank sets,
the places), computed the same way for both policies. Printed per setting: the top 10's
joint rank sets (mean width; the true top 10), the share of seasons in which the truly
best bot is published first, Spearman's rho of the published order, the share with a
false claim (an order or a settled place; with its 95 % upper bound), the share in which
every bot's true rank lies in its set, the places settled, the matches of the published
top 3 against the mean, and the CPU of choosing the tables per match.

    python -m benchmarks.season_sim                       # the grid: 2 fields x 3 budgets, 100 seasons
    python -m benchmarks.season_sim --seasons 20 --budgets 2000 6000 --workers 2   # a reduced grid
    python -m benchmarks.season_sim --fields normal --budgets 6000 --seasons 1000 --policies ladder
    python -m benchmarks.season_sim --budgets 5000 --policies ladder --final 16 1000   # the season's final

With ``--final BOTS MATCHES`` a ladder season is followed by its final as the runner plays
it (``referee.run.final``: the finalists from the season's lines, groups on rotated seats,
a look after each block, stopped once places 1..3 are settled), and the published top 3
(``top3``, ``best 1st``) are the final's; the other figures stay the season's.
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from referee.run.ladder import LadderRules, Summary, choose_epoch, epoch_size
from referee.schedule.final import FinalPlan, FinalTables
from referee.stats import places
from referee.stats.places import (
    Claims,
    FinalWatch,
    PairTally,
    fit,
    look_points,
    new_claims,
    pair_alpha,
    prize_places,
)

TOP = 10
PLACES = 3
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Setting:
    """One simulated setting."""

    field: str
    policy: str
    matches: int
    bots: int = 200
    players: int = 4
    rules: tuple[tuple[str, float], ...] = ()  # LadderRules fields to change (--rule floor=0.5)
    final: tuple[int, int] = (0, 0)  # the ladder's final: (finalists, its most matches); (0, 0): none


def even_spread(bots: int, players: int, gap: float = 1.4) -> float:
    """The log-strength range at which the best bot's expected mean rank against uniform
    opponents is ``gap`` ahead of the worst's (bisection)."""

    def gap_at(s: float) -> float:
        theta = np.linspace(s, 0.0, bots)
        p = 1.0 / (1.0 + np.exp(theta[:, None] - theta[None, :]))  # p[i, j]: j above i
        np.fill_diagonal(p, 0.0)
        rank = 1.0 + (players - 1) * p.sum(axis=1) / (bots - 1)
        return float(rank[-1] - rank[0])

    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap_at(mid) < gap else (lo, mid)
    return (lo + hi) / 2


def strengths(field: str, bots: int, players: int, rng: np.random.Generator) -> np.ndarray:
    """Log-strengths, best first (index 0 is the truly best bot)."""
    if field == "even":
        return np.linspace(even_spread(bots, players), 0.0, bots)
    return np.sort(rng.normal(size=bots))[::-1].copy()


def play(theta: np.ndarray, tables: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Ranks (1 best) of Plackett-Luce tables: order of strength plus Gumbel noise."""
    perf = theta[tables] + rng.gumbel(size=tables.shape)
    return np.asarray(1 + np.argsort(np.argsort(-perf, axis=1), axis=1), np.int64)


def season(s: Setting, seed: int) -> dict[str, Any]:
    """One season's figures."""
    with threadpool_limits(limits=1):
        return _season(s, seed)


def _season(s: Setting, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    theta = strengths(s.field, s.bots, s.players, rng)
    lineup = [f"b{i:03d}" for i in range(s.bots)]
    T = epoch_size(s.bots, s.players)
    changed: dict[str, Any] = dict(s.rules)
    rules = LadderRules(players=s.players, epoch_tables=T, top=PLACES, **changed)
    summary = Summary(s.players)
    tally, claims = PairTally(s.bots), Claims.empty(s.bots)
    eligible = np.arange(s.bots)
    alpha = pair_alpha(CONFIDENCE, s.bots)
    looks = look_points(s.matches)
    k = prize_places(PLACES, s.bots)
    f = fit(tally)
    pending: list[tuple[np.ndarray, np.ndarray]] = []
    played = np.zeros(s.bots, np.int64)
    choose_s, done, epoch, look = 0.0, 0, 0, 0
    lines: list[dict[str, Any]] = []  # with a final: the season's journal lines, for its finalists
    while done < s.matches:
        size = min(T, s.matches - done)
        if s.policy == "ladder":
            while len(pending) > rules.lag:
                summary.record(lineup, *pending.pop(0))
            cpu = time.process_time()
            tables = choose_epoch(rules, seed, lineup, summary, epoch)[:size]
            summary.assign(lineup, tables)
            choose_s += time.process_time() - cpu
        else:
            tables = np.argsort(rng.random((size, s.bots)), axis=1)[:, : s.players]
        ranks = play(theta, tables, rng)
        if s.final[0]:
            lines.extend(
                {"index": done + i, "bots": [lineup[b] for b in row], "ranks": r}
                for i, (row, r) in enumerate(zip(tables.tolist(), ranks.tolist()))
            )
        pending.append((tables, ranks))
        played += np.bincount(tables.ravel(), minlength=s.bots)
        # the published looks fall inside the epoch: count up to each, then look
        start = done
        done += size
        while look < len(looks) and looks[look] <= done:
            upto = looks[look] - start
            tally.add(tables[:upto], ranks[:upto])
            tables, ranks, start = tables[upto:], ranks[upto:], looks[look]
            f = fit(tally, f.theta)
            claims.add(new_claims(f, alpha))
            claims.settle(eligible, k, looks[look])
            look += 1
        tally.add(tables, ranks)
        epoch += 1
    out = _figures(theta, f.theta, claims, eligible, k, played, choose_s / s.matches)
    if s.final[0]:
        out.update(final(s, theta, lineup, lines, rng, seed))
    return out


def final(
    s: Setting, theta: np.ndarray, lineup: list[str], lines: list[dict[str, Any]], rng: np.random.Generator, seed: int
) -> dict[str, Any]:
    """The season's final as the runner plays it (``referee.run.final``): the finalists from
    the season's lines, groups of them on rotated seats, a look after each block, stopped
    at the first that settles places 1..3 or at its budget; the published top 3 replaces
    the season's."""
    plan = FinalPlan(s.matches, s.final[1], s.final[0], s.players)
    watch = FinalWatch(plan, lineup, PLACES, CONFIDENCE)
    for d in lines:
        watch.add(d)
    finalists = watch.finalists()
    at = [int(b[1:]) for b in finalists]
    tables = FinalTables.of(seed, False, s.players)
    result = watch.result()
    for b, (lo, hi) in enumerate(plan.blocks()):
        if result.over:
            break
        focus = watch.focus(b)
        seats = np.array([[at[p] for p in tables.seats(plan, i, focus)] for i in range(lo, hi)], np.int64)
        ranks = play(theta, seats, rng)
        for i, (row, r) in enumerate(zip(seats.tolist(), ranks.tolist())):
            watch.add({"index": lo + i, "bots": [lineup[b] for b in row], "ranks": r})
        result = watch.result()
    top = [int(b[1:]) for b in result.order[:PLACES]]
    return {
        "top3_in_order": top == list(range(PLACES)),
        "best_first": top[:1] == [0],
        "top3_in_final": set(range(PLACES)) <= set(at),
        "final_played": result.played,
        "final_settled": result.settled,
    }


def _figures(
    truth: np.ndarray, est: np.ndarray, claims: Claims, eligible: np.ndarray, k: int, played: np.ndarray, cpu: float
) -> dict[str, Any]:
    """What a season published, judged against the truth (bot i's true place is i + 1)."""
    n = truth.shape[0]
    lo, hi = claims.rank_sets(eligible)
    true_place = np.arange(1, n + 1)
    published = np.lexsort((np.arange(n), -est))
    wrong_order = bool((claims.surely & (truth[:, None] < truth[None, :])).any())
    settled = {p: at for p, at in claims.since.items()}
    wrong_place = False
    for p in settled:
        holder = np.flatnonzero((lo <= p) & (p <= hi))
        wrong_place |= holder.shape[0] == 1 and int(holder[0]) != p - 1
    pos = np.empty(n, np.int64)
    pos[published] = np.arange(n)
    rho = 1.0 - 6.0 * float(((pos - np.arange(n)) ** 2).sum()) / (n * (n * n - 1))
    return {
        "width": float((hi - lo + 1)[:TOP].mean()),
        "best_first": int(published[0]) == 0,
        "top3_in_order": bool((published[:k] == np.arange(k)).all()),
        "rho": rho,
        "wrong": wrong_order or wrong_place,
        "covered": bool(((lo <= true_place) & (true_place <= hi)).all()),
        "settled": len(settled),
        "leaders": [int(played[b]) for b in published[:3]],
        "mean": float(played.mean()),
        "cpu_ms": cpu * 1000,
    }


def upper95(x: int, n: int) -> float:
    """The one-sided 95 % upper bound of a share of ``x`` in ``n`` (Clopper-Pearson; 3/n at 0)."""
    if x == 0:
        return float(1.0 - 0.05 ** (1.0 / n))
    lo, hi = x / n, 1.0
    for _ in range(60):  # the p at which P(X <= x) = 0.05
        mid = (lo + hi) / 2
        cdf = sum(math.comb(n, i) * mid**i * (1 - mid) ** (n - i) for i in range(x + 1))
        lo, hi = (mid, hi) if cdf > 0.05 else (lo, mid)
    return hi


def summarise(s: Setting, rows: list[dict[str, Any]]) -> str:
    """One printed line per setting."""
    m = len(rows)
    wrong = sum(r["wrong"] for r in rows)
    lead = np.mean([r["leaders"] for r in rows], axis=0)
    final = (
        f"  final {s.final[0]}/{s.final[1]}: top 3 among the finalists {np.mean([r['top3_in_final'] for r in rows]):.2f}, "
        f"settled {np.mean([r['final_settled'] for r in rows]):.2f}, played {np.mean([r['final_played'] for r in rows]):.0f}"
        if s.final[0]
        else ""
    )
    return (
        f"{s.field:6s} {s.matches:6d} {s.policy:6s}{''.join(f' {k}={v:g}' for k, v in s.rules)} {m:5d}  width {np.mean([r['width'] for r in rows]):6.1f}  "
        f"best 1st {np.mean([r['best_first'] for r in rows]):.2f}  top3 {np.mean([r['top3_in_order'] for r in rows]):.2f}  "
        f"rho {np.mean([r['rho'] for r in rows]):.3f}  wrong {wrong / m:.3f} (<= {upper95(wrong, m):.3f})  "
        f"covered {np.mean([r['covered'] for r in rows]):.3f}  settled {np.mean([r['settled'] for r in rows]):.2f}  "
        f"leaders {lead[0]:.0f}/{lead[1]:.0f}/{lead[2]:.0f} of {np.mean([r['mean'] for r in rows]):.0f}  "
        f"choose {np.mean([r['cpu_ms'] for r in rows]):.3f} ms/match" + final
    )


def _focus(margin: float | None) -> None:
    """A worker's final focus margin (None: the referee's)."""
    if margin is not None:
        places.FOCUS_MARGIN = margin


def _run(args: tuple[Setting, int]) -> dict[str, Any]:
    return season(*args)


def main(argv: list[str] | None = None) -> None:
    """Run the grid and print one line per setting, then the ladder's gain per field and budget."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", nargs="+", default=["even", "normal"], choices=["even", "normal"])
    ap.add_argument("--budgets", nargs="+", type=int, default=[2000, 6000, 20000])
    ap.add_argument("--policies", nargs="+", default=["ladder", "random"], choices=["ladder", "random"])
    ap.add_argument("--seasons", type=int, default=100)
    ap.add_argument("--bots", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rule", nargs="*", default=[], help="LadderRules fields to change, e.g. floor=0.5 cap=6")
    ap.add_argument("--focus-margin", type=float, default=None, help="the final's FOCUS_MARGIN (stats/places.py)")
    ap.add_argument(
        "--final", nargs=2, type=int, default=[0, 0], metavar=("BOTS", "MATCHES"), help="the ladder's final, after it"
    )
    a = ap.parse_args(argv)
    rules = tuple((k, float(v)) for k, v in (r.split("=", 1) for r in a.rule))
    start = time.time()
    results: dict[Setting, list[dict[str, Any]]] = {}
    with ProcessPoolExecutor(a.workers, initializer=_focus, initargs=(a.focus_margin,)) as pool:
        for field in a.fields:
            for budget in a.budgets:
                for policy in a.policies:
                    final = (a.final[0], a.final[1]) if policy == "ladder" else (0, 0)
                    s = Setting(field, policy, budget, a.bots, rules=rules if policy == "ladder" else (), final=final)
                    results[s] = list(pool.map(_run, [(s, 1000 + i) for i in range(a.seasons)]))
                    print(summarise(s, results[s]), flush=True)
    for field in a.fields:
        for budget in a.budgets:
            lad = results.get(Setting(field, "ladder", budget, a.bots, rules=rules, final=(a.final[0], a.final[1])))
            ran = results.get(Setting(field, "random", budget, a.bots))
            if lad and ran:
                wl, wr = np.mean([r["width"] for r in lad]), np.mean([r["width"] for r in ran])
                bl, br = np.mean([r["best_first"] for r in lad]), np.mean([r["best_first"] for r in ran])
                print(
                    f"{field} {budget}: top-10 rank sets {100 * (1 - wl / wr):.0f} % narrower on the ladder; "
                    f"best bot first {bl:.2f} vs {br:.2f}"
                )
    print(f"{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
