"""Measure a The Game sample strategy against the published yardsticks, in process.

Every seat plays the same strategy; each strategy call gets the act message exactly as the
referee would send it (the seat's view as ``state`` and its ``legal`` list), and the reply's
``claims`` go through ``apply_extras`` as the referee does. Deal i uses seed ``--seed + i``
for every player count and both communication settings, so the runs share their deals.

    python scripts/eval_the_game.py                       # heuristic, 1000 deals each
    python scripts/eval_the_game.py --deals 200 --players 2 3 --comm none
    python scripts/eval_the_game.py --set extra=2 --set claim_penalty=4   # try parameters
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from evalkit import act_message, mean_ci

from referee.games.the_game import GAME
from sample_bots import the_game as bots

DEFAULT_PARAMS = dict(bots.PARAMS)

# RobertWeinmeister/TheGameSimulation README, "best plays", average cards left.
YARDSTICK = {
    "none": {1: 16.4, 2: 9.0, 3: 13.2, 4: 9.9, 5: 9.2},
    "claims": {2: 5.5, 3: 7.0, 4: 4.9, 5: 5.2},
}


def play_deal(job: tuple[str, int, int, str, dict[str, Any], dict[str, float]]) -> dict[str, Any]:
    """Play one deal with every seat on ``strategy``; return its result details."""
    strategy, seats, seed, comm, options, params = job
    bots.PARAMS.clear()
    bots.PARAMS.update(DEFAULT_PARAMS, **params)
    act = bots.STRATEGIES[strategy]
    opts = dict(options, communication=comm)
    state = GAME.setup(seats, seed, opts)
    players = [strategy] * seats
    decision = 0
    while not GAME.is_over(state):
        (seat,) = GAME.to_act(state)
        message = act_message(
            "the_game",
            opts,
            "eval",
            f"m{seed:06d}",
            players,
            seat,
            decision,
            GAME.view(state, seat),
            GAME.legal(state, seat),
        )
        reply = act(message)
        state = GAME.apply(state, seat, reply["action"])
        if "claims" in reply:
            state = GAME.apply_extras(state, seat, {"claims": reply["claims"]})
        decision += 1
    details = GAME.result(state).details
    details["decisions"] = decision
    return details


def main(argv: list[str] | None = None) -> int:
    """Command line: run the deals, print one table row per player count and setting."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", default="heuristic", choices=sorted(bots.STRATEGIES))
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--players", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--comm", nargs="+", default=["none", "claims"], choices=["none", "claims"])
    parser.add_argument("--pro", action="store_true")
    parser.add_argument("--reduced-hand", action="store_true")
    parser.add_argument("--on-fire", action="store_true")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a heuristic parameter (sample_bots.the_game.PARAMS)",
    )
    args = parser.parse_args(argv)
    params = {}
    for item in args.set:
        key, _, value = item.partition("=")
        if key not in bots.PARAMS:
            parser.error(f"unknown parameter {key!r}; known: {', '.join(bots.PARAMS)}")
        params[key] = float(value)
    options = {"pro": args.pro, "reduced_hand": args.reduced_hand, "on_fire": args.on_fire}

    print(f"strategy {args.strategy}, {args.deals} deals per row, options {options}, params {params}")
    print(
        f"{'comm':<7}{'players':>7}{'mean left':>11}{'95% CI':>10}{'yardstick':>11}"
        f"{'win %':>7}{'excel %':>9}{'fire %':>8}{'ms/deal':>9}"
    )
    started = time.perf_counter()
    total = 0.0
    with multiprocessing.Pool(args.workers) as pool:
        for comm in args.comm:
            for seats in args.players:
                jobs = [(args.strategy, seats, args.seed + i, comm, options, params) for i in range(args.deals)]
                t0 = time.perf_counter()
                results = pool.map(play_deal, jobs, chunksize=max(1, args.deals // (8 * args.workers)))
                elapsed = time.perf_counter() - t0
                left = [float(r["cards_left"]) for r in results]
                mean, half = mean_ci(left)
                total += mean
                # the yardsticks are for the base game only
                yard = None if any(options.values()) else YARDSTICK[comm].get(seats)
                shown = f"{yard:.1f}" if yard is not None else "-"
                won = 100 * sum(r["won"] for r in results) / len(results)
                exc = 100 * sum(r["excellent"] for r in results) / len(results)
                fire = 100 * sum(r["lost_by_fire"] for r in results) / len(results)
                print(
                    f"{comm:<7}{seats:>7}{mean:>11.2f}{'±' + format(half, '.2f'):>10}{shown:>11}"
                    f"{won:>7.1f}{exc:>9.1f}{fire:>8.1f}{1000 * elapsed / len(results):>9.1f}",
                    flush=True,
                )
    print(f"sum of means {total:.2f}; {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
