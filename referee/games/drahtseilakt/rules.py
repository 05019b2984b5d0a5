"""Drahtseilakt (Reiner Knizia), 3-5 players: play a card to each trick; lowest total wins.

Rules (docs/games/drahtseilakt.md; RULES.md section 2)
------------------------------------------------------
Number cards 1..50 (option ``tactical``: 1..9*N, all dealt). Eleven score cards: "1".."9",
"red0" and "blue0". A match is N rounds for N players; round r (0-based) is dealt by seat
r and seat r+1 leads its first trick. Each round the score cards and the number cards are
shuffled and every seat gets 9 number cards; the rest are unused and hidden.

A round is 9 tricks. At the start of a trick the top score card is revealed. A 0 zeroes
its colour for this trick and another card is revealed at once, whose value is handed out
in the other colour; two 0s in a row cancel (both discarded) and a third card is revealed
and scored in both colours. Then every seat plays one card: clockwise from the leader, each
seeing the cards before it (option ``chaotic``: all seats choose at once, nothing is shown
until all have chosen). The highest card takes blue sticks equal to the blue value, the
lowest takes red sticks equal to the red value; anyone holding both colours then gives back
red/blue pairs. The highest card leads the next trick. After 9 tricks a seat's round score
is its number of sticks; a seat with no sticks cancels (sets to 0) its highest earlier
round score (the earliest one if tied; nothing if that score is 0 or in round 0). Lowest
total after N rounds wins; ties share the rank.

Decisions where RULES.md is silent
----------------------------------
Seat 0 deals round 0. Sticks are unlimited (the 25 + 25 of the box are a physical
limit). In chaotic mode the trick's score cards are revealed before the simultaneous
choice, and the trick's cards are listed in play order from the leader. A seat with no
sticks cancels its highest earlier round, the earliest one on a tie, automatically (it
can never hurt). The complete record of the finished round is shown in
``previous_round`` during the first trick of the next round (every seat is asked once
in it), so no seat misses the last trick (the next round is dealt inside the same
``apply``; in chaotic mode nobody would see the 9th trick otherwise).

Seat view (JSON)
----------------
::

    {
      "seat": 1, "players": 4, "tactical": false, "chaotic": false,
      "highest_card": 50,                  # 50, or 9*players when tactical
      "round": 0, "rounds": 4,             # 0-based round; rounds = players
      "dealer": 0,
      "trick": 2, "tricks_per_round": 9,   # 0-based trick in this round
      "leader": 3,                         # seat that leads this trick
      "turn": 1,                           # seat to play now; null when chaotic or over
      "your_turn": true,                   # whether this seat must choose a card now
      "hand": [4, 17, 23, 31, 40, 48, 50], # own cards, ascending
      "hand_sizes": [7, 7, 6, 6],          # cards still to play in this round, per seat
      "chosen": null,                      # chaotic only: own card chosen this trick
      "score": {"cards": ["blue0", "4"], "red": 4, "blue": 0},
                                           # this trick: score cards revealed for it and
                                           # the red / blue sticks at stake (0 = zeroed)
      "current_trick": [{"seat": 3, "card": 12}, {"seat": 0, "card": 30}],
                                           # played so far, in order (empty when chaotic)
      "tricks": [                          # finished tricks of this round, in order
        {"leader": 1, "score_cards": ["3"], "red": 3, "blue": 3,
         "plays": [{"seat": 1, "card": 7}, ...],
         "blue_to": 3, "red_to": 1}        # seat that took the sticks (null if zeroed)
      ],
      "score_cards_unrevealed": ["1", "2", "red0", ...],  # this round, deducible
      "sticks": [{"red": 0, "blue": 3}, ...],             # held now, per seat
      "round_scores": [[5, 0], ...],       # per seat, sticks of each finished round
      "cancelled": [[], [0], ...],         # per seat, finished rounds it cancelled
      "totals": [5, 0, ...],               # per seat, total after cancelling
      "previous_round": null               # during trick 0 of rounds 1.., the round before:
                                           # {"round": 0, "dealer": 0, "tricks": [..]}
    }

Actions
-------
One number card from ``hand`` as a JSON integer (``legal`` is the hand in ascending
order for a seat in ``to_act``, else empty).
"""

from __future__ import annotations

import copy as _copy
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import (
    Action,
    Game,
    GameInfo,
    IllegalAction,
    OptionSpec,
    Result,
    StatSpec,
    View,
    compact,
    ranks_from_scores,
    sample_command,
    shuffle,
)

TRICKS_PER_ROUND = 9
HAND_SIZE = 9
MAX_CARD = 50
RED_ZERO = "red0"
BLUE_ZERO = "blue0"
SCORE_CARDS: tuple[str, ...] = tuple(str(v) for v in range(1, 10)) + (RED_ZERO, BLUE_ZERO)
_SCORE_ORDER = {c: i for i, c in enumerate(SCORE_CARDS)}


@dataclass(slots=True)
class DrahtState:
    """A match of Drahtseilakt: the round and trick in play, sticks and scores, the generator."""

    seats: int
    tactical: bool
    chaotic: bool
    rng: random.Random
    max_card: int
    round: int = 0
    dealer: int = 0
    leader: int = 1
    trick: int = 0
    turn: int | None = None  # seat to play in a normal trick
    hands: list[list[int]] = field(default_factory=list)  # ascending
    unused: list[int] = field(default_factory=list)  # ascending, hidden from all
    discards: list[int] = field(default_factory=list)  # cards of finished tricks
    score_deck: list[str] = field(default_factory=list)  # top = last
    score_revealed: list[str] = field(default_factory=list)  # this round, in order
    trick_cards: list[str] = field(default_factory=list)  # revealed for this trick
    red_value: int = 0
    blue_value: int = 0
    plays: list[list[int]] = field(default_factory=list)  # [seat, card], public
    pending: list[int | None] = field(default_factory=list)  # chaotic hidden choices
    history: list[dict[str, Any]] = field(default_factory=list)  # finished tricks
    red: list[int] = field(default_factory=list)  # sticks held
    blue: list[int] = field(default_factory=list)
    got_red: list[int] = field(default_factory=list)  # handed out this round
    got_blue: list[int] = field(default_factory=list)
    raw_scores: list[list[int]] = field(default_factory=list)  # per seat, per round
    cancelled: list[list[int]] = field(default_factory=list)  # per seat: rounds
    rounds_log: list[dict[str, Any]] = field(default_factory=list)
    previous: dict[str, Any] | None = None  # the finished round before this one (public)
    over: bool = False


class Drahtseilakt(Game):
    """Drahtseilakt as in RULES.md §2."""

    info = GameInfo(
        id="drahtseilakt",
        title="Drahtseilakt",
        min_seats=3,
        max_seats=5,
        cooperative=False,
        options=(
            OptionSpec("tactical", False, "play with cards 1..9*players only (all dealt)"),
            OptionSpec("chaotic", False, "all players choose their card at once each trick"),
        ),
        stats=(
            StatSpec("sticks_per_round", "sticks/round", "mean sticks held at a round's end"),
            StatSpec("clean_share", "clean rounds", "share of rounds ended with no sticks"),
        ),
        score_min=0,  # sticks
    )

    def setup(self, seats: int, seed: int, options: Mapping[str, Any]) -> DrahtState:
        """A new match for ``seats`` players, dealt from ``seed``."""
        opts = self.check_options(seats, options)
        st = DrahtState(
            seats=seats,
            tactical=opts["tactical"],
            chaotic=opts["chaotic"],
            rng=random.Random(seed),
            max_card=HAND_SIZE * seats if opts["tactical"] else MAX_CARD,
            raw_scores=[[] for _ in range(seats)],
            cancelled=[[] for _ in range(seats)],
        )
        _start_round(st)
        return st

    def to_act(self, state: DrahtState) -> tuple[int, ...]:
        """The seat whose turn it is, or every seat still to choose when chaotic."""
        if state.over:
            return ()
        if state.chaotic:
            return tuple(s for s in range(state.seats) if state.pending[s] is None)
        return (state.turn,) if state.turn is not None else ()

    def view(self, state: DrahtState, seat: int) -> View:
        """What ``seat`` may see: own hand and everything public."""
        st = state
        n = st.seats
        played = {p[0] for p in st.plays}
        left = TRICKS_PER_ROUND - st.trick
        sizes = [0 if st.over else left - (s in played) for s in range(n)]
        unrevealed = sorted(st.score_deck, key=_SCORE_ORDER.__getitem__)
        return {
            "seat": seat,
            "players": n,
            "tactical": st.tactical,
            "chaotic": st.chaotic,
            "highest_card": st.max_card,
            "round": st.round,
            "rounds": n,
            "dealer": st.dealer,
            "trick": st.trick,
            "tricks_per_round": TRICKS_PER_ROUND,
            "leader": st.leader,
            "turn": None if st.chaotic else st.turn,
            "your_turn": not st.over and (st.pending[seat] is None if st.chaotic else st.turn == seat),
            "hand": list(st.hands[seat]),
            "hand_sizes": sizes,
            "chosen": st.pending[seat] if st.chaotic else None,
            "score": {"cards": list(st.trick_cards), "red": st.red_value, "blue": st.blue_value},
            "current_trick": [{"seat": p[0], "card": p[1]} for p in st.plays],
            "tricks": [_copy_trick(t) for t in st.history],
            "score_cards_unrevealed": unrevealed,
            "sticks": [{"red": st.red[s], "blue": st.blue[s]} for s in range(n)],
            "round_scores": [list(r) for r in st.raw_scores],
            "cancelled": [list(c) for c in st.cancelled],
            "totals": _totals(st),
            # built once per round, never changed; shown while every seat plays to trick 0
            "previous_round": st.previous if st.trick == 0 and not st.over else None,
        }

    def legal(self, state: DrahtState, seat: int) -> list[Action]:
        """The seat's hand, ascending, when it must play; else nothing."""
        if seat not in self.to_act(state):
            return []
        return list(state.hands[seat])

    def apply(self, state: DrahtState, seat: int, action: Action) -> DrahtState:
        """Play the number card ``action`` for ``seat``."""
        st = state
        if seat not in self.to_act(st):
            raise IllegalAction(f"seat {seat} is not to act")
        hand = st.hands[seat]
        if type(action) is not int or action not in hand:
            raise IllegalAction(f"{action!r} is not a card in seat {seat}'s hand")
        hand.remove(action)
        if st.chaotic:
            st.pending[seat] = action
            if any(p is None for p in st.pending):
                return st
            order = [(st.leader + i) % st.seats for i in range(st.seats)]
            st.plays = [[s, st.pending[s]] for s in order]  # type: ignore[list-item]
            st.pending = [None] * st.seats
            _finish_trick(st)
            return st
        st.plays.append([seat, action])
        if len(st.plays) < st.seats:
            st.turn = (seat + 1) % st.seats
        else:
            _finish_trick(st)
        return st

    def is_over(self, state: DrahtState) -> bool:
        """True after the last round."""
        return state.over

    def result(self, state: DrahtState) -> Result:
        """Totals (lower is better), ranks and the per-round breakdown."""
        st = state
        totals = _totals(st)
        seats = []
        for s in range(st.seats):
            raw = st.raw_scores[s]
            seats.append(
                {
                    "round_scores": list(raw),
                    "cancelled_rounds": list(st.cancelled[s]),
                    "scores_after_cancel": _effective(raw, st.cancelled[s]),
                    "total": totals[s],
                    "clean_rounds": sum(1 for v in raw if v == 0),
                }
            )
        details = {
            "rounds": _copy.deepcopy(st.rounds_log),
            "seats": seats,
            "totals": totals,
        }
        scores = [float(t) for t in totals]
        return Result(scores, ranks_from_scores(scores, True), True, details)

    # Hooks ---------------------------------------------------------------------------

    def seat_stats(self, result: Result, seat: int) -> dict[str, float]:
        """Mean sticks per round and the share of clean (no-stick) rounds."""
        raw = result.details["seats"][seat]["round_scores"]
        if not raw:
            return {"sticks_per_round": 0.0, "clean_share": 0.0}
        return {
            "sticks_per_round": sum(raw) / len(raw),
            "clean_share": sum(1 for v in raw if v == 0) / len(raw),
        }

    def redeal_hidden(self, state: DrahtState, seat: int, rng: random.Random) -> DrahtState:
        """Other hands, their pending choices, the unused cards and the future score-card
        order and deals re-randomised; ``seat``'s view stays the same."""
        new: DrahtState = self.copy(state)
        new.rng = random.Random(rng.getrandbits(64))
        others = [s for s in range(new.seats) if s != seat]
        sizes = {}
        pool = list(new.unused)
        for s in others:
            pend = new.pending[s] if new.chaotic else None
            sizes[s] = len(new.hands[s]) + (pend is not None)
            pool.extend(new.hands[s])
            if pend is not None:
                pool.append(pend)
        rng.shuffle(pool)
        i = 0
        for s in others:
            hand = sorted(pool[i : i + sizes[s]])
            i += sizes[s]
            if new.chaotic and new.pending[s] is not None:
                pick = rng.choice(hand)
                hand.remove(pick)
                new.pending[s] = pick
            new.hands[s] = hand
        new.unused = sorted(pool[i:])
        rng.shuffle(new.score_deck)
        return new

    def invariants(self, state: DrahtState) -> list[str]:
        """Cards, score cards and sticks all consistent."""
        st = state
        bad: list[str] = []
        n = st.seats
        cards: list[int] = list(st.unused) + list(st.discards) + [p[1] for p in st.plays]
        for h in st.hands:
            cards.extend(h)
        if st.chaotic:
            cards.extend(p for p in st.pending if p is not None)
            if st.plays:
                bad.append("chaotic trick has public plays before resolution")
        if sorted(cards) != list(range(1, st.max_card + 1)):
            bad.append(f"number cards not accounted for exactly once ({len(cards)} seen)")
        if st.tactical and st.unused:
            bad.append("tactical match has unused cards")
        if sorted(st.score_revealed + st.score_deck) != sorted(SCORE_CARDS):
            bad.append("score cards not accounted for exactly once")
        if len(st.score_revealed) > len(SCORE_CARDS):
            bad.append("more than 11 score cards revealed in a round")
        if st.score_revealed[len(st.score_revealed) - len(st.trick_cards) :] != st.trick_cards:
            bad.append("trick score cards are not the last revealed")
        if st.over:
            if st.round != n or any(len(r) != n for r in st.raw_scores):
                bad.append("match over before every seat dealt once")
            return bad
        if len(st.history) != st.trick or st.trick >= TRICKS_PER_ROUND:
            bad.append(f"trick counter {st.trick} vs {len(st.history)} finished tricks")
        values_left = sum(1 for c in st.score_deck if c not in (RED_ZERO, BLUE_ZERO))
        if values_left != TRICKS_PER_ROUND - st.trick - 1:
            bad.append(f"{values_left} score values left in trick {st.trick}")
        if st.dealer != st.round or any(len(r) != st.round for r in st.raw_scores):
            bad.append("dealer / round scores do not match the round")
        first = st.history[0]["leader"] if st.history else st.leader
        if first != (st.dealer + 1) % n:
            bad.append("first trick not led by the dealer's left neighbour")
        played = {p[0] for p in st.plays}
        for s in range(n):
            held = len(st.hands[s]) + (st.chaotic and st.pending[s] is not None)
            if held != HAND_SIZE - st.trick - (s in played):
                bad.append(f"seat {s} holds {held} cards in trick {st.trick}")
            if st.red[s] and st.blue[s]:
                bad.append(f"seat {s} holds both colours")
            if st.blue[s] - st.red[s] != st.got_blue[s] - st.got_red[s]:
                bad.append(f"seat {s} sticks do not match what it was handed")
        if sum(st.got_red) != sum(t["red"] for t in st.history if t["red_to"] is not None):
            bad.append("red handed out differs from the unzeroed red values")
        if sum(st.got_blue) != sum(t["blue"] for t in st.history if t["blue_to"] is not None):
            bad.append("blue handed out differs from the unzeroed blue values")
        for t in st.history:
            if len(t["plays"]) != n:
                bad.append("a finished trick without one card per seat")
        if not st.chaotic and st.turn != (st.leader + len(st.plays)) % n:
            bad.append("turn is not the next seat clockwise")
        return bad

    def glance(self, view: View) -> str:
        """The part of a seat's view that decides its move, on one line."""
        trick = [p.get("card") for p in view.get("current_trick", ())]
        return f"hand {compact(view.get('hand'))} score {compact(view.get('score'))} trick {compact(trick)}"

    def sample_opponent(self) -> tuple[str, ...]:
        """The sample bot playing at random."""
        return sample_command("sample_bots.drahtseilakt")


# Private helpers ----------------------------------------------------------------------


def _start_round(st: DrahtState) -> None:
    """Shuffle and deal round ``st.round``; reveal the first trick's score cards."""
    n = st.seats
    deck = list(range(1, st.max_card + 1))
    shuffle(st.rng, deck)
    st.hands = [sorted(deck[HAND_SIZE * s : HAND_SIZE * (s + 1)]) for s in range(n)]
    st.unused = sorted(deck[HAND_SIZE * n :])
    st.score_deck = list(SCORE_CARDS)
    shuffle(st.rng, st.score_deck)
    st.score_revealed = []
    st.discards = []
    st.history = []
    st.plays = []
    st.pending = [None] * n
    st.red = [0] * n
    st.blue = [0] * n
    st.got_red = [0] * n
    st.got_blue = [0] * n
    st.dealer = st.round
    st.leader = (st.dealer + 1) % n
    st.trick = 0
    _start_trick(st)


def _start_trick(st: DrahtState) -> None:
    """Reveal the score card(s) of a new trick, led by ``st.leader``."""
    st.plays = []
    st.turn = None if st.chaotic else st.leader
    first = _reveal(st)
    cards = [first]
    if first in (RED_ZERO, BLUE_ZERO):
        second = _reveal(st)
        cards.append(second)
        if second in (RED_ZERO, BLUE_ZERO):  # two 0s cancel: the third scores both colours
            third = _reveal(st)
            cards.append(third)
            st.red_value = st.blue_value = int(third)
        elif first == RED_ZERO:
            st.red_value, st.blue_value = 0, int(second)
        else:
            st.red_value, st.blue_value = int(second), 0
    else:
        st.red_value = st.blue_value = int(first)
    st.trick_cards = cards


def _reveal(st: DrahtState) -> str:
    card = st.score_deck.pop()
    st.score_revealed.append(card)
    return card


def _finish_trick(st: DrahtState) -> None:
    """Hand out sticks, give back pairs, record the trick and go on."""
    plays = st.plays
    hi = max(plays, key=lambda p: p[1])[0]
    lo = min(plays, key=lambda p: p[1])[0]
    red_to = blue_to = None
    if st.blue_value:
        st.blue[hi] += st.blue_value
        st.got_blue[hi] += st.blue_value
        blue_to = hi
    if st.red_value:
        st.red[lo] += st.red_value
        st.got_red[lo] += st.red_value
        red_to = lo
    for s in (hi, lo):
        pairs = min(st.red[s], st.blue[s])
        st.red[s] -= pairs
        st.blue[s] -= pairs
    st.history.append(
        {
            "leader": st.leader,
            "score_cards": list(st.trick_cards),
            "red": st.red_value,
            "blue": st.blue_value,
            "plays": [{"seat": p[0], "card": p[1]} for p in plays],
            "blue_to": blue_to,
            "red_to": red_to,
        }
    )
    st.discards.extend(p[1] for p in plays)
    st.plays = []
    st.leader = hi
    st.trick += 1
    if st.trick < TRICKS_PER_ROUND:
        _start_trick(st)
    else:
        _finish_round(st)


def _finish_round(st: DrahtState) -> None:
    """Score the round, apply the no-sticks cancel, deal the next round or end."""
    n = st.seats
    scores = [st.red[s] + st.blue[s] for s in range(n)]
    cancels = []
    for s in range(n):
        if scores[s] == 0 and st.round > 0:
            earlier = _effective(st.raw_scores[s], st.cancelled[s])
            best = max(earlier)
            if best > 0:
                k = earlier.index(best)
                st.cancelled[s].append(k)
                cancels.append({"seat": s, "round": k, "score": best})
        st.raw_scores[s].append(scores[s])
    st.rounds_log.append(
        {
            "round": st.round,
            "dealer": st.dealer,
            "scores": scores,
            "sticks": [{"red": st.red[s], "blue": st.blue[s]} for s in range(n)],
            "score_cards_revealed": list(st.score_revealed),
            "cancels": cancels,
        }
    )
    st.round += 1
    if st.round < n:
        st.previous = {"round": st.round - 1, "dealer": st.dealer, "tricks": [_copy_trick(t) for t in st.history]}
        _start_round(st)
    else:
        st.over = True
        st.turn = None
        st.plays = []
        st.pending = [None] * n


def _effective(raw: list[int], cancelled: list[int]) -> list[int]:
    return [0 if r in cancelled else v for r, v in enumerate(raw)]


def _totals(st: DrahtState) -> list[int]:
    return [sum(_effective(st.raw_scores[s], st.cancelled[s])) for s in range(st.seats)]


def _copy_trick(t: dict[str, Any]) -> dict[str, Any]:
    return {
        "leader": t["leader"],
        "score_cards": list(t["score_cards"]),
        "red": t["red"],
        "blue": t["blue"],
        "plays": [dict(p) for p in t["plays"]],
        "blue_to": t["blue_to"],
        "red_to": t["red_to"],
    }


GAME = Drahtseilakt()
