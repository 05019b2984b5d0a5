"""6 nimmt! Plus (Wolfgang Kramer), 2-7 players, with its three rulebook variants.

Rules (docs/games/nimmt_plus.md; RULES.md section 3)
----------------------------------------------------
Cards 1..104 carry bull heads: 7 if n == 55; 5 if n % 11 == 0; 3 if n % 10 == 0;
2 if n % 5 == 0; else 1. There are also seven 0 cards (all alike).

Placement (every variant): four rows, each started by one card. A card goes to the row
whose end card is the highest value below it; a card lower than every row end goes to
the end of the row whose end card is the *highest*. A card that would be a row's 6th
card: its player takes the 5 cards there (onto their points pile) and the card starts
that row anew. 0 cards never go into a row: a 0 goes straight onto its player's pile.

``variant = "plus"`` (default): shuffle 1..104, lay the first 4 as the rows, shuffle
the 7 zeros into the other 100 and deal 15 to each player. Each turn every player who
still holds cards chooses 1 or 2 of them, simultaneously; then all are revealed and
placed: first every card played together with a 0 (ascending among themselves), then
all the other cards in ascending order. Score = bull heads on one's points pile
(``zero_heads`` per 0 card); the highest total wins.
``"plus_dealt_zeros"``: as plus, but each player is first given 2 zeros (2-3 players)
or 1 zero (4-7); the other zeros are shuffled in after the rows are laid; 15 cards in
hand in all.
``"zeros_negative"``: as plus, but taken heads are penalty points; the lowest total wins.
``"simple"``: 12 cards each; players play one card in turn, clockwise (seat 0, 1, 2, ...)
from seat 0 in hand 1; in later hands the seat with most penalty points so far starts
(ties: lowest seat number). Instead of a card a player may play a 0 (at any time): it
is set aside on the player's pile and the player passes. The lowest total wins.

A hand ends when every hand is empty (with 1- or 2-card plays players run out at
different times; a seat with no cards is not asked). A match is as many hands as there
are players, each reshuffled and redealt from the state's generator; totals are summed
and ties share the rank.

Decisions where RULES.md is silent
----------------------------------
``zero_heads`` only counts in the positive variants (plus, plus_dealt_zeros); in
zeros_negative and simple a 0 never scores (rule 11). In ``simple`` the zeros are
shuffled into the deck with the other 100 cards (the rulebook) and a played 0 is put on
the player's points pile, where it scores nothing. "Clockwise" is increasing seat
number. The complete record of the finished hand is shown in ``previous_hand`` until
every seat has been asked once in the new hand, so no seat misses the turns played
after its last decision (and act messages stay small afterwards).

Seat view (JSON)
----------------
::

    {"variant": "plus", "lower_is_better": false, "zero_heads": 0,
     "seats": 4, "seat": 2, "hand_number": 1, "hands_total": 4, "turn_number": 3,
     "hand": [0, 5, 17, ...],                 # own cards, ascending (zeros first)
     "rows": [[12, 30], [44], [61, 62, 70], [90]],   # rows 0..3, oldest card first
     "hand_sizes": [13, 12, 13, 14],
     "points": [{"cards": [..], "heads": 7}, ...],  # per seat, this hand's pile
     "totals": [31, 12, 0, 20],               # sum of finished hands
     "hand_scores": [[31, 12, 0, 20]],        # one list per finished hand
     "history": [                             # revealed turns of this hand, in order
        {"turn": 1,
         "plays": [{"seat": 0, "cards": [5, 6]}, {"seat": 1, "cards": [27]}, ...],
         "placements": [{"seat": 2, "card": 49, "row": 1, "took": []},
                        {"seat": 3, "card": 53, "row": 1, "took": [21, 30, 33, 41, 49]},
                        ...]}],
     "previous_hand": null,                   # in a hand's first turn, the hand before:
                                              # {"hand": 1, "history": [..], "rows": [..]}
     "to_act": [0, 1, 2, 3], "your_turn": true, "turn": null}

``plays`` lists who played what in seat order, ``placements`` the numbered cards in
the order they were placed (0 cards are in ``plays`` only), ``row`` the row index and
``took`` the cards taken (``[]`` when none). In simultaneous variants ``to_act`` is every
seat holding cards this turn (it never tells who has already chosen) and ``turn`` is
null; in ``simple``, ``to_act == [turn]`` and ``turn`` is the seat to play.
``points[s].heads`` is what the pile scores under the variant (penalty in the negative
ones). ``previous_hand`` holds the whole history of the hand finished last and its rows
at the end, during the first turn of a hand (``simple``: its first ``seats`` turns, so
every seat is asked once while it is shown); null otherwise and in hand 1. Every turn of
every finished hand is thus seen by every seat (the next hand is dealt inside the same
``apply``). ``your_turn`` is
``seat in to_act(state)``.

Actions
-------
A JSON list of the cards played, ascending: ``[27]``, ``[5, 6]``, ``[0, 49]``, ``[0]``,
``[0, 0]``. Simultaneous variants: every single card and every distinct pair of the
hand, sorted by (length, values). ``simple``: the single cards ``[c]``; ``[0]`` passes.
"""

from __future__ import annotations

import copy as _copy
import random
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
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

VARIANTS = ("plus", "plus_dealt_zeros", "zeros_negative", "simple")
POSITIVE = frozenset({"plus", "plus_dealt_zeros"})
TOP = 104
ZEROS = 7
ROWS = 4
ROW_LIMIT = 5  # the 6th card takes the row
HAND_SIZE = 15
SIMPLE_HAND_SIZE = 12


def heads(card: int) -> int:
    """Bull heads on a numbered card (0 cards are handled by the variant)."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


HEADS = [0] + [heads(n) for n in range(1, TOP + 1)]  # HEADS[0] is never used for scoring


@dataclass(slots=True)
class NimmtState:
    """A match of 6 nimmt! Plus: the current hand, the scores so far, the generator."""

    seats: int
    variant: str
    zero_heads: int
    rng: random.Random = field(compare=False)  # equality is about the cards
    hands_total: int
    hand_number: int = 0
    hands: list[list[int]] = field(default_factory=list)  # each ascending
    rows: list[list[int]] = field(default_factory=list)
    deck: list[int] = field(default_factory=list)  # undealt cards of this hand (hidden)
    piles: list[list[int]] = field(default_factory=list)  # this hand's points piles
    pile_heads: list[int] = field(default_factory=list)  # heads of numbered pile cards
    rows_taken: list[int] = field(default_factory=list)  # this hand
    pending: list[list[int] | None] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    previous: dict[str, Any] | None = None  # the finished hand before this one (public)
    turn: int = 0  # simple: seat to play
    starter: int = 0  # simple: seat that started this hand
    totals: list[int] = field(default_factory=list)
    hand_log: list[dict[str, Any]] = field(default_factory=list)
    over: bool = False


class NimmtPlus(Game):
    """6 nimmt! Plus and its variants."""

    fast_replay = True

    info = GameInfo(
        id="nimmt_plus",
        title="6 nimmt! Plus",
        min_seats=2,
        max_seats=7,
        cooperative=False,
        options=(
            OptionSpec(
                "variant",
                "plus",
                "plus | plus_dealt_zeros | zeros_negative | simple (docs/games/nimmt_plus.md)",
                choices=VARIANTS,
            ),
            OptionSpec(
                "zero_heads",
                0,
                "bull heads on a 0 card in the positive variants (no effect in the negative ones)",
                minimum=0,
            ),
        ),
        stats=(
            StatSpec("heads_per_hand", "heads/hand", "bull heads taken per hand"),
            StatSpec("rows_per_hand", "rows/hand", "rows taken per hand"),
        ),
        append_only_view_keys=("history",),  # a turn's entry is never changed once appended
        score_min=0,  # bull heads (taken or penalty), never negative
    )

    def setup(self, seats: int, seed: int, options: Mapping[str, Any]) -> NimmtState:
        """A new match: hand 1 dealt from ``seed``."""
        opts = self.check_options(seats, options)
        state = NimmtState(
            seats=seats,
            variant=opts["variant"],
            zero_heads=opts["zero_heads"],
            rng=random.Random(seed),
            hands_total=seats,
            totals=[0] * seats,
        )
        _deal(state)
        return state

    def to_act(self, state: NimmtState) -> tuple[int, ...]:
        """Simple: the seat in turn; otherwise every seat with cards that has not chosen."""
        if state.over:
            return ()
        if state.variant == "simple":
            return (state.turn,)
        hands, pending = state.hands, state.pending
        return tuple([s for s in range(state.seats) if hands[s] and pending[s] is None])

    def view(self, state: NimmtState, seat: int) -> View:
        """What ``seat`` sees: own hand, rows, piles, sizes, totals, this hand's history."""
        simple = state.variant == "simple"
        hands, n = state.hands, state.seats
        if state.over:
            asked: list[int] = []
            mine = False
        elif simple:
            asked = [state.turn]
            mine = seat == state.turn
        else:
            asked = [s for s in range(n) if hands[s]]
            mine = bool(hands[seat]) and state.pending[seat] is None
        zh = state.zero_heads if state.variant in POSITIVE else 0
        return {
            "variant": state.variant,
            "lower_is_better": state.variant not in POSITIVE,
            "zero_heads": state.zero_heads,
            "seats": state.seats,
            "seat": seat,
            "hand_number": state.hand_number,
            "hands_total": state.hands_total,
            "turn_number": len(state.history) + 1,
            "hand": list(hands[seat]),
            "rows": [list(r) for r in state.rows],
            "hand_sizes": [len(h) for h in hands],
            "points": [
                {"cards": list(p), "heads": h + zh * p.count(0) if zh else h}
                for p, h in zip(state.piles, state.pile_heads)
            ],
            "totals": list(state.totals),
            "hand_scores": [list(h["scores"]) for h in state.hand_log],
            "history": list(state.history),  # entries are never changed once recorded
            # built once per hand, never changed; shown until every seat was asked once
            "previous_hand": state.previous if len(state.history) < (state.seats if simple else 1) else None,
            "to_act": asked,
            "your_turn": mine,
            "turn": state.turn if simple and not state.over else None,
        }

    def legal(self, state: NimmtState, seat: int) -> list[Action]:
        """Single cards, and in the simultaneous variants every distinct pair too."""
        if state.over:
            return []
        hand = state.hands[seat]
        if state.variant == "simple":
            if seat != state.turn:
                return []
            return [[c] for c in _distinct(hand)]
        if not hand or state.pending[seat] is not None:
            return []
        values = _distinct(hand)
        out: list[Action] = [[c] for c in values]
        if len(hand) >= 2 and hand[1] == 0:  # two zeros: [0, 0] before the pairs with one 0
            out.append([0, 0])
        out += map(list, combinations(values, 2))  # (a, b) with a < b, in the order of a then b
        return out

    def apply(self, state: NimmtState, seat: int, action: Action) -> NimmtState:
        """Play ``action`` for ``seat``: a turn in simple, a hidden choice otherwise."""
        if state.over or not isinstance(seat, int) or not 0 <= seat < state.seats:
            raise IllegalAction(f"seat {seat!r} is not to act")
        cards = _parse(action)
        if state.variant == "simple":
            if seat != state.turn:
                raise IllegalAction(f"seat {seat} is not to act (seat {state.turn} is)")
            if len(cards) != 1:
                raise IllegalAction(f"{action!r}: play exactly one card in simple")
            _check_in_hand(state.hands[seat], cards, action)
            _resolve(state, {seat: cards})
            _advance_simple(state)
            return state
        if not state.hands[seat] or state.pending[seat] is not None:
            raise IllegalAction(f"seat {seat} is not to act")
        _check_in_hand(state.hands[seat], cards, action)
        state.pending[seat] = cards
        if not any([p is None and h for p, h in zip(state.pending, state.hands)]):
            plays = {s: p for s, p in enumerate(state.pending) if p is not None}
            state.pending = [None] * state.seats
            _resolve(state, plays)
            if not any(state.hands):
                _end_hand(state)
        return state

    def replay(self, state: NimmtState, seats: Sequence[int], actions: Sequence[Action]) -> Result | None:
        """A whole transcript played at once (see ``Game.replay``); the result, or None."""
        if state.over or state.hand_number != 1 or any(p is not None for p in state.pending) or state.history:
            return None
        return _result(state, state.hand_log) if _replay(state, seats, actions) else None

    def is_over(self, state: NimmtState) -> bool:
        """True once every hand of the match has been played."""
        return state.over

    def result(self, state: NimmtState) -> Result:
        """Totals over the finished hands, ranks, and the per-hand breakdown."""
        return _result(state, _copy.deepcopy(state.hand_log))

    # Hooks --------------------------------------------------------------------------

    def seat_stats(self, result: Result, seat: int) -> dict[str, float]:
        """Mean heads and rows taken per hand by ``seat``."""
        hands = result.details.get("hands", [])
        if not hands:
            return {"heads_per_hand": 0.0, "rows_per_hand": 0.0}
        return {
            "heads_per_hand": sum(h["heads"][seat] for h in hands) / len(hands),
            "rows_per_hand": sum(h["rows_taken"][seat] for h in hands) / len(hands),
        }

    def redeal_hidden(self, state: NimmtState, seat: int, rng: random.Random) -> NimmtState:
        """Other hands and the undealt cards re-dealt, others' pending choices re-picked,
        the generator of later hands re-seeded; ``seat``'s view is unchanged.

        In plus_dealt_zeros a seat is known to hold the dealt zeros it has not played
        yet; those stay in its hand.
        """
        new: NimmtState = self.copy(state)
        new.rng = random.Random(rng.getrandbits(64))
        if state.over:
            return new
        others = [s for s in range(new.seats) if s != seat]
        known = {s: _known_zeros(new, s) for s in others}
        pool = list(new.deck)
        for s in others:
            pool.extend(new.hands[s])
        for s in others:
            for _ in range(known[s]):
                pool.remove(0)
        rng.shuffle(pool)
        for s in others:
            size = len(new.hands[s])
            take = size - known[s]
            new.hands[s] = sorted([0] * known[s] + pool[:take])
            del pool[:take]
        new.deck = pool
        for s in others:
            if new.pending[s] is not None:
                new.pending[s] = None
                new.pending[s] = list(rng.choice(self.legal(new, s)))
        return new

    def invariants(self, state: NimmtState) -> list[str]:
        """Every card once, rows 1..5 cards, choices from hands, scores consistent."""
        bad: list[str] = []
        n = state.seats
        every: list[int] = list(state.deck)
        for h in state.hands:
            every.extend(h)
            if h != sorted(h):
                bad.append(f"hand not sorted: {h}")
        for r in state.rows:
            every.extend(r)
        for p in state.piles:
            every.extend(p)
        numbered = sorted(c for c in every if c != 0)
        if numbered != list(range(1, TOP + 1)):
            bad.append("numbered cards are not 1..104 exactly once")
        if every.count(0) != ZEROS:
            bad.append(f"{every.count(0)} zero cards instead of {ZEROS}")
        if len(state.rows) != ROWS or any(not 1 <= len(r) <= ROW_LIMIT for r in state.rows):
            bad.append(f"rows malformed: {state.rows}")
        if not (len(state.hands) == len(state.piles) == len(state.pending) == n):
            bad.append("per-seat lists of the wrong length")
        for s in range(n):
            if state.pile_heads[s] != sum(HEADS[c] for c in state.piles[s]):
                bad.append(f"seat {s}: pile heads {state.pile_heads[s]} do not match its cards")
            pend = state.pending[s]
            if pend is not None:
                if state.variant == "simple":
                    bad.append(f"seat {s}: a pending choice in simple")
                rest = list(state.hands[s])
                for c in pend:
                    if c in rest:
                        rest.remove(c)
                    else:
                        bad.append(f"seat {s}: pending {pend} not in hand")
                        break
        sums = [sum(h["scores"][s] for h in state.hand_log) for s in range(n)]
        if sums != state.totals:
            bad.append(f"totals {state.totals} are not the sum of hands {sums}")
        if len(state.hand_log) != (state.hand_number if state.over else state.hand_number - 1):
            bad.append("hand log length does not match the hand number")
        if state.over:
            if state.hand_number != state.hands_total or any(state.hands):
                bad.append("match over with hands left")
        else:
            if not any(state.hands):
                bad.append("match running but every hand is empty")
            if state.variant == "simple":
                sizes = [len(h) for h in state.hands]
                if max(sizes) - min(sizes) > 1 or not state.hands[state.turn]:
                    bad.append(f"simple: uneven hands {sizes} or empty hand in turn")
            elif not self.to_act(state):
                bad.append("nobody to act")
        return bad

    def glance(self, view: View) -> str:
        """The part of a seat's view that decides its move, on one line."""
        return f"hand {compact(view.get('hand'))} rows {compact(view.get('rows'))}"

    def sample_opponent(self) -> tuple[str, ...]:
        """The sample bot playing at random."""
        return sample_command("sample_bots.nimmt")


# Private helpers ----------------------------------------------------------------------


def _deal(state: NimmtState) -> None:
    """Start the next hand: rows, zeros and hands from the state's generator."""
    n, rng = state.seats, state.rng
    state.hand_number += 1
    cards = list(range(1, TOP + 1))
    shuffle(rng, cards)
    state.rows = [[c] for c in cards[:ROWS]]
    if state.variant == "plus_dealt_zeros":
        given = 2 if n <= 3 else 1
        hands = [[0] * given for _ in range(n)]
        deck = cards[ROWS:] + [0] * (ZEROS - given * n)
    else:
        given = 0
        hands = [[] for _ in range(n)]
        deck = cards[ROWS:] + [0] * ZEROS
    shuffle(rng, deck)
    size = (SIMPLE_HAND_SIZE if state.variant == "simple" else HAND_SIZE) - given
    for s in range(n):
        hands[s].extend(deck[s * size : (s + 1) * size])
        hands[s].sort()
    state.hands = hands
    state.deck = deck[n * size :]
    state.piles = [[] for _ in range(n)]
    state.pile_heads = [0] * n
    state.rows_taken = [0] * n
    state.pending = [None] * n
    state.history = []
    if state.variant == "simple":
        if state.hand_number == 1:
            state.starter = 0
        else:
            top = max(state.totals)
            state.starter = state.totals.index(top)  # ties: lowest seat
        state.turn = state.starter


def _distinct(hand: list[int]) -> list[int]:
    """The distinct values of an ascending hand, ascending."""
    out: list[int] = []
    last = -1
    for c in hand:
        if c != last:
            out.append(c)
            last = c
    return out


def _parse(action: Action) -> list[int]:
    """The cards of an action: a JSON list of 1 or 2 ints, ascending; else IllegalAction."""
    if not isinstance(action, list) or not 1 <= len(action) <= 2:
        raise IllegalAction(f"{action!r}: expected a list of 1 or 2 cards")
    for c in action:
        if type(c) is not int:  # JSON ints only (no bools, no 5.0)
            raise IllegalAction(f"{action!r}: cards are integers")
    if len(action) == 2 and action[0] > action[1]:
        raise IllegalAction(f"{action!r}: cards must be in ascending order")
    return list(action)


def _check_in_hand(hand: list[int], cards: list[int], action: Action) -> None:
    """IllegalAction unless ``cards`` (with multiplicity) are in ``hand``."""
    for c in cards:
        if hand.count(c) < cards.count(c):
            raise IllegalAction(f"{action!r}: not in your hand")


def _resolve(state: NimmtState, plays: dict[int, list[int]]) -> None:
    """Reveal ``plays`` (seat -> cards), place them in rule-7 order, record the turn."""
    first: list[tuple[int, int]] = []
    rest: list[tuple[int, int]] = []
    for s, cards in plays.items():
        hand = state.hands[s]
        for c in cards:
            hand.remove(c)
            if c == 0:
                state.piles[s].append(0)
        if len(cards) == 2 and cards[0] == 0:
            if cards[1] != 0:
                first.append((cards[1], s))
        else:
            rest.extend((c, s) for c in cards if c != 0)
    first.sort()
    rest.sort()
    placements = [_place(state, c, s) for c, s in first + rest]
    state.history.append(
        {
            "turn": len(state.history) + 1,
            "plays": [{"seat": s, "cards": list(plays[s])} for s in sorted(plays)],
            "placements": placements,
        }
    )


def _place(state: NimmtState, card: int, seat: int) -> dict[str, Any]:
    """Place one numbered card (rules 2-4); return the placement record."""
    rows = state.rows
    best, best_end = -1, -1
    high, high_end = 0, -1
    for i, row in enumerate(rows):
        end = row[-1]
        if best_end < end < card:
            best, best_end = i, end
        if end > high_end:
            high, high_end = i, end
    target = best if best >= 0 else high
    row = rows[target]
    took: list[int] = []
    if len(row) == ROW_LIMIT:
        took = row
        state.piles[seat].extend(row)
        state.pile_heads[seat] += sum(HEADS[c] for c in row)
        state.rows_taken[seat] += 1
        rows[target] = [card]
    else:
        row.append(card)
    return {"seat": seat, "card": card, "row": target, "took": list(took)}


def _advance_simple(state: NimmtState) -> None:
    """Pass the turn clockwise; end the hand when every hand is empty."""
    if not any(state.hands):
        _end_hand(state)
        return
    state.turn = (state.turn + 1) % state.seats


def _end_hand(state: NimmtState) -> None:
    """Score the hand, log it, and deal the next one or end the match."""
    zeros = [p.count(0) for p in state.piles]
    taken = [len(p) - z for p, z in zip(state.piles, zeros)]
    if _log_hand(state, list(state.pile_heads), list(state.rows_taken), taken, zeros):
        return
    state.previous = {"hand": state.hand_number, "history": state.history, "rows": [list(r) for r in state.rows]}
    _deal(state)


def _result(state: NimmtState, hands: list[dict[str, Any]]) -> Result:
    """The result of the finished match ``state`` with ``hands`` as its per-hand breakdown."""
    lower = state.variant not in POSITIVE
    scores = [float(t) for t in state.totals]
    return Result(
        scores=scores,
        ranks=ranks_from_scores(scores, lower),
        lower_is_better=lower,
        details={
            "variant": state.variant,
            "zero_heads": state.zero_heads,
            "hands": hands,
            "totals": list(state.totals),
        },
    )


def _log_hand(state: NimmtState, heads: list[int], rows_taken: list[int], taken: list[int], zeros: list[int]) -> bool:
    """Score and log the finished hand from its per-seat counts; True when the match is over."""
    zh = state.zero_heads if state.variant in POSITIVE else 0
    scores = [h + zh * z for h, z in zip(heads, zeros)] if zh else list(heads)
    state.hand_log.append(
        {
            "hand": state.hand_number,
            "scores": scores,
            "heads": heads,
            "rows_taken": rows_taken,
            "cards_taken": taken,
            "zeros_played": zeros,
            **({"starter": state.starter} if state.variant == "simple" else {}),
        }
    )
    state.totals = [t + sc for t, sc in zip(state.totals, scores)]
    if state.hand_number >= state.hands_total:
        state.over = True
        state.pending = [None] * state.seats
        return True
    return False


def _replay(state: NimmtState, seats: Sequence[int], actions: Sequence[Action]) -> bool:
    """Play every action from the fresh deal ``state``, keeping only what the result needs
    (hands, per-seat counts, and per row its end card, length and heads, the rows kept in
    the order of their end cards, so a card's row is one bisection); False at the first
    action out of turn or not legal, or when the actions end early or run past the end."""
    n, total, simple, heads_of = state.seats, len(seats), state.variant == "simple", HEADS
    i = 0
    owner = [0] * (TOP + 1)
    while True:  # one hand per pass
        hands = state.hands
        order = sorted(state.rows, key=lambda r: r[-1])
        ends = [r[-1] for r in order]
        lens = [len(r) for r in order]
        rheads = [sum(heads_of[c] for c in r) for r in order]
        ph, rt, ct, zs = [0] * n, [0] * n, [0] * n, [0] * n
        turn = state.turn
        holding = [s for s in range(n) if hands[s]]  # simultaneous: the seats asked each turn
        while holding:
            if simple:
                active: Sequence[int] = (turn,)
                turn = (turn + 1) % n
            else:
                active = holding
            if i + len(active) > total:
                return False
            first: list[int] = []
            rest: list[int] = []
            emptied = False
            for s in active:
                a = actions[i]
                if seats[i] != s or type(a) is not list:
                    return False
                i += 1
                hand = hands[s]
                if not _take_fast(a, s, hand, simple, owner, first, rest, zs):
                    return False
                if not hand:
                    emptied = True
            if emptied:
                holding = [s for s in range(n) if hands[s]]
            if first:
                first.sort()
                rest.sort()
                rest = first + rest
            else:
                rest.sort()
            _place_fast(rest, owner, ends, lens, rheads, ph, rt, ct)
        if _log_hand(state, ph, rt, ct, zs):
            return i == total
        _deal(state)


def _take_fast(
    a: list[Any],
    s: int,
    hand: list[int],
    simple: bool,
    owner: list[int],
    first: list[int],
    rest: list[int],
    zs: list[int],
) -> bool:
    """Take action ``a`` of seat ``s`` out of its hand for ``_replay``: numbered cards go to
    ``rest`` (a card paired with a 0 to ``first``), zeros are counted; False when illegal."""
    try:
        if len(a) == 1:
            c = a[0]
            if type(c) is not int:
                return False
            hand.remove(c)
            if c:
                rest.append(c)
                owner[c] = s
            else:
                zs[s] += 1
            return True
        if len(a) != 2 or simple:
            return False
        c, d = a
        if type(c) is not int or type(d) is not int or c > d:
            return False
        hand.remove(c)
        hand.remove(d)  # a pair of equal cards needs two in hand: only zeros are
    except ValueError:  # a card not in the hand
        return False
    if c:
        rest += a
        owner[c] = owner[d] = s
    elif d:
        zs[s] += 1
        first.append(d)
        owner[d] = s
    else:
        zs[s] += 2
    return True


def _place_fast(
    cards: list[int],
    owner: list[int],
    ends: list[int],
    lens: list[int],
    rheads: list[int],
    ph: list[int],
    rt: list[int],
    ct: list[int],
) -> None:
    """Place ``cards`` in order for ``_replay`` on rows kept by end card (``ends``, with
    their lengths and heads); a sixth card's owner takes the row's heads."""
    heads_of = HEADS
    for c in cards:
        k = bisect_left(ends, c)
        if k:  # after the highest end below the card: the order of ends is kept
            k -= 1
            ends[k] = c
        else:  # below every end: onto the row with the highest end, which becomes the lowest
            ends.insert(0, c)
            del ends[4]
            lens.insert(0, lens.pop())
            rheads.insert(0, rheads.pop())
        if lens[k] == ROW_LIMIT:
            s = owner[c]
            ph[s] += rheads[k]
            rt[s] += 1
            ct[s] += ROW_LIMIT
            lens[k] = 1
            rheads[k] = heads_of[c]
        else:
            lens[k] += 1
            rheads[k] += heads_of[c]


def _known_zeros(state: NimmtState, seat: int) -> int:
    """Zeros ``seat`` is known by everyone to still hold (dealt zeros not yet played)."""
    if state.variant != "plus_dealt_zeros":
        return 0
    given = 2 if state.seats <= 3 else 1
    return max(0, given - state.piles[seat].count(0))


GAME = NimmtPlus()
