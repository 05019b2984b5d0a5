"""Sample bots for 6 nimmt! Plus (game id ``nimmt_plus``); see docs/games/nimmt_plus.md.

Run one as an HTTP bot::

    python -m sample_bots.nimmt cautious --port 8001

Every strategy is a function ``act(message) -> {"action": ...}``. ``message`` is the
referee's ``act`` message; the two fields that matter are ``message["state"]`` (what
this seat sees) and ``message["legal"]`` (every legal action). The answer must be one
element of ``legal``, e.g. ``[27]``, ``[5, 6]`` or ``[0, 49]``.

Strategies:

- ``random``: a uniformly random legal action.
- ``greedy``: plays out its own cards alone on the current rows and picks the action
  that takes the most heads (plus variants) or the fewest (negative variants), using a
  0 to jump the queue when a take depends on it.
- ``cautious``: like greedy, but estimates what the other seats' cards will do: the
  chance that they land in the same row before its card (so a row it hoped to take is
  taken by someone else, or a safe spot becomes the 6th card), and it avoids leaving a
  5-card row for the next player in the plus variants.

In ``plus``/``plus_dealt_zeros`` taking rows is GOOD (highest heads wins); in
``zeros_negative``/``simple`` it is BAD (the heads are penalty points). The state says
which with ``lower_is_better``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import Any

from ._server import main, message_rng

TOP = 104
ROW_LIMIT = 5  # the 6th card takes the row


def heads(card: int) -> int:
    """Bull heads on a numbered card."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


HEADS = [0] + [heads(n) for n in range(1, TOP + 1)]


# The placement rule, as a bot needs it -----------------------------------------------


def target_row(rows: list[list[int]], card: int) -> int:
    """Index of the row ``card`` goes to: the highest end below it, else the highest end."""
    best, best_end, high, high_end = -1, -1, 0, -1
    for i, row in enumerate(rows):
        end = row[-1]
        if best_end < end < card:
            best, best_end = i, end
        if end > high_end:
            high, high_end = i, end
    return best if best >= 0 else high


def place(rows: list[list[int]], card: int) -> tuple[list[list[int]], list[int]]:
    """Rows after placing ``card`` alone, and the cards it takes ([] if none)."""
    i = target_row(rows, card)
    new = [list(r) for r in rows]
    if len(new[i]) == ROW_LIMIT:
        taken = new[i]
        new[i] = [card]
        return new, taken
    new[i].append(card)
    return new, []


def order(action: list[int]) -> list[int]:
    """The numbered cards of an action in the order they will be placed."""
    return [c for c in action if c != 0]


def unseen_cards(state: dict[str, Any]) -> list[int]:
    """Numbered cards this seat has not seen (in other hands or never dealt), ascending."""
    seen = set(state["hand"])
    for row in state["rows"]:
        seen.update(row)
    for pile in state["points"]:
        seen.update(pile["cards"])
    return [c for c in range(1, TOP + 1) if c not in seen]


def _sign(state: dict[str, Any]) -> int:
    """+1 when taking heads is good (plus variants), -1 when they are penalty points."""
    return -1 if state["lower_is_better"] else 1


# Strategies ---------------------------------------------------------------------------


def random_bot(message: dict[str, Any]) -> dict[str, Any]:
    """A uniformly random legal action."""
    return {"action": message_rng(message, "random").choice(message["legal"])}


def greedy(message: dict[str, Any]) -> dict[str, Any]:
    """Best immediate heads from playing one's own cards alone on the current rows."""
    state, legal = message["state"], message["legal"]
    sign = _sign(state)
    zeros_score = state["variant"] in ("plus", "plus_dealt_zeros") and state["zero_heads"] > 0
    best, best_key = legal[0], None
    for action in legal:
        rows, gained, gap = state["rows"], 0, 0
        for card in order(action):
            end = rows[target_row(rows, card)][-1]
            gap += card - end if card > end else 2 * TOP  # a low card is a last resort
            rows, taken = place(rows, card)
            gained += sum(HEADS[c] for c in taken)
        zeros = action.count(0)
        value = sign * gained + (state["zero_heads"] * zeros if zeros_score else 0)
        # Ties: keep zeros and cards for later, then the tightest fit.
        key = (value, -zeros if not gained else 0, -len(action), -gap)
        if best_key is None or key > best_key:
            best, best_key = action, key
    return {"action": best}


def cautious(message: dict[str, Any]) -> dict[str, Any]:
    """Expected heads, counting the risk from the other seats' cards this turn."""
    state, legal = message["state"], message["legal"]
    positive = not state["lower_is_better"]
    simple = state["variant"] == "simple"
    unseen = unseen_cards(state)
    others = [s for s, n in enumerate(state["hand_sizes"]) if n and s != state["seat"]]
    # How many cards the others will place before my turn comes back / this turn.
    per_seat = _mean_cards_per_play(state)
    others_cards = 0 if simple else round(per_seat * len(others))
    rows = state["rows"]
    # Cards of my hand that would now go onto a full row: unsafe to keep.
    unsafe = {c for c in state["hand"] if c and len(rows[target_row(rows, c)]) == ROW_LIMIT}
    best, best_value = legal[0], None
    for action in legal:
        cards = order(action)
        jump = len(action) == 2 and action[0] == 0 and action[1] != 0
        value, cur = 0.0, rows
        for card in cards:
            value += _card_value(cur, card, unseen, 0 if jump else others_cards, positive)
            cur, _ = place(cur, card)
        if simple or not positive:
            # Leaving a card that is unsafe later is worse than playing it now.
            value -= 0.05 * len(unsafe.difference(action))
        if simple and cards:
            # Played in turn, a card is safe now: prefer the tightest fit (fewest cards
            # can later squeeze in before it) and keep low cards for later.
            end = rows[target_row(rows, cards[0])][-1]
            value -= 0.002 * (cards[0] - end if cards[0] > end else 2 * TOP)
        zeros = action.count(0)
        if positive:
            value += state["zero_heads"] * zeros
            if not cards:
                value -= 0.3  # a bare 0 wastes a turn in the plus variants
            # a zero is worth keeping for a later jump
            value -= 0.8 * zeros if not jump or value <= 0.5 else 0.0
        elif zeros:
            # in the negative variants a 0 is a free pass: keep it for an emergency
            value -= 1.0 * zeros
        value -= 0.05 * (len(action) - 1) if not positive else 0.0
        if best_value is None or value > best_value + 1e-9:
            best, best_value = action, value
    return {"action": best}


def _card_value(rows: list[list[int]], card: int, unseen: list[int], others: int, positive: bool) -> float:
    """Expected heads (signed for the variant) of placing ``card`` on ``rows`` while
    ``others`` unseen cards are played this turn."""
    i = target_row(rows, card)
    row = rows[i]
    end = row[-1]
    row_heads = sum(HEADS[c] for c in row)
    below = bisect_left(unseen, card)  # unseen is ascending
    if end < card:
        gap = below - bisect_right(unseen, end)
    else:  # a low card: every lower unseen card also goes first onto the same row
        gap = below
    p = gap / max(1, len(unseen))
    before = _binomial(others, p)  # chance that k other cards land here first
    need = ROW_LIMIT - len(row)  # other cards needed before mine becomes the 6th
    take_p = before[need] if need < len(before) else 0.0
    take_heads = row_heads + need * 1.5
    if positive:
        value = take_p * take_heads
        # leaving a 5-card row for the next player
        five_p = before[need - 1] if 0 < need <= len(before) else 0.0
        value -= 0.6 * five_p * (row_heads + HEADS[card])
        return value
    return -take_p * take_heads


@lru_cache(maxsize=4096)
def _binomial(n: int, p: float) -> tuple[float, ...]:
    """P(k) for k = 0..n successes of n trials with probability p (then zeros)."""
    out = [0.0] * (n + 1)
    out[0] = 1.0
    for _ in range(n):
        nxt = [0.0] * (n + 1)
        for k, q in enumerate(out):
            if q:
                nxt[k] += q * (1 - p)
                if k + 1 <= n:
                    nxt[k + 1] += q * p
        out = nxt
    return tuple(out + [0.0] * (ROW_LIMIT + 1))


def _mean_cards_per_play(state: dict[str, Any]) -> float:
    """Numbered cards per play by the other seats so far this hand (1.5 before any)."""
    plays = [p for turn in state["history"] for p in turn["plays"] if p["seat"] != state["seat"]]
    if not plays:
        return 1.5
    return sum(sum(1 for c in p["cards"] if c) for p in plays) / len(plays)


STRATEGIES = {"random": random_bot, "greedy": greedy, "cautious": cautious}

if __name__ == "__main__":
    main(STRATEGIES)
