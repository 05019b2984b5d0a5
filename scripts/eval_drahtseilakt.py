"""How the Drahtseilakt sample strategies fare against random, in process.

For 3, 4 and 5 players and every variant, plays matches with one seat of the strategy
under test and every other seat ``random`` (the tested seat rotates), builds each
``act`` message exactly as the referee sends it, and prints the mean total and the win
rate (rank 1, ties included) with 95 % confidence intervals, next to the random seats'.

    python scripts/eval_drahtseilakt.py [--matches 300] [--strategies balance,middle]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit import act_message, mean_ci

from referee.games.drahtseilakt import GAME
from sample_bots.drahtseilakt import STRATEGIES

VARIANTS = {
    "standard": {"tactical": False, "chaotic": False},
    "tactical": {"tactical": True, "chaotic": False},
    "chaotic": {"tactical": False, "chaotic": True},
    "tactical+chaotic": {"tactical": True, "chaotic": True},
}


def play_match(names: list[str], seed: int, options: dict, match_id: str):
    """One match in process; returns the Result."""
    n = len(names)
    state = GAME.setup(n, seed, options)
    decision = 0
    while not GAME.is_over(state):
        seats = GAME.to_act(state)
        messages = {}
        for seat in seats:  # a simultaneous choice: every view before any answer
            decision += 1
            messages[seat] = act_message(
                "drahtseilakt",
                options,
                "eval-drahtseilakt",
                match_id,
                names,
                seat,
                decision,
                GAME.view(state, seat),
                GAME.legal(state, seat),
            )
        for seat in seats:
            action = STRATEGIES[names[seat]](messages[seat])["action"]
            state = GAME.apply(state, seat, action)
    return GAME.result(state)


def wilson(wins: int, n: int) -> tuple[float, float, float]:
    """Share and its Wilson 95 % interval."""
    z = 1.96
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, centre - half, centre + half


def evaluate(strategy: str, n: int, options: dict, matches: int, seed0: int):
    """Totals and wins of the tested seat and of the random seats."""
    mine_tot, mine_win, rand_tot, rand_win = [], 0, [], 0
    for i in range(matches):
        hero = i % n
        names = ["random"] * n
        names[hero] = strategy
        result = play_match(names, seed0 + i, options, f"m{i:06d}")
        for seat in range(n):
            win = result.ranks[seat] == 1
            if seat == hero:
                mine_tot.append(result.scores[seat])
                mine_win += win
            else:
                rand_tot.append(result.scores[seat])
                rand_win += win
    return mine_tot, mine_win, rand_tot, rand_win


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--strategies", default="balance,middle")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(
        f"{args.matches} matches per row; one seat plays the strategy, all others random.\n"
        "total: mean match total (lower is better) ± 95 % CI; win: share of rank 1 "
        "[Wilson 95 % CI]\n"
    )
    header = (
        f"{'players':>7} {'variant':<17} {'strategy':<8} {'total':>13} {'win':>22}"
        f" {'random total':>13} {'random win':>22}"
    )
    print(header)
    print("-" * len(header))
    started = time.perf_counter()
    for strategy in args.strategies.split(","):
        for n in (3, 4, 5):
            for variant, options in VARIANTS.items():
                mt, mw, rt, rw = evaluate(strategy, n, options, args.matches, args.seed)
                m, h = mean_ci(mt)
                rm, rh = mean_ci(rt)
                p, lo, hi = wilson(mw, len(mt))
                rp, rlo, rhi = wilson(rw, len(rt))
                print(
                    f"{n:>7} {variant:<17} {strategy:<8} {m:>6.1f} ± {h:>4.1f}"
                    f" {p:>6.1%} [{lo:>5.1%},{hi:>6.1%}]"
                    f" {rm:>6.1f} ± {rh:>4.1f} {rp:>6.1%} [{rlo:>5.1%},{rhi:>6.1%}]",
                    flush=True,
                )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
