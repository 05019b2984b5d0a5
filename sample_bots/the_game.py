"""Sample bots for The Game (game id ``the_game``; docs/games/the_game.md).

Run one with ``python -m sample_bots.the_game heuristic --port 8001``.

Every ``act`` message carries ``state`` (this seat's view) and ``legal`` (every legal
action). A placement is ``{"card": 38, "pile": 0}``, ending the turn is ``"end"``. Piles 0
and 1 go up (a card must be higher than the top, or exactly 10 lower: the backwards
trick); piles 2 and 3 go down (lower, or exactly 10 higher). The reply is
``{"action": <one element of legal>}`` and, when ``state["communication"] == "claims"``,
it may add ``"claims": [pile, ...]``: the piles this seat asks the others to leave alone
(every seat sees every seat's latest claims in ``state["claims"]``).

Strategies
----------
``random``     a random legal placement; ends the turn as soon as it may.
``heuristic``  plans the rest of its turn by *cost*. Placing a card costs the cards still in
               play (in a hand or the draw pile) that it jumps over, each weighted by how
               many other piles can still take it (a card no pile can take is lost; one
               three other piles take hardly matters). A backwards trick has a negative
               cost: the cards it opens up again, plus a bonus. It places the minimum at the
               lowest total cost, looking one placement further (so 45 then 35 on an
               ascending 40 counts as a cheap pair), then keeps placing while a placement
               costs at most ``extra``. With claims on, it claims the piles for which it
               keeps one of the next few cards, and it charges extra for jumping far on a
               pile another seat claimed.
``greedy``     the cheapest placement each time, no look-ahead, no claims (a baseline).
"""

from __future__ import annotations

from typing import Any

from sample_bots._server import main, message_rng

UP = (True, True, False, False)  # piles 0, 1 ascend; piles 2, 3 descend
END = "end"
FIRE_CARDS = frozenset((22, 33, 44, 55, 66, 77))  # only with the on_fire option
LOST = 1000.0  # plan value of getting stuck before the minimum (the game ends)

# Tuned on self-play with scripts/eval_the_game.py (which can override any of them).
PARAMS: dict[str, float] = {
    "w0": 2.5,  # cost of jumping over a card in play that no other pile can take
    "w1": 1.2,  # ... that one other pile can still take
    "w2": 0.6,  # ... two other piles
    "w3": 0.3,  # ... three other piles
    "trick": 2.0,  # bonus for a backwards trick, on top of the cards it opens up again
    "extra": 1.0,  # after the minimum, keep placing while a placement costs at most this
    "lookahead": 1,  # placements looked at beyond the minimum
    "breadth": 8,  # placements looked at in each position of the search (the cheapest)
    "claim_close": 2,  # claim a pile if a kept card jumps over at most this many cards
    "claim_max": 2,  # claim at most this many piles (the closest ones)
    "claim_penalty": 1.5,  # cost of surely jumping over another seat's claimed card
    "fire_open": 12.0,  # cost of leaving an own fire card for the next player to cover
    "fire_due": 500.0,  # cost of ending the turn with a due fire card uncovered (a loss)
}


def random_strategy(message: dict[str, Any]) -> dict[str, Any]:
    """A random legal placement; ends the turn as soon as it may."""
    legal = message["legal"]
    if END in legal:
        return {"action": END}
    return {"action": message_rng(message, "random").choice(legal)}


def heuristic(message: dict[str, Any]) -> dict[str, Any]:
    """Plan the rest of the turn by cost; claim the piles where a close card is kept."""
    return _play(message, PARAMS, lookahead=int(PARAMS["lookahead"]), talk=True)


def greedy(message: dict[str, Any]) -> dict[str, Any]:
    """The cheapest placement each time (tricks first), no claims."""
    return _play(message, dict(PARAMS, claim_penalty=0.0), lookahead=None, talk=False)


def _play(message: dict[str, Any], params: dict[str, float], lookahead: int | None, talk: bool) -> dict[str, Any]:
    state = message["state"]
    legal = message["legal"]
    on_fire = bool((message.get("options") or {}).get("on_fire"))
    plan = _Planner(state, params, on_fire)
    need = max(0, state["minimum"] - state["placed_this_turn"])
    depth = 1 if lookahead is None else need + lookahead
    move = plan.best_move(need, depth)
    action: Any = END if move is None else {"card": move[0], "pile": move[1]}
    if action not in legal:  # cannot happen with a correct planner; stay legal anyway
        action = END if END in legal else legal[0]
    reply: dict[str, Any] = {"action": action}
    if talk and state.get("communication") == "claims":
        reply["claims"] = plan.claims(action)
    return reply


class _Planner:
    """What the active seat knows, and the search over the rest of its turn."""

    def __init__(self, state: dict[str, Any], params: dict[str, float], on_fire: bool) -> None:
        self.params = params
        self.seat = state["seat"]
        self.hand = list(state["hand"])
        self.tops = [p["top"] for p in state["piles"]]
        self.on_fire = on_fire
        on_piles = {c for p in state["piles"] for c in p["cards"]}
        # live[x]: how many cards <= x are still in play (in some hand or the draw pile).
        live = [0] * 102
        for x in range(2, 101):
            live[x] = live[x - 1] + (1 if x <= 99 and x not in on_piles else 0)
        self.live = live
        # weight[p][x]: prefix sums of the cost of jumping over each card in play on pile
        # p, by k = how many other piles can still take that card.
        w_by_k = (params["w0"], params["w1"], params["w2"], params["w3"])
        t0, t1, t2, t3 = self.tops
        self.weight: list[list[float]] = []
        for pile in range(4):
            acc = [0.0] * 101
            total = 0.0
            for x in range(2, 100):
                if x not in on_piles:
                    k = (x > t0) + (x > t1) + (x < t2) + (x < t3)
                    k -= (x > self.tops[pile]) if UP[pile] else (x < self.tops[pile])
                    total += w_by_k[k]
                acc[x] = total
            acc[100] = total
            self.weight.append(acc)
        # How many other seats ask to leave each pile alone.
        self.claimed = [0] * 4
        for s, piles in enumerate(state.get("claims") or []):
            if s != self.seat:
                for p in piles:
                    self.claimed[p] += 1
        # Uncovered fire cards: due ones must be covered this turn; own ones (placed this
        # turn) had better be, or the next player must.
        due, own = set(), set()
        for f in state.get("fire") or []:
            (due if f["deadline_turn"] <= state["turn"] else own).add(f["pile"])
        self.fire_due = frozenset(due)
        self.fire_own = frozenset(own)
        self.memo: dict[tuple[Any, ...], tuple[float, tuple[int, int] | None]] = {}

    def cost(self, card: int, pile: int, top: int) -> float | None:
        """Cost of placing ``card`` on ``pile`` whose top is ``top``; None if illegal."""
        p = self.params
        w = self.weight[pile]
        if UP[pile]:
            if card == top - 10:
                return -p["trick"] - (w[top - 1] - w[card])
            if card < top:
                return None
            c = w[card - 1] - w[top]
            jumped = self.live[card - 1] - self.live[top]
        else:
            if card == top + 10:
                return -p["trick"] - (w[card - 1] - w[top])
            if card > top:
                return None
            c = w[top - 1] - w[card]
            jumped = self.live[top - 1] - self.live[card]
        if self.claimed[pile]:
            # a claim says "I keep one of the next claim_close + 1 cards here"
            c += self.claimed[pile] * p["claim_penalty"] * min(1.0, jumped / (p["claim_close"] + 1))
        return c

    def candidates(self, hand: list[int], tops: list[int]) -> list[tuple[float, int, int]]:
        """Placements worth a look: per pile the cheapest card, every trick, and every
        card that sets up a trick with another card of the hand."""
        out: list[tuple[float, int, int]] = []
        held = set(hand)
        for pile in range(4):
            top = tops[pile]
            back = -10 if UP[pile] else 10
            cheapest: tuple[float, int, int] | None = None
            for card in hand:
                c = self.cost(card, pile, top)
                if c is None:
                    continue
                if c < 0 or card + back in held:
                    out.append((c, card, pile))
                elif cheapest is None or c < cheapest[0]:
                    cheapest = (c, card, pile)
            if cheapest is not None:
                out.append(cheapest)
        out.sort()
        return out[: int(self.params["breadth"])]

    def best_move(self, need: int, depth: int) -> tuple[int, int] | None:
        """First placement of the cheapest plan; None means end the turn."""
        return self._search(self.hand, list(self.tops), need, depth, self.fire_due, self.fire_own)[1]

    def _search(
        self,
        hand: list[int],
        tops: list[int],
        need: int,
        depth: int,
        due: frozenset[int],
        own: frozenset[int],
    ) -> tuple[float, tuple[int, int] | None]:
        # Plan value: the cost of the placements still needed, plus (cost - extra) for
        # each placement beyond them, so an extra is worth it when it costs under extra.
        key = (tuple(hand), tuple(tops), need, depth, due, own)
        if key in self.memo:  # the same cards on different piles, in another order
            return self.memo[key]
        best_value = float("inf")
        best: tuple[int, int] | None = None
        if need <= 0:  # ending the turn here is allowed
            best_value = self.params["fire_due"] * len(due) + self.params["fire_open"] * len(own)
        if depth <= 0:
            return best_value, None
        for c, card, pile in self.candidates(hand, tops):
            step = c if need > 0 else c - self.params["extra"]
            new_due = due - {pile}
            new_own = own - {pile}
            if self.on_fire and card in FIRE_CARDS:
                new_own = new_own | {pile}
            old = tops[pile]
            tops[pile] = card
            rest = [h for h in hand if h != card]
            value, _ = self._search(rest, tops, need - 1, depth - 1, new_due, new_own)
            tops[pile] = old
            value = min(value, LOST) + step
            if value < best_value:
                best_value, best = value, (card, pile)
        self.memo[key] = (best_value, best)
        return best_value, best

    def claims(self, action: Any) -> list[int]:
        """The piles (at most claim_max) where the hand kept after ``action`` holds one
        of the next claim_close + 1 cards still in play, or a backwards trick."""
        hand = list(self.hand)
        tops = list(self.tops)
        if action != END:
            hand.remove(action["card"])
            tops[action["pile"]] = action["card"]
        live = self.live
        close = []
        for pile in range(4):
            top = tops[pile]
            nearest = None
            for card in hand:
                if UP[pile]:
                    jumped = -1 if card == top - 10 else live[card - 1] - live[top] if card > top else None
                else:
                    jumped = -1 if card == top + 10 else live[top - 1] - live[card] if card < top else None
                if jumped is not None and (nearest is None or jumped < nearest):
                    nearest = jumped
            if nearest is not None and nearest <= self.params["claim_close"]:
                close.append((nearest, pile))
        close.sort()
        return sorted(p for _, p in close[: int(self.params["claim_max"])])


STRATEGIES = {"random": random_strategy, "heuristic": heuristic, "greedy": greedy}

if __name__ == "__main__":
    main(STRATEGIES)
