"""Sample bots for Drahtseilakt (game id ``drahtseilakt``).

Run one as an HTTP server::

    python -m sample_bots.drahtseilakt balance --port 8001

The referee POSTs an ``act`` message; ``message["state"]`` is this seat's view and
``message["legal"]`` the cards it may play (its hand, as integers). The bot answers
``{"action": <one card from legal>}``. See docs/games/drahtseilakt.md for every field.

Strategies:

- ``random``: any legal card.
- ``middle``: the median card of its hand (keeps away from the extremes, blindly).
- ``balance``: estimates, for every card, the chance that it ends up the highest or the
  lowest card of the trick, and the sticks it would then take. Sticks of the colour it
  does not hold cancel pairs, so it sometimes takes sticks on purpose to get back to
  zero. It also prefers to get rid of extreme cards while little is at stake.

This module uses nothing from ``referee``: a bot in any language does the same with the
JSON alone.
"""

from __future__ import annotations

from typing import Any

from ._server import main, message_rng

Message = dict[str, Any]
# How much removing an extreme card from the hand is worth against the sticks at stake
# now (tried 0 to 2.5 against random: 1.0 is about best).
LATER_WEIGHT = 1.0


def random_bot(message: Message) -> dict[str, Any]:
    """Play any legal card."""
    rng = message_rng(message, "random")
    return {"action": rng.choice(message["legal"])}


def middle_bot(message: Message) -> dict[str, Any]:
    """Play the median card of the hand (legal is in ascending order)."""
    legal = message["legal"]
    return {"action": legal[len(legal) // 2]}


def balance_bot(message: Message) -> dict[str, Any]:
    """Play the card with the lowest expected cost (see the module docstring)."""
    view = message["state"]
    legal = message["legal"]
    if len(legal) == 1:
        return {"action": legal[0]}
    me = view["seat"]
    n = view["players"]
    red, blue = view["score"]["red"], view["score"]["blue"]
    played_now = [p["card"] for p in view["current_trick"]]
    later = n - 1 - len(played_now)  # opponents still to play in this trick

    # Cards nobody has shown: opponents' hands and (without "tactical") unused cards.
    seen = set(legal) | set(played_now)
    for trick in view["tricks"]:
        seen.update(p["card"] for p in trick["plays"])
    unknown = sorted(set(range(1, view["highest_card"] + 1)) - seen)

    # My sticks as one signed number: blue counts +, red counts -. A round scores |net|.
    sticks = view["sticks"][me]
    net = sticks["blue"] - sticks["red"]
    bonus = _clean_bonus(view, me)
    tricks_left = view["tricks_per_round"] - view["trick"]

    # What an average future trick is worth: the unrevealed score values.
    values = [int(c) for c in view["score_cards_unrevealed"] if c.isdigit()]
    future_value = sum(values) / len(values) if values else 0.0

    def cost(after: int) -> float:
        # A round ending at zero cancels the highest earlier round; count that more
        # the closer the end of the round is.
        clean = bonus if after == 0 and tricks_left <= 2 else 0.0
        return abs(after) - clean

    now = cost(net)
    best, best_score = legal[0], float("inf")
    highest_so_far = max(played_now, default=0)
    lowest_so_far = min(played_now, default=10**9)
    for card in legal:
        below = _count_below(unknown, card)
        above = len(unknown) - below
        p_high = _chance_all_from(below, len(unknown), later) if card > highest_so_far else 0.0
        p_low = _chance_all_from(above, len(unknown), later) if card < lowest_so_far else 0.0
        expected = p_high * (cost(net + blue) - now) + p_low * (cost(net - red) - now)
        # Keeping an extreme card means risking it later; playing it now removes that.
        later_risk = 0.0
        if tricks_left > 1:
            later_risk = future_value * (
                _chance_all_from(below, len(unknown), n - 1) + _chance_all_from(above, len(unknown), n - 1)
            )
        score = expected - LATER_WEIGHT * later_risk
        if score < best_score - 1e-9:
            best, best_score = card, score
    return {"action": best}


# Helpers -------------------------------------------------------------------------------


def _count_below(sorted_cards: list[int], card: int) -> int:
    """How many of ``sorted_cards`` are lower than ``card``."""
    lo, hi = 0, len(sorted_cards)
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_cards[mid] < card:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _chance_all_from(good: int, total: int, draws: int) -> float:
    """Chance that ``draws`` distinct cards taken from ``total`` are all among ``good``."""
    p = 1.0
    for i in range(draws):
        if total - i <= 0:
            break
        p *= max(good - i, 0) / (total - i)
    return p


def _clean_bonus(view: Message, me: int) -> float:
    """What ending this round with no sticks is worth: the highest earlier round score
    that is not cancelled yet (nothing in the first round)."""
    scores = view["round_scores"][me]
    cancelled = set(view["cancelled"][me])
    return float(max((v for r, v in enumerate(scores) if r not in cancelled), default=0))


STRATEGIES = {
    "random": random_bot,
    "middle": middle_bot,
    "balance": balance_bot,
}

if __name__ == "__main__":
    main(STRATEGIES)
