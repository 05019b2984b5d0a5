"""How the Dieci sample strategies fare against random, in process.

Plays 6-player matches of 3 seats of a strategy against 3 ``random`` seats. Seats rotate
match by match through two seatings (the three side by side, and alternating with the
random seats), so every seat and every neighbour relation is covered. Each ``act``
message is built exactly as the referee sends it. Prints, per strategy, the win share
per seat (rank 1; a ``max_manches`` draw counts for every survivor; 1/6 is par) and the
mean finishing position (3.5 is par), each with a 95 % confidence interval computed over
matches (the three seats of one match are averaged first, as they are not independent).

    python scripts/eval_dieci.py [--matches 2000] [--strategies threshold,bold,keeper]
    python scripts/eval_dieci.py --sweep     # tune SWAP_AT / DRAW_AT of the threshold bot
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit import act_message, mean_ci

from referee.games.base import Result
from referee.games.dieci import GAME
from sample_bots.dieci import STRATEGIES, threshold_play

SEATS = 6
SEATINGS = ((0, 0, 0, 1, 1, 1), (0, 1, 0, 1, 0, 1))  # 0 = the strategy, 1 = random

Strategy = Callable[[dict[str, Any]], dict[str, Any]]


def play_match(names: list[str], bots: list[Strategy], seed: int, options: dict[str, Any], match_id: str) -> Result:
    """One match in process, every decision asked through an act message."""
    state = GAME.setup(len(names), seed, options)
    decision = 0
    while not GAME.is_over(state):
        for seat in GAME.to_act(state):
            decision += 1
            message = act_message(
                "dieci",
                options,
                "eval-dieci",
                match_id,
                names,
                seat,
                decision,
                GAME.view(state, seat),
                GAME.legal(state, seat),
            )
            state = GAME.apply(state, seat, bots[seat](message)["action"])
    return GAME.result(state)


def evaluate(name: str, bot: Strategy, matches: int, seed0: int) -> dict[str, list[float]]:
    """Per match: the mean win indicator and finishing position of each side's 3 seats."""
    out: dict[str, list[float]] = {"win": [], "pos": [], "rwin": [], "rpos": []}
    for i in range(matches):
        seating = SEATINGS[(i // SEATS) % 2]
        side = [seating[(s + i) % SEATS] for s in range(SEATS)]
        names = [name if x == 0 else "random" for x in side]
        bots = [bot if x == 0 else STRATEGIES["random"] for x in side]
        result = play_match(names, bots, seed0 + i, {}, f"m{i:06d}")
        for key, want in (("", 0), ("r", 1)):
            seats = [s for s in range(SEATS) if side[s] == want]
            out[key + "win"].append(sum(result.ranks[s] == 1 for s in seats) / len(seats))
            out[key + "pos"].append(sum(result.scores[s] for s in seats) / len(seats))
    return out


def line(label: str, wins: list[float], pos: list[float]) -> str:
    w, wh = mean_ci(wins)
    p, ph = mean_ci(pos)
    return f"{label:<24} {w:>7.1%} ± {wh:>5.1%}   {p:>5.2f} ± {ph:.2f}"


def main() -> None:
    """Print the table (or the parameter sweep)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=2000)
    parser.add_argument("--strategies", default="threshold,bold,keeper")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{args.matches} matches of 6 players: 3 seats of the strategy, 3 random, seats rotating.\n"
        "win: share of a seat's matches won (par 16.7 %); position: mean finishing position\n"
        "(1 = winner, par 3.5, lower is better); both ± 95 % CI over matches.\n"
    )
    print(f"{'seats':<24} {'win':>16}   {'position':>12}")
    if args.sweep:
        for swap_at in range(-3, 5):
            for draw_at in range(-1, 3):
                bot = partial(threshold_play, swap_at=swap_at, draw_at=draw_at)
                r = evaluate("threshold", bot, args.matches, args.seed)
                print(line(f"swap<={swap_at} draw<={draw_at}", r["win"], r["pos"]), flush=True)
    else:
        for name in args.strategies.split(","):
            r = evaluate(name, STRATEGIES[name], args.matches, args.seed)
            print(line(f"{name} (3 seats)", r["win"], r["pos"]))
            print(line("  random (3 seats)", r["rwin"], r["rpos"]), flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
