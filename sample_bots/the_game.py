"""Sample bots for The Game (game id ``the_game``).

Run one with ``python -m sample_bots.the_game heuristic --port 8001``.

Every ``act`` message carries ``state`` (this seat's view) and ``legal`` (every legal
action). A placement is ``{"card": 38, "pile": 0}``, ending the turn is ``"end"``. Piles 0
and 1 go up (a card must be higher than the top, or exactly 10 lower); piles 2 and 3 go
down (lower, or exactly 10 higher). The reply is ``{"action": <one element of legal>}``
and, when ``state["communication"] == "claims"``, it may add ``"claims": [pile, ...]``:
the piles this seat asks the others to leave alone (every seat sees every seat's claims).

Strategies
----------
``random``     a random legal action (ending the turn whenever it may).
``heuristic``  plans the rest of its turn. The *cost* of placing a card is how many cards
               still in play (not on a pile) it jumps over; a backwards trick has a negative
               cost (the cards it opens up again). It places the minimum at the lowest total
               cost (looking a few placements ahead, so 45 then 35 on an ascending 40 counts
               as one cheap pair), then keeps placing while a placement costs little. With
               claims it claims the piles for which it keeps a close card or a jump-back pair
               and charges extra for jumping over a pile another seat claimed.
``greedy``     the heuristic without its look-ahead and without claims, for comparison.
"""

from __future__ import annotations

from typing import Any

from sample_bots._server import main, message_rng

UP = (True, True, False, False)  # piles 0, 1 ascend; piles 2, 3 descend
END = "end"
FIRE_CARDS = frozenset((22, 33, 44, 55, 66, 77))

# Tuned on in-process self-play (scripts/eval_the_game.py).
PARAMS: dict[str, float] = {
    "extra": 1.0,  # keep placing after the minimum while a placement costs at most this
    "extra_empty": 1.0,  # the same once the draw pile is empty
    "raw": 0.05,  # weight of the plain distance beside the count of cards jumped over
    "trick": 2.0,  # bonus for a backwards trick on top of the cards it opens up
    "claim_close": 3,  # claim a pile if a kept card jumps over at most this many cards
    "claim_penalty": 6.0,  # extra cost for jumping over a pile another seat claimed
    "claim_free": 1,  # ... unless the jump costs at most this
    "lookahead": 1,
    "w0": 1.0,  # weight of a jumped card no other pile can take
    "w1": 1.0,  # ... that one other pile can take
    "w2": 1.0,
    "w3": 1.0,  # extra placements looked at beyond the minimum
    "fire_open": 12.0,  # cost of leaving an own fire card uncovered for the next player
}


def random_strategy(message: dict[str, Any]) -> dict[str, Any]:
    """A random legal placement; ends the turn as soon as it may."""
    legal = message["legal"]
    if END in legal:
        return {"action": END}
    return {"action": message_rng(message, "random").choice(legal)}


def heuristic(message: dict[str, Any]) -> dict[str, Any]:
    """Plan the turn by cost (see the module docstring); claim close piles."""
    return _play(message, PARAMS, plan=True)


def greedy(message: dict[str, Any]) -> dict[str, Any]:
    """Cheapest placement first, no look-ahead, no claims."""
    params = dict(PARAMS, lookahead=0, claim_penalty=0.0)
    reply = _play(message, params, plan=False)
    reply.pop("claims", None)
    return reply


def _play(message: dict[str, Any], params: dict[str, float], plan: bool) -> dict[str, Any]:
    state = message["state"]
    legal = message["legal"]
    turn = _Turn(state, params, bool(message.get("options", {}).get("on_fire")))
    need = max(0, state["minimum"] - state["placed_this_turn"])
    depth = need + int(params["lookahead"]) if plan else 1
    _value, move = turn.best(need, depth)
    action: Any = END if move is None else {"card": move[0], "pile": move[1]}
    if action not in legal:  # the plan must come from legal; stay safe regardless
        action = legal[0] if END not in legal else END
    reply: dict[str, Any] = {"action": action}
    if state.get("communication") == "claims":
        reply["claims"] = turn.claims(action)
    return reply


class _Turn:
    """The active seat's knowledge for planning the rest of its turn."""

    def __init__(self, state: dict[str, Any], params: dict[str, float], on_fire: bool) -> None:
        self.params = params
        self.seat = state["seat"]
        self.hand = list(state["hand"])
        self.tops = [p["top"] for p in state["piles"]]
        on_piles = {c for p in state["piles"] for c in p["cards"]}
        tops = self.tops
        lo_up = min(tops[0], tops[1])
        hi_down = max(tops[2], tops[3])
        w_by_k = (params["w0"], params["w1"], params["w2"], params["w3"])
        # weight[p][x]: prefix sums over the cards x still in play (in some hand or the
        # draw pile) of how much it hurts to jump over x on pile p: a card no other pile
        # can take any more (k = 0) is nearly lost, one that three others take is not.
        self.weight: list[list[float]] = []
        for pile in range(4):
            acc = [0.0] * 102
            total = 0.0
            for x in range(2, 100):
                if x not in on_piles:
                    k = 0
                    for q in range(4):
                        if q != pile and ((x > tops[q]) if UP[q] else (x < tops[q])):
                            k += 1
                    total += w_by_k[k]
                acc[x] = total
            acc[100] = acc[101] = total
            self.weight.append(acc)
        del lo_up, hi_down
        self.extra = params["extra"] if state["draw_pile"] else params["extra_empty"]
        claimed = [False] * 4
        for s, piles in enumerate(state.get("claims") or []):
            if s != self.seat:
                for p in piles:
                    claimed[p] = True
        self.claimed = claimed
        # Uncovered fire cards: due ones must be covered this turn, own ones (placed this
        # turn) should be, or the next player has to.
        self.on_fire = on_fire
        due = set()
        own = set()
        for f in state.get("fire", []):
            (due if f["deadline_turn"] <= state["turn"] else own).add(f["pile"])
        self.fire_due = frozenset(due)
        self.fire_own = frozenset(own)

    # Costs -----------------------------------------------------------------------------

    def jumped(self, pile: int, a: int, b: int) -> float:
        """Weighted cards still in play strictly between a and b, for pile ``pile``."""
        lo, hi = (a, b) if a < b else (b, a)
        if hi - lo <= 1:
            return 0.0
        w = self.weight[pile]
        return w[hi - 1] - w[lo]

    def cost(self, card: int, pile: int, top: int) -> float | None:
        """Cost of ``card`` on ``pile`` whose top is ``top``; None if illegal."""
        p = self.params
        if UP[pile]:
            if card > top:
                jumped = self.jumped(pile, top, card)
                c = jumped + p["raw"] * (card - top)
            elif card == top - 10:
                return -p["trick"] - self.jumped(pile, card, top)
            else:
                return None
        else:
            if card < top:
                jumped = self.jumped(pile, card, top)
                c = jumped + p["raw"] * (top - card)
            elif card == top + 10:
                return -p["trick"] - self.jumped(pile, top, card)
            else:
                return None
        if self.claimed[pile] and jumped > p["claim_free"]:
            c += p["claim_penalty"]
        return c

    # Planning --------------------------------------------------------------------------

    def candidates(self, hand: list[int], tops: list[int]) -> list[tuple[float, int, int]]:
        """Promising placements: per pile the cheapest card, tricks, trick set-ups."""
        out: list[tuple[float, int, int]] = []
        hs = set(hand)
        for pile in range(4):
            top = tops[pile]
            best: tuple[float, int, int] | None = None
            for card in hand:
                c = self.cost(card, pile, top)
                if c is None:
                    continue
                step = -10 if UP[pile] else 10
                if c < 0 or (card + step) in hs:
                    out.append((c, card, pile))  # a trick, or a card that sets one up
                elif best is None or c < best[0]:
                    best = (c, card, pile)
            if best is not None and best not in out:
                out.append(best)
        out.sort()
        return out

    def best(self, need: int, depth: int) -> tuple[float, tuple[int, int] | None]:
        """Lowest plan value and its first placement (None: end the turn)."""
        return self._search(self.hand, list(self.tops), need, depth, self.fire_due, self.fire_own)

    def _search(
        self,
        hand: list[int],
        tops: list[int],
        need: int,
        depth: int,
        due: frozenset[int],
        own: frozenset[int],
    ) -> tuple[float, tuple[int, int] | None]:
        inf = float("inf")
        best_value = inf
        best_move: tuple[int, int] | None = None
        if need <= 0:
            # ending here: a due fire card left uncovered loses the game
            best_value = 500.0 * len(due) + self.params["fire_open"] * len(own)
        if depth <= 0:
            return best_value, None
        for c, card, pile in self.candidates(hand, tops):
            step = c if need > 0 else c - self.extra
            new_due = due - {pile} if pile in due else due
            new_own = own - {pile} if pile in own else own
            if self.on_fire and card in FIRE_CARDS:
                new_own = new_own | {pile}
            old = tops[pile]
            tops[pile] = card
            rest = [h for h in hand if h != card]
            value, _ = self._search(rest, tops, need - 1, depth - 1, new_due, new_own)
            tops[pile] = old
            if value == inf:
                value = 1000.0  # stuck before the minimum: the game would end
            value += step
            if value < best_value:
                best_value, best_move = value, (card, pile)
        return best_value, best_move

    # Claims ----------------------------------------------------------------------------

    def claims(self, action: Any) -> list[int]:
        """Piles where the hand kept after ``action`` has a close card or a trick pair."""
        hand = list(self.hand)
        tops = list(self.tops)
        if action != END:
            hand.remove(action["card"])
            tops[action["pile"]] = action["card"]
        hs = set(hand)
        out = []
        for pile in range(4):
            top = tops[pile]
            step = -10 if UP[pile] else 10
            for card in hand:
                c = self.cost(card, pile, top)
                if c is None:
                    continue
                if c < 0 or (card + step) in hs or self.jumped(pile, top, card) <= self.params["claim_close"]:
                    out.append(pile)
                    break
        return out


STRATEGIES = {"random": random_strategy, "heuristic": heuristic, "greedy": greedy}

if __name__ == "__main__":
    main(STRATEGIES)
