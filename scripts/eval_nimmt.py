"""Heuristic vs random for 6 nimmt! Plus, in process, for every variant.

Each match seats 4 bots, two of the heuristic and two random (or ``--opponent``), with
the seating rotated from match to match; every decision goes through the same ``act``
message a bot gets over the wire (JSON round trip included). Prints, per variant and
strategy, the mean score and the win rate (rank 1, ties included) with 95 % CIs.

    python scripts/eval_nimmt.py --matches 400
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit import act_message, mean_ci

from referee.games.nimmt_plus.rules import GAME, VARIANTS
from sample_bots.nimmt import STRATEGIES

SEATINGS = [  # rotated so every strategy sits in every seat equally often
    ("H", "H", "R", "R"),
    ("R", "H", "H", "R"),
    ("R", "R", "H", "H"),
    ("H", "R", "R", "H"),
    ("H", "R", "H", "R"),
    ("R", "H", "R", "H"),
]


def play_match(
    names: list[str], variant: str, seed: int, match_id: str
) -> tuple[list[float], list[int], dict[str, list[float]]]:
    """One match; returns scores, ranks, and seconds and decisions per strategy."""
    options = {"variant": variant}
    state = GAME.setup(len(names), seed, options)
    decision = 0
    spent = {name: [0.0, 0] for name in names}
    while not GAME.is_over(state):
        seats = GAME.to_act(state)
        asked = []
        for seat in seats:  # all views before any answer is applied, as the referee does
            message = act_message(
                GAME.info.id,
                options,
                "eval_nimmt",
                match_id,
                names,
                seat,
                decision,
                GAME.view(state, seat),
                GAME.legal(state, seat),
            )
            decision += 1
            asked.append((seat, message))
        for seat, message in asked:
            t0 = time.perf_counter()
            reply = STRATEGIES[names[seat]](message)
            spent[names[seat]][0] += time.perf_counter() - t0
            spent[names[seat]][1] += 1
            state = GAME.apply(state, seat, json.loads(json.dumps(reply))["action"])
    result = GAME.result(state)
    return result.scores, result.ranks, spent


def evaluate(heuristic: str, variant: str, matches: int, seed: int, opponent: str = "random") -> dict[str, Any]:
    """``matches`` matches of 2 ``heuristic`` vs 2 ``opponent``; per-strategy figures."""
    scores: dict[str, list[float]] = {heuristic: [], opponent: []}
    wins: dict[str, list[float]] = {heuristic: [], opponent: []}
    spent, decisions = 0.0, 0
    for i in range(matches):
        seating = SEATINGS[i % len(SEATINGS)]
        names = [heuristic if s == "H" else opponent for s in seating]
        sc, ranks, timing = play_match(names, variant, seed + i, f"m{i:06d}")
        spent += timing[heuristic][0]
        decisions += int(timing[heuristic][1])
        for seat, name in enumerate(names):
            scores[name].append(sc[seat])
            wins[name].append(1.0 if ranks[seat] == 1 else 0.0)
    return {name: {"score": mean_ci(scores[name]), "win": mean_ci(wins[name])} for name in scores} | {
        "ms_per_decision": 1000 * spent / max(1, decisions)
    }


def main() -> None:
    """Command line: the figures for every variant and heuristic."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--heuristic", nargs="*", default=["greedy", "cautious"])
    parser.add_argument("--variant", nargs="*", default=list(VARIANTS))
    parser.add_argument("--opponent", default="random")
    args = parser.parse_args()
    print(f"{args.matches} matches of 4 seats (2 heuristic + 2 {args.opponent}); 95 % CIs")
    print("win rate = share of the strategy's seats ranked 1 (ties count); it holds 2 of")
    print("the 4 seats, so 50 % means its side won every match")
    print(f"{'variant':<17} {'strategy':<9} {'mean score':>16} {'win rate':>16}  ms/decision")
    for variant in args.variant:
        sense = "lower" if variant in ("zeros_negative", "simple") else "higher"
        for heuristic in args.heuristic:
            figures = evaluate(heuristic, variant, args.matches, args.seed, args.opponent)
            for name in (heuristic, args.opponent):
                (m, h), (w, wh) = figures[name]["score"], figures[name]["win"]
                ms = f"{figures['ms_per_decision']:.3f}" if name == heuristic else ""
                print(f"{variant:<17} {name:<9} {m:8.1f} ± {h:5.1f} {100 * w:7.1f}% ± {100 * wh:4.1f}  {ms}")
        print(f"{'':<17} ({sense} score is better)")


if __name__ == "__main__":
    main()
