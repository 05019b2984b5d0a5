"""The Game (Steffen Benndorf), 1-5 players, cooperative: place all 98 cards together.

Rules (docs/games/the_game.md; RULES.md section 1)
--------------------------------------------------
98 cards 2..99. Piles 0 and 1 ascend from 1, piles 2 and 3 descend from 100. Hands: 8 solo,
7 for two, 6 for 3-5 players (one fewer with ``reduced_hand``); the rest is the draw pile.
Seat 0 starts, play goes s -> s+1. On an ascending pile a card must be higher than the top,
or exactly 10 lower (the backwards trick); on a descending pile lower, or exactly 10 higher.
The active player must place at least the minimum (2, 3 with ``pro``; 1 once the draw pile
was empty at the start of the turn), may then go on or end the turn, and draws as many
cards as placed. Once the draw pile is empty, empty hands are skipped. The game ends when
the active player cannot place the minimum (before the turn if no legal sequence of that
length exists, or mid-turn when stuck: cards placed stay placed) or when all 98 cards are
placed (a win). Score = cards not placed, shared by every seat; lower is better.

On Fire (``on_fire``): 22, 33, 44, 55, 66, 77 are fire cards; one placed during turn t must
be covered (any card placed on its pile) by the end of turn t + 1, the next turn actually
taken (the placer's own next turn solo). A turn that ends with an expired fire card
uncovered loses at once (``lost_by_fire``). The 98th card wins even if it is a fire card.

Claims (``communication = "claims"``): a reply may carry ``"claims": [pile, ...]``, the piles
the seat asks the others to leave alone; it replaces the seat's earlier claims and every
seat sees every seat's claims. With ``communication = "none"`` only an absent, ``null`` or
empty claims field is accepted.

Decisions where RULES.md is silent
----------------------------------
A game that ends because the active
seat cannot place the minimum ends as "stuck" even if a fire card was due that turn (its
deadline, the end of that turn, is never reached); ``lost_by_fire`` is only set when a
turn ends with an expired fire card. Claims are kept sorted; ``turns`` in the result counts
turns in which a seat was asked (a turn that could not start is not counted). Each
placement is one decision. The turn ends by the action ``"end"`` (legal once the minimum
is placed) or by itself when the minimum is placed and no placement is left (for
instance an empty hand). A seat that is not active has nothing to decide.

Seat view (JSON)
----------------
::

    {
      "seat": 1,                    # this seat
      "players": 3,
      "turn": 5,                    # number of the current turn, 1-based (turns taken):
                                    # unlike the other games, not a seat (see "active")
      "turn_number": 5,             # the same number, under the name 6 nimmt! uses
      "active": 1,                  # seat whose turn it is (the last one once over)
      "your_turn": true,            # whether this seat must decide now
      "hand": [14, 38, 61, 70, 88, 95],          # own hand, ascending
      "hand_sizes": [6, 6, 6],
      "draw_pile": 71,              # size only, never the order
      "piles": [                    # 0, 1 up from 1; 2, 3 down from 100
        {"direction": "up", "top": 12, "cards": [5, 12]},
        {"direction": "up", "top": 9, "cards": [9]},
        {"direction": "down", "top": 97, "cards": [97]},
        {"direction": "down", "top": 100, "cards": []}
      ],
      "minimum": 2,                 # cards the active seat must place this turn
      "placed_this_turn": 0,        # cards the active seat has placed this turn
      "cards_left": 94,             # 98 - cards on the piles: the score so far
      "communication": "claims",
      "claims": [[], [3], []],      # every seat's current claims
      "fire": [                     # uncovered fire cards (always [] without on_fire)
        {"card": 44, "pile": 0, "placed_turn": 4, "deadline_turn": 5, "deadline_seat": 1}
      ],
      "over": false
    }

Actions
-------
``{"card": 38, "pile": 0}`` places card 38 on pile 0; ``"end"`` ends the turn.
``legal`` lists every legal placement ordered by card then pile, then ``"end"`` if allowed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import (
    Action,
    Game,
    GameInfo,
    IllegalAction,
    InvalidExtras,
    OptionSpec,
    Result,
    StatSpec,
    View,
    compact,
    ranks_from_scores,
    sample_command,
    shuffle,
)

CARDS = tuple(range(2, 100))
TOTAL = len(CARDS)  # 98
PILES = 4
UP = (True, True, False, False)  # piles 0, 1 ascend; 2, 3 descend
START_TOPS = (1, 1, 100, 100)
DIRECTION = ("up", "up", "down", "down")
FIRE_CARDS = frozenset((22, 33, 44, 55, 66, 77))
HAND_SIZE = {1: 8, 2: 7, 3: 6, 4: 6, 5: 6}
END = "end"


@dataclass(slots=True)
class TheGameState:
    """A match of The Game: hands, draw pile, piles, the turn, claims, fire, the generator."""

    seats: int
    options: dict[str, Any]
    rng: random.Random
    hand_size: int
    base_minimum: int
    hands: list[list[int]] = field(default_factory=list)  # each ascending
    deck: list[int] = field(default_factory=list)  # the draw pile (hidden); next card is deck[-1]
    piles: list[list[int]] = field(default_factory=list)
    tops: list[int] = field(default_factory=lambda: list(START_TOPS))
    active: int = 0
    turn: int = 1  # turns taken, 1-based
    placed: int = 0  # this turn
    minimum: int = 0  # this turn
    placed_total: int = 0
    placed_by: list[int] = field(default_factory=list)
    claims: list[list[int]] = field(default_factory=list)
    # Uncovered fire cards: {"card", "pile", "placed_turn", "deadline_turn"}.
    fire: list[dict[str, int]] = field(default_factory=list)
    over: bool = False
    end_reason: str | None = None  # "won" | "stuck" | "fire"
    turn_log: list[dict[str, int]] = field(default_factory=list)  # {"seat", "placed"} per turn taken


class TheGame(Game):
    """The Game with the pro version, the reduced hand, On Fire and claims."""

    info = GameInfo(
        id="the_game",
        title="The Game",
        min_seats=1,
        max_seats=5,
        cooperative=True,
        options=(
            OptionSpec("pro", False, "pro version: minimum 3 cards per turn while the draw pile lasts"),
            OptionSpec("reduced_hand", False, "one card fewer in hand (7 solo, 6 for two, 5 for 3-5)"),
            OptionSpec("on_fire", False, "On Fire: fire cards 22..77 must be covered by the next turn's end"),
            OptionSpec(
                "communication",
                "claims",
                "claims: replies may carry the piles to leave alone; none: no channel",
                choices=("claims", "none"),
            ),
        ),
        extra_reply_fields=("claims",),
        stats=(
            StatSpec("cards_left", "cards left", "cards not placed when the game ended (lower is better)"),
            StatSpec("won", "win rate", "share of games with all 98 cards placed"),
            StatSpec("excellent", "excellent rate", "share of games with fewer than 10 cards left"),
            StatSpec("lost_by_fire", "fire-loss rate", "share of games lost to an uncovered fire card"),
        ),
        score_min=0,  # cards not placed
        score_max=98,
    )

    def setup(self, seats: int, seed: int, options: Mapping[str, Any]) -> TheGameState:
        """Shuffle and deal; seat 0 starts the first turn."""
        opts = self.check_options(seats, options)
        state = TheGameState(
            seats=seats,
            options=opts,
            rng=random.Random(seed),
            hand_size=HAND_SIZE[seats] - (1 if opts["reduced_hand"] else 0),
            base_minimum=3 if opts["pro"] else 2,
            placed_by=[0] * seats,
            claims=[[] for _ in range(seats)],
        )
        _deal(state)
        _start_turn(state)
        return state

    def to_act(self, state: TheGameState) -> tuple[int, ...]:
        """The active seat, or nobody once the game is over."""
        return () if state.over else (state.active,)

    def view(self, state: TheGameState, seat: int) -> View:
        """Own hand, public piles, counts, claims and fire deadlines (see the docstring)."""
        return {
            "seat": seat,
            "players": state.seats,
            "turn": state.turn,
            "turn_number": state.turn,
            "active": state.active,
            "your_turn": not state.over and seat == state.active,
            "hand": list(state.hands[seat]),
            "hand_sizes": [len(h) for h in state.hands],
            "draw_pile": len(state.deck),
            "piles": [
                {"direction": DIRECTION[p], "top": state.tops[p], "cards": list(state.piles[p])} for p in range(PILES)
            ],
            "minimum": state.minimum,
            "placed_this_turn": state.placed,
            "cards_left": TOTAL - state.placed_total,
            "communication": state.options["communication"],
            "claims": [list(c) for c in state.claims],
            "fire": [
                {
                    "card": f["card"],
                    "pile": f["pile"],
                    "placed_turn": f["placed_turn"],
                    "deadline_turn": f["deadline_turn"],
                    "deadline_seat": _deadline_seat(state, f["deadline_turn"]),
                }
                for f in state.fire
            ],
            "over": state.over,
        }

    def legal(self, state: TheGameState, seat: int) -> list[Action]:
        """Every legal placement by card then pile, then "end" once the minimum is placed."""
        if state.over or seat != state.active:
            return []
        tops = state.tops
        out: list[Action] = []
        for card in state.hands[seat]:
            for p in range(PILES):
                if _fits(card, tops[p], UP[p]):
                    out.append({"card": card, "pile": p})
        if state.placed >= state.minimum:
            out.append(END)
        return out

    def apply(self, state: TheGameState, seat: int, action: Action) -> TheGameState:
        """Place one card or end the turn; raise IllegalAction for anything else."""
        if state.over:
            raise IllegalAction("the game is over")
        if seat != state.active:
            raise IllegalAction(f"seat {seat} is not to act (seat {state.active} is)")
        if action == END and isinstance(action, str):
            if state.placed < state.minimum:
                raise IllegalAction(f"cannot end the turn: {state.placed} of the minimum {state.minimum} placed")
            _end_turn(state)
            return state
        card, pile = _parse_placement(action)
        hand = state.hands[seat]
        if card not in hand:
            raise IllegalAction(f"card {card} is not in the hand")
        if not _fits(card, state.tops[pile], UP[pile]):
            raise IllegalAction(f"card {card} cannot go on pile {pile} ({DIRECTION[pile]}, top {state.tops[pile]})")
        hand.remove(card)
        state.piles[pile].append(card)
        state.tops[pile] = card
        state.placed += 1
        state.placed_total += 1
        state.placed_by[seat] += 1
        if state.fire:
            state.fire = [f for f in state.fire if f["pile"] != pile]
        if state.options["on_fire"] and card in FIRE_CARDS:
            state.fire.append({"card": card, "pile": pile, "placed_turn": state.turn, "deadline_turn": state.turn + 1})
        if state.placed_total == TOTAL:
            _log_turn(state)
            _finish(state, "won")
            return state
        if not _any_placement(hand, state.tops):
            if state.placed < state.minimum:
                _log_turn(state)
                _finish(state, "stuck")
            else:
                _end_turn(state)
        return state

    def is_over(self, state: TheGameState) -> bool:
        """True once the game is won, stuck or lost by fire."""
        return state.over

    def result(self, state: TheGameState) -> Result:
        """Every seat scores the shared number of cards left; all ranks are 1."""
        left = TOTAL - state.placed_total
        scores = [float(left)] * state.seats
        return Result(
            scores=scores,
            ranks=ranks_from_scores(scores, lower_is_better=True),
            lower_is_better=True,
            details={
                "cards_left": left,
                "won": left == 0,
                "excellent": left < 10,
                "lost_by_fire": state.end_reason == "fire",
                "end_reason": state.end_reason,
                "turns": len(state.turn_log),
                "in_hands": sum(len(h) for h in state.hands),
                "draw_pile": len(state.deck),
                "placed_by_seat": list(state.placed_by),
                "turn_log": [dict(t) for t in state.turn_log],
                "piles": [list(p) for p in state.piles],
            },
        )

    # Hooks ----------------------------------------------------------------------------

    def apply_extras(self, state: TheGameState, seat: int, extras: Mapping[str, Any]) -> TheGameState:
        """Take the reply's ``claims``: a list of distinct piles 0..3, replacing earlier ones."""
        if "claims" not in extras:
            return state
        claims = extras["claims"]
        if state.options["communication"] == "none":
            if claims is None or (isinstance(claims, list) and not claims):
                return state
            raise InvalidExtras("claims are off in this match (communication = none)")
        if not isinstance(claims, list):
            raise InvalidExtras(f"claims must be a list of piles 0..3, got {claims!r}")
        for p in claims:
            if type(p) is not int or not 0 <= p < PILES:
                raise InvalidExtras(f"claims: {p!r} is not a pile 0..3")
        if len(set(claims)) != len(claims):
            raise InvalidExtras(f"claims: repeated pile in {claims!r}")
        if not 0 <= seat < state.seats:
            raise InvalidExtras(f"no seat {seat}")
        state.claims[seat] = sorted(claims)
        return state

    def seat_stats(self, result: Result, seat: int) -> dict[str, float]:
        """cards_left, won, excellent and lost_by_fire of the seat's (shared) result."""
        d = result.details
        return {
            "cards_left": float(d["cards_left"]),
            "won": 1.0 if d["won"] else 0.0,
            "excellent": 1.0 if d["excellent"] else 0.0,
            "lost_by_fire": 1.0 if d["lost_by_fire"] else 0.0,
        }

    def redeal_hidden(self, state: TheGameState, seat: int, rng: random.Random) -> TheGameState:
        """Other hands and the draw pile reshuffled together, hand sizes kept.

        If the active seat is another seat, its new hand must still allow the turn to go
        on as it did (a legal sequence of the minimum at the turn's start, else a legal
        placement); up to 100 deals are tried, then the hidden cards are left as they were.
        """
        new: TheGameState = self.copy(state)
        new.rng = random.Random(rng.getrandbits(64))
        others = [s for s in range(state.seats) if s != seat]
        pool = list(new.deck)
        for s in others:
            pool.extend(new.hands[s])
        for _ in range(100):
            rng.shuffle(pool)
            i = 0
            hands = {}
            for s in others:
                k = len(new.hands[s])
                hands[s] = sorted(pool[i : i + k])
                i += k
            if not new.over and new.active != seat and not _can_go_on(new, hands[new.active]):
                continue
            for s in others:
                new.hands[s] = hands[s]
            new.deck = pool[i:]
            break
        return new

    def invariants(self, state: TheGameState) -> list[str]:
        """Every card once, piles legal, counts and deadlines consistent."""
        bad: list[str] = []
        every = [c for h in state.hands for c in h] + state.deck + [c for p in state.piles for c in p]
        if sorted(every) != list(CARDS):
            bad.append(f"cards not accounted for exactly once ({len(every)} seen)")
        for s, h in enumerate(state.hands):
            if h != sorted(h):
                bad.append(f"hand of seat {s} not sorted")
            if len(h) > state.hand_size:
                bad.append(f"hand of seat {s} has {len(h)} > {state.hand_size} cards")
            if state.deck and s != state.active and len(h) != state.hand_size and not state.over:
                bad.append(f"seat {s} holds {len(h)} cards while the draw pile is not empty")
        for p in range(PILES):
            top = START_TOPS[p]
            for c in state.piles[p]:
                if not _fits(c, top, UP[p]):
                    bad.append(f"pile {p}: {c} on {top} is illegal")
                top = c
            if top != state.tops[p]:
                bad.append(f"pile {p}: top {state.tops[p]} but last card {top}")
        if state.placed_total != sum(len(p) for p in state.piles):
            bad.append("placed_total does not match the piles")
        if sum(state.placed_by) != state.placed_total:
            bad.append("placed_by does not add up")
        if not 0 <= state.placed <= state.placed_total:
            bad.append(f"placed this turn {state.placed} out of range")
        if state.minimum not in (1, 2, 3):
            bad.append(f"minimum {state.minimum}")
        for f in state.fire:
            if not state.options["on_fire"] or f["card"] not in FIRE_CARDS:
                bad.append(f"fire entry {f} without a fire card")
            elif state.tops[f["pile"]] != f["card"]:
                bad.append(f"fire card {f['card']} listed but covered")
            if f["deadline_turn"] < state.turn and not state.over:
                bad.append(f"fire card {f['card']} past its deadline")
        for s, claim in enumerate(state.claims):
            if claim != sorted(set(claim)) or any(not 0 <= p < PILES for p in claim):
                bad.append(f"claims of seat {s} malformed: {claim}")
        if not state.over:
            if not state.hands[state.active]:
                bad.append("the active seat has an empty hand")
            if state.placed_total == TOTAL:
                bad.append("all cards placed but not over")
        return bad

    def glance(self, view: View) -> str:
        """The part of a seat's view that decides its move, on one line."""
        tops = [p.get("top") for p in view.get("piles", ())]
        return (
            f"hand {compact(view.get('hand'))} pile tops {compact(tops)} "
            f"placed {view.get('placed_this_turn')}/{view.get('minimum')}"
        )

    def sample_opponent(self) -> tuple[str, ...]:
        """The sample bot playing at random."""
        return sample_command("sample_bots.the_game")


# Private helpers ---------------------------------------------------------------------


def _deal(state: TheGameState) -> None:
    """Shuffle the 98 cards, deal every hand from the top, leave the rest as the draw pile."""
    deck = list(CARDS)
    shuffle(state.rng, deck)
    k = state.hand_size
    for _ in range(state.seats):
        hand = deck[-k:]
        del deck[-k:]
        state.hands.append(sorted(hand))
    state.deck = deck
    state.piles = [[] for _ in range(PILES)]


def _fits(card: int, top: int, up: bool) -> bool:
    if up:
        return card > top or card == top - 10
    return card < top or card == top + 10


def _any_placement(hand: list[int], tops: list[int]) -> bool:
    t0, t1, t2, t3 = tops
    lo = t0 if t0 < t1 else t1  # an ascending pile takes anything above its top
    hi = t2 if t2 > t3 else t3  # a descending pile anything below its top
    return any(c > lo or c < hi or c == t0 - 10 or c == t1 - 10 or c == t2 + 10 or c == t3 + 10 for c in hand)


def _has_sequence(hand: list[int], tops: list[int], k: int) -> bool:
    """True if ``k`` cards of ``hand`` can be placed one after another."""
    if k <= 0:
        return True
    if k == 1:
        return _any_placement(hand, tops)
    for i, c in enumerate(hand):
        for p in range(PILES):
            if _fits(c, tops[p], UP[p]):
                old = tops[p]
                tops[p] = c
                ok = _has_sequence(hand[:i] + hand[i + 1 :], tops, k - 1)
                tops[p] = old
                if ok:
                    return True
    return False


def _can_go_on(state: TheGameState, hand: list[int]) -> bool:
    """Whether the active seat holding ``hand`` can go on with its turn as it stands."""
    if state.placed == 0:
        return _has_sequence(hand, list(state.tops), state.minimum)
    return _any_placement(hand, state.tops)


def _parse_placement(action: Action) -> tuple[int, int]:
    if not isinstance(action, dict) or set(action) != {"card", "pile"}:
        raise IllegalAction(f'expected {{"card": c, "pile": p}} or "end", got {action!r}')
    card, pile = action["card"], action["pile"]
    if type(card) is not int or type(pile) is not int:
        raise IllegalAction(f"card and pile must be integers, got {action!r}")
    if not 0 <= pile < PILES:
        raise IllegalAction(f"no pile {pile}")
    return card, pile


def _end_turn(state: TheGameState) -> None:
    """Draw, check fire deadlines, pass to the next seat that takes a turn."""
    hand = state.hands[state.active]
    n = min(state.placed, len(state.deck))
    if n:
        hand.extend(state.deck[-n:])
        del state.deck[-n:]
        hand.sort()
    _log_turn(state)
    if any(f["deadline_turn"] <= state.turn for f in state.fire):
        _finish(state, "fire")
        return
    nxt = _next_seat(state)
    state.active = nxt
    state.turn += 1
    _start_turn(state)


def _log_turn(state: TheGameState) -> None:
    state.turn_log.append({"seat": state.active, "placed": state.placed})


def _next_seat(state: TheGameState) -> int:
    for i in range(1, state.seats + 1):
        s = (state.active + i) % state.seats
        if state.hands[s]:
            return s
    return state.active  # unreachable: all hands empty means all 98 placed


def _start_turn(state: TheGameState) -> None:
    state.placed = 0
    state.minimum = state.base_minimum if state.deck else 1
    if not _has_sequence(state.hands[state.active], list(state.tops), state.minimum):
        _finish(state, "stuck")


def _finish(state: TheGameState, reason: str) -> None:
    state.over = True
    state.end_reason = reason


def _deadline_seat(state: TheGameState, deadline_turn: int) -> int:
    if deadline_turn <= state.turn or state.over:
        return state.active
    return _next_seat(state)


GAME = TheGame()
