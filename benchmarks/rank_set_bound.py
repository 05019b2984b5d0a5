"""How much narrower can any allocation of matches make the top 10's rank sets on the evenly
spaced field (issue 33's first target)? A rough analytic bound, figures only.

Model: 200 bots, 4 seats, log-strengths evenly spaced as ``benchmarks.season_sim`` spaces
them (the best about 1.4 mean ranks ahead of the worst); near-equal strengths, so each of a
match's 3 comparisons per bot carries Fisher information 1/4 and a bot with ``n`` matches
has variance 1 / (0.75 n); the rank set of a top bot holds every bot within ``c`` standard
errors of the difference, with ``c`` set so that uniform tables give the width
``season_sim`` measured for random tables at that budget (``--width``). An oracle that
knows the true order then spends the budget in three levels (the top ``m1`` bots, the
next ones up to ``m2``, the rest at the ladder's floor of 0.35x the mean) and the best
choice is printed: no matchmaking, which must learn the order as it goes, can do better
in this model.

    python -m benchmarks.rank_set_bound                   # 6,000 matches, width 109 (season_sim, random)
    python -m benchmarks.rank_set_bound --matches 2000 --width 150
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.season_sim import even_spread

BOTS, SEATS, TOP, FLOOR = 200, 4, 10, 0.35


def width(n: np.ndarray, c: float, step: float) -> float:
    """The top 10's mean rank-set width when bot j (true order) has ``n[j]`` matches."""
    var = 1.0 / (0.75 * n)
    i, j = np.arange(TOP)[:, None], np.arange(n.shape[0])[None, :]
    return float((np.abs(i - j) * step < c * np.sqrt(var[i] + var[j])).sum(axis=1).mean())


def calibrate(n: np.ndarray, target: float, step: float) -> float:
    """The ``c`` at which the allocation ``n`` gives the width ``target`` (bisection)."""
    lo, hi = 0.01, 50.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if width(n, mid, step) < target else (lo, mid)
    return (lo + hi) / 2


def best_three_levels(slots: float, c: float, step: float) -> tuple[float, int, int, float]:
    """The narrowest width over three-level allocations: (width, m1, m2, share of the top m1)."""
    best = (float("inf"), 0, 0, 0.0)
    floor = FLOOR * slots / BOTS
    for m1 in (3, 5, 10, 20, 40):
        for m2 in range(m1 + 10, BOTS, 10):
            for x in np.linspace(0.05, 0.95, 19):
                n = np.full(BOTS, floor)
                rest = slots - n.sum()
                n[:m1] += x * rest / m1
                n[m1:m2] += (1 - x) * rest / (m2 - m1)
                w = width(n, c, step)
                if w < best[0]:
                    best = (w, m1, m2, float(x))
    return best


def main() -> None:
    """Print the bound for one budget."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=6000)
    ap.add_argument("--width", type=float, default=109.0, help="season_sim's random-table width at this budget")
    args = ap.parse_args()
    step = even_spread(BOTS, SEATS) / (BOTS - 1)
    slots = float(args.matches * SEATS)
    uniform = np.full(BOTS, slots / BOTS)
    c = calibrate(uniform, args.width, step)
    w, m1, m2, x = best_three_levels(slots, c, step)
    print(
        f"even field, {args.matches} matches: uniform tables {width(uniform, c, step):.1f} wide; the best oracle "
        f"allocation {w:.1f} ({1 - w / args.width:.0%} narrower: {x:.0%} of the spare seats to the top {m1}, "
        f"the rest to places {m1 + 1}-{m2}, the floor below)"
    )


if __name__ == "__main__":
    main()
