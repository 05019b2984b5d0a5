"""Dieci (Dave De Vega), 4-12 players: pass the low card along; the last survivor wins.

Rules (docs/games/dieci.md; RULES.md section 4)
-----------------------------------------------
Ranks, high to low (the rank key used everywhere on the wire, then its value):
``"10"`` Gufo 10, ``"9"`` Lupo 9, ``"8"`` Puzzola 8, ``"7"`` Saltaconiglio 7,
``"6"`` Gallohotel 6, ``"5"`` .. ``"1"`` 5..1, ``"0"`` Sasso 0, ``"00"`` Orco -1,
``"000"`` Mascheronte -2, ``"0000"`` Leone fifone -3, ``"jollygatto"`` Jollygatto -3.
The deck (option ``deck``) defaults to 4 of each of 1..10 and 3 of each of 0, 00, 000,
0000 and jollygatto: 55 cards. Every seat starts with ``tokens`` tokens (3).

A manche: seat 0 deals the first one, then the deal passes to the right (the next seat
still in, counting down: dealer-1, dealer-2, ...). The play order is the dealer's right
first, on to the right, the dealer last; eliminated seats are skipped everywhere. Each
player in play order draws one hidden card (``reshuffle = true``: the whole deck is
reshuffled every manche; ``false``, only below 5 players: used cards are set aside and
reshuffled when the deck runs out).

In play order each player decides ``keep`` or ``swap`` (with the next player still in).
The asked player must accept, unless they hold a 6-10: then they decide ``accept`` or
``block`` (a holder of anything else accepts without being asked). A block reveals the
card; the asker keeps their own card, and:

* 10 Gufo, 6 Gallohotel: nothing more.
* 9 Lupo: the asker loses a token.
* 8 Puzzola: the asker loses a token and the swap chain unwinds: cards passed along
  consecutive accepted swaps form a chain (its first discarder is the player whose swap
  started it, each receiver who swaps again extends it); every member takes back the
  card they held when the chain began, so the passed card returns to the first
  discarder, who also loses a token (one token in all when the asker is the first
  discarder).
* 7 Saltaconiglio: the swap skips the 7-holder and goes to the next player after them
  (wrapping past the dealer to the start of the order), who again accepts or may block.
  Lupo and Puzzola hit the original asker. A skip that would come back to the asker, or
  to any other member of the asker's chain, voids the swap.

After an accepted swap the receiver's turn is next (keep or pass it on). A player who has
revealed a card makes no further decision this manche; if a skip reaches them again their
face-up card acts again by itself (a 7 skips, a 6-10 blocks with its effect). The
dealer, last, decides ``keep`` or ``draw`` (swap with the top card of the deck): a drawn
6-10 blocks (it is discarded face up, the dealer keeps their card, no tokens); otherwise
the dealer takes it and discards their old card face up.

Showdown: all cards are revealed; every holder of the lowest value loses a token. If at
least two Jollygatti are revealed their holders lose nothing (the other holders of the
lowest value still lose; the lowest is not recomputed) and every seat eliminated in an
earlier manche re-enters with 1 token. If a showdown would eliminate every player left,
nobody loses a token. A seat at 0 tokens is out at once; mid-manche (Lupo, Puzzola) its
card is discarded face up and takes no part in the showdown. The match ends when one
seat is left (it wins) or after ``max_manches`` manches (a draw among the survivors).

Score = finishing position (1 = the winner or every survivor of a ``max_manches`` draw;
the others by elimination, later is better; seats eliminated at the same moment share
the position); lower is better, and the ranks equal the scores.

Decisions where RULES.md is silent
----------------------------------
The dealer's discarded card is face up; a
mid-manche eliminated seat's card is discarded face up; a wrap-around skip into a member
of the asker's chain voids the swap (as reaching the asker does); a revealed card
reached again acts by itself; a seat's last elimination counts for the finishing order
(after a re-entry); the next dealer is chosen after re-entries.

Seat view (JSON)
----------------
::

    {"seat": 2, "players": 6, "manche": 3, "max_manches": 500,
     "dealer": 4, "order": [3, 2, 1, 0, 5, 4],      # this manche's play order
     "tokens": [3, 1, 2, 0, 3, 2], "out": [3],       # out = eliminated seats
     "deck_size": 48, "discard_pile": ["9", "0"],    # face-up cards set aside, by rank
     "card": "2",                                    # own card now (null when out)
     "dealt": "0", "passed": ["0"], "received": ["2"],  # own cards this manche
     "revealed": [null, null, null, null, "9", null],   # face-up blockers this manche
     "turn": 2,                  # seat whose turn it is in the play order (null: over)
     "your_turn": false,         # whether THIS seat decides now (decision is not null)
     "decision": "turn",         # what THIS seat decides now: "turn" (keep/swap),
                                 # "respond" (accept/block), "dealer" (keep/draw) or null
     "asker": null,              # "respond": who asked this seat
     "target": 1,                # "turn": the seat a swap would go to
     "events": [...],            # every event of this manche, in order
     "previous_events": [...],   # the events of the previous manche (its showdown)
     "sat_out": [{"manche": k, "events": [...]}, ...]}  # only back from a re-entry, in
                                 # its first manche back: the manches it missed while out

Events (``seat`` is the actor; fields in [brackets] appear only in the view of the seats
concerned):

* ``{"type": "keep", "seat": s}`` (a player's or the dealer's keep)
* ``{"type": "ask", "seat": a, "target": t}``
* ``{"type": "accept", "seat": t, "asker": a, ["gave": c, "got": c]}``
* ``{"type": "block", "seat": t, "asker": a, "card": c, "auto": bool}``
* ``{"type": "skip", "seat": t, "asker": a, "card": "7", "next": u, "auto": bool}``
* ``{"type": "void", "asker": a}``
* ``{"type": "unwind", "first": f, "members": [..], ["got": c]}``
* ``{"type": "draw", "seat": d, "blocked": true, "card": c}`` or
  ``{"type": "draw", "seat": d, "blocked": false, "discarded": c, ["got": c]}``
* ``{"type": "token", "seat": s, "cause": "lupo" | "puzzola" | "showdown", "tokens": k}``
* ``{"type": "eliminated", "seat": s, "card": c | null}`` (card: mid-manche only)
* ``{"type": "showdown", "cards": [c | null per seat], "lowest": c, "losers": [..],
  "safe": [..], "nobody_loses": bool}``
* ``{"type": "reenter", "seat": s, "tokens": 1}``

Actions
-------
The JSON strings ``"keep"`` / ``"swap"`` (a player's turn), ``"accept"`` / ``"block"``
(asked of a 6-10 holder), ``"keep"`` / ``"draw"`` (the dealer), in that order.
"""

from __future__ import annotations

import copy as _copy
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.games.base import (
    Action,
    Game,
    GameInfo,
    IllegalAction,
    OptionError,
    OptionSpec,
    Result,
    StatSpec,
    View,
    compact,
    ranks_from_scores,
    sample_command,
    shuffle,
)

RANKS = ("10", "9", "8", "7", "6", "5", "4", "3", "2", "1", "0", "00", "000", "0000", "jollygatto")
VALUES = (10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -2, -3, -3)
RANK_INDEX = {name: i for i, name in enumerate(RANKS)}
GUFO, LUPO, PUZZOLA, SALTA, GALLO = 0, 1, 2, 3, 4
BLOCKER_MAX = GALLO  # rank indices 0..4 are the 6-10 blockers
JOLLY = 14
DEFAULT_DECK = {name: (4 if VALUES[i] >= 1 else 3) for i, name in enumerate(RANKS)}
MAX_PER_RANK = 100
CAUSES = ("showdown", "lupo", "puzzola")

TURN, RESPOND, DEALER, OVER = "turn", "respond", "dealer", "over"
TURN_ACTIONS = ("keep", "swap")
RESPOND_ACTIONS = ("accept", "block")
DEALER_ACTIONS = ("keep", "draw")
NONE = -1  # no card / no seat

Event = tuple[dict[str, Any], dict[int, dict[str, Any]] | None]  # public part, private parts


@dataclass(slots=True)
class DieciState:
    """A match of Dieci: tokens, the current manche, the record, the generator."""

    seats: int
    rng: random.Random
    reshuffle: bool
    max_manches: int
    rank: list[int]  # rank index of each card id (a card is an id 0..total-1)
    counts: list[int]  # cards per rank index, from the deck option
    tokens: list[int]
    hand: list[int]  # card id per seat, NONE when not in the manche
    deck: list[int] = field(default_factory=list)  # face down, top = last
    used: list[int] = field(default_factory=list)  # face up, set aside
    manche: int = 0
    dealer: int = 0
    order: list[int] = field(default_factory=list)
    pos: int = 0  # index in order of the seat whose turn it is
    phase: str = TURN
    asker: int = NONE  # respond: the original asker
    target: int = NONE  # respond: the seat asked to accept or block
    revealed: list[bool] = field(default_factory=list)
    chain_first: int = NONE  # first discarder of the current chain
    chain_start: dict[int, int] = field(default_factory=dict)  # member -> card at chain start
    chain_receiver: int = NONE  # receiver of the chain's last accepted swap
    seen: list[int] = field(default_factory=list)  # bit mask of card ids each seat saw
    dealt: list[str | None] = field(default_factory=list)
    passed: list[list[str]] = field(default_factory=list)
    received: list[list[str]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    prev_events: list[Event] = field(default_factory=list)
    sat_out: list[list[tuple[int, list[Event]]]] = field(default_factory=list)  # per seat: manches it missed
    # record of the match
    seq: int = 0  # elimination moments so far
    elim_seq: list[int] = field(default_factory=list)  # moment of the last elimination
    elim_manche: list[int] = field(default_factory=list)  # manche of the last elimination
    lost: dict[str, list[int]] = field(default_factory=dict)  # cause -> tokens per seat
    reentries: list[int] = field(default_factory=list)
    survived: list[int] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    manche_losses: list[list[Any]] = field(default_factory=list)
    manche_out: list[int] = field(default_factory=list)


class Dieci(Game):
    """Dieci: keep or swap the hidden card; the lowest card at the showdown loses a token."""

    info = GameInfo(
        id="dieci",
        title="Dieci",
        min_seats=4,
        max_seats=12,
        cooperative=False,
        options=(
            OptionSpec(
                "deck",
                dict(DEFAULT_DECK),
                "cards per rank, keys 10..1, 0, 00, 000, 0000, jollygatto (missing keys keep their default count)",
            ),
            OptionSpec("tokens", 3, "tokens per player; out at 0", minimum=1),
            OptionSpec(
                "reshuffle",
                True,
                "reshuffle the whole deck every manche; false (below 5 players) "
                "reshuffles the used cards only when the deck runs out",
            ),
            OptionSpec("max_manches", 500, "a match reaching it is a draw among the survivors", minimum=1),
        ),
        stats=(StatSpec("manches_survived", "Manches survived", "manches a seat finished still in"),),
        score_is_position=True,  # finishing positions, 1 = last survivor
    )

    def check_options(self, seats: int, options: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults filled; the deck table merged over the default and checked."""
        out = super().check_options(seats, options)
        deck = dict(DEFAULT_DECK)
        for key, count in out["deck"].items():
            if key not in RANK_INDEX:
                raise OptionError("deck", f"unknown rank {key!r}; ranks are {', '.join(RANKS)}")
            if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_PER_RANK:
                raise OptionError("deck", f"count of {key!r} must be an integer 0..{MAX_PER_RANK}, not {count!r}")
            deck[key] = count
        total = sum(deck.values())
        if total < seats + 1:
            raise OptionError("deck", f"{total} cards are too few for {seats} players (need {seats + 1})")
        out["deck"] = deck
        if not out["reshuffle"] and seats >= 5:
            raise OptionError("reshuffle", f"false is only allowed below 5 players, not with {seats}")
        return out

    def setup(self, seats: int, seed: int, options: Mapping[str, Any]) -> DieciState:
        """A new match: every seat holds ``tokens`` tokens; seat 0 deals the first manche."""
        opts = self.check_options(seats, options)
        rank = [RANK_INDEX[name] for name in RANKS for _ in range(opts["deck"][name])]
        state = DieciState(
            seats=seats,
            rng=random.Random(seed),
            reshuffle=opts["reshuffle"],
            max_manches=opts["max_manches"],
            rank=rank,
            counts=[opts["deck"][name] for name in RANKS],
            tokens=[opts["tokens"]] * seats,
            hand=[NONE] * seats,
            elim_seq=[NONE] * seats,
            elim_manche=[NONE] * seats,
            lost={cause: [0] * seats for cause in CAUSES},
            reentries=[0] * seats,
            survived=[0] * seats,
            sat_out=[[] for _ in range(seats)],
        )
        state.deck = list(range(len(rank)))
        if not state.reshuffle:  # with reshuffle every manche shuffles the whole deck
            shuffle(state.rng, state.deck)
        _start_manche(state)
        return state

    def to_act(self, state: DieciState) -> tuple[int, ...]:
        """The one seat deciding now (the asked seat while a swap waits for an answer)."""
        if state.phase == RESPOND:
            return (state.target,)
        if state.phase == OVER:
            return ()
        return (state.order[state.pos],)

    def view(self, state: DieciState, seat: int) -> View:
        """Own card and own passes, tokens, order, face-up cards, this manche's events."""
        phase = state.phase
        turn = None if phase == OVER else state.order[state.pos]
        decision = None
        asker = target = None
        if phase == RESPOND:
            if state.target == seat:
                decision, asker = RESPOND, state.asker
        elif turn == seat:
            decision = phase
            if phase == TURN:
                target = _next_in_order(state, seat)
        rank = state.rank
        card = state.hand[seat]
        return {
            "seat": seat,
            "players": state.seats,
            "manche": state.manche,
            "max_manches": state.max_manches,
            "dealer": state.dealer,
            "order": list(state.order),
            "tokens": list(state.tokens),
            "out": [s for s in range(state.seats) if state.tokens[s] == 0],
            "deck_size": len(state.deck),
            "discard_pile": [RANKS[r] for r in sorted(rank[c] for c in state.used)],
            "card": None if card == NONE else RANKS[rank[card]],
            "dealt": state.dealt[seat],
            "passed": list(state.passed[seat]),
            "received": list(state.received[seat]),
            "revealed": [
                RANKS[rank[state.hand[s]]] if state.revealed[s] and state.hand[s] != NONE else None
                for s in range(state.seats)
            ],
            "turn": turn,
            "your_turn": decision is not None,
            "decision": decision,
            "asker": asker,
            "target": target,
            "events": _render(state.events, seat),
            "previous_events": _render(state.prev_events, seat),
            **_sat_out(state, seat),
        }

    def legal(self, state: DieciState, seat: int) -> list[Action]:
        """``keep``/``swap``, ``accept``/``block`` or ``keep``/``draw`` for the seat to act."""
        phase = state.phase
        if phase == RESPOND:
            return list(RESPOND_ACTIONS) if seat == state.target else []
        if phase == OVER or seat != state.order[state.pos]:
            return []
        return list(TURN_ACTIONS if phase == TURN else DEALER_ACTIONS)

    def apply(self, state: DieciState, seat: int, action: Action) -> DieciState:
        """Play one decision and resolve everything that follows until the next one."""
        phase = state.phase
        if phase == OVER:
            raise IllegalAction("the match is over")
        if phase == RESPOND:
            if seat != state.target:
                raise IllegalAction(f"seat {seat} is not to act; seat {state.target} is")
            if not _one_of(action, RESPOND_ACTIONS):
                raise IllegalAction(f"{action!r} is not one of {list(RESPOND_ACTIONS)}")
            if action == "accept":
                _accept(state, state.asker, seat)
            else:
                _block(state, state.asker, seat, auto=False)
            return state
        player = state.order[state.pos]
        if seat != player:
            raise IllegalAction(f"seat {seat} is not to act; seat {player} is")
        if phase == TURN:
            if not _one_of(action, TURN_ACTIONS):
                raise IllegalAction(f"{action!r} is not one of {list(TURN_ACTIONS)}")
            if action == "keep":
                _event(state, {"type": "keep", "seat": seat})
                _next_turn(state)
                return state
            if state.chain_receiver != seat:  # a fresh chain starts with this swap
                state.chain_first = seat
                state.chain_start = {seat: state.hand[seat]}
            target = _next_in_order(state, seat)
            _event(state, {"type": "ask", "seat": seat, "target": target})
            _ask(state, seat, target)
            return state
        if not _one_of(action, DEALER_ACTIONS):
            raise IllegalAction(f"{action!r} is not one of {list(DEALER_ACTIONS)}")
        if action == "keep":
            _event(state, {"type": "keep", "seat": seat})
        else:
            _dealer_draw(state, seat)
        _showdown(state)
        return state

    def is_over(self, state: DieciState) -> bool:
        """True once one seat is left or ``max_manches`` manches were played."""
        return state.phase == OVER

    def result(self, state: DieciState) -> Result:
        """Finishing positions as scores (lower is better) and the match's tabulation."""
        n = state.seats
        inf = state.seq + 1
        key = [inf if state.tokens[s] > 0 else state.elim_seq[s] for s in range(n)]
        scores = [1 + sum(1 for o in range(n) if key[o] > key[s]) for s in range(n)]
        groups = [[s for s in range(n) if key[s] == k] for k in sorted(set(key), reverse=True)]
        survivors = [s for s in range(n) if state.tokens[s] > 0]
        details = {
            "manches": state.manche,
            "finishing_order": groups,
            "survivors": survivors,
            "draw": len(survivors) > 1,
            "tokens": list(state.tokens),
            "eliminated_in": [state.elim_manche[s] if state.tokens[s] == 0 else None for s in range(n)],
            "tokens_lost": {cause: list(state.lost[cause]) for cause in CAUSES},
            "reentries": list(state.reentries),
            "manches_survived": list(state.survived),
            "manche_log": _copy.deepcopy(state.log),
        }
        return Result(
            scores=[float(x) for x in scores],
            ranks=ranks_from_scores(scores, lower_is_better=True),
            lower_is_better=True,
            details=details,
        )

    # Hooks ----------------------------------------------------------------------------

    def seat_stats(self, result: Result, seat: int) -> dict[str, float]:
        """Manches this seat finished still in the game."""
        return {"manches_survived": float(result.details["manches_survived"][seat])}

    def redeal_hidden(self, state: DieciState, seat: int, rng: random.Random) -> DieciState:
        """A copy where the cards ``seat`` has not seen (others' hidden cards, the deck)
        trade ranks at random and the deck is reshuffled."""
        new: DieciState = self.copy(state)
        new.rng = random.Random(rng.getrandbits(64))
        seen = new.seen[seat] if new.phase != OVER else 0
        fixed = set()
        if new.phase == RESPOND and new.target != seat:
            fixed.add(new.hand[new.target])  # being asked tells that it is a 6-10
        hidden = [
            c for s, c in enumerate(new.hand) if s != seat and c != NONE and not new.revealed[s] and c not in fixed
        ]
        hidden += new.deck
        hidden = [c for c in hidden if not (seen >> c) & 1]
        ranks = [new.rank[c] for c in hidden]
        rng.shuffle(ranks)
        for c, r in zip(hidden, ranks):
            new.rank[c] = r
        rng.shuffle(new.deck)
        return new

    def invariants(self, state: DieciState) -> list[str]:
        """Every card in one place, one card per seat still in, tokens, phases, chain."""
        bad: list[str] = []
        n = state.seats
        total = len(state.rank)
        held = [c for c in state.hand if c != NONE]
        places = held + state.deck + state.used
        if sorted(places) != list(range(total)):
            counts = Counter(places)
            dup = sorted(c for c, k in counts.items() if k > 1)
            missing = sorted(set(range(total)) - set(counts))
            bad.append(f"cards not accounted for once: duplicated {dup}, missing {missing}")
        for s in range(n):
            t = state.tokens[s]
            if t < 0:
                bad.append(f"seat {s} has {t} tokens")
            if state.phase == OVER:
                if state.hand[s] != NONE:
                    bad.append(f"seat {s} holds a card after the match")
            elif (t > 0) != (state.hand[s] != NONE):
                bad.append(f"seat {s} with {t} tokens holds {'a card' if state.hand[s] != NONE else 'no card'}")
            if (
                state.phase != OVER
                and state.revealed[s]
                and (state.hand[s] == NONE or state.rank[state.hand[s]] > BLOCKER_MAX)
            ):
                bad.append(f"seat {s} revealed a card that is not a 6-10")
        in_game = sum(1 for t in state.tokens if t > 0)
        if state.manche > state.max_manches:
            bad.append(f"manche {state.manche} beyond max_manches {state.max_manches}")
        if state.phase != OVER:
            if in_game < 2:
                bad.append(f"the match goes on with {in_game} seat(s) in")
            if state.order[-1] != state.dealer or state.tokens[state.dealer] <= 0:
                bad.append("the dealer is not last in the order or is out")
            current = state.order[state.pos]
            if state.tokens[current] <= 0 or state.revealed[current]:
                bad.append(f"seat {current} has the turn but is out or revealed")
            if state.phase == RESPOND:
                t = state.target
                if state.revealed[t] or state.rank[state.hand[t]] > BLOCKER_MAX:
                    bad.append(f"seat {t} is asked to respond without an unrevealed 6-10")
                if state.asker != current:
                    bad.append("the asker is not the seat whose turn it is")
            if state.phase == DEALER and current != state.dealer:
                bad.append("the dealer phase belongs to another seat")
            if state.chain_start:
                members = list(state.chain_start)
                if any(state.hand[m] == NONE for m in members):
                    bad.append("a chain member holds no card")
                elif sorted(state.chain_start.values()) != sorted(state.hand[m] for m in members):
                    bad.append("the chain's members no longer hold its cards")
        per_rank = [0] * len(RANKS)
        for r in state.rank:
            per_rank[r] += 1
        if per_rank != state.counts:
            bad.append("the deck's composition changed")
        return bad

    def glance(self, view: View) -> str:
        """The part of a seat's view that decides its move, on one line."""
        return f"card {compact(view.get('card'))} deciding {view.get('decision')} tokens {compact(view.get('tokens'))}"

    def sample_opponent(self) -> tuple[str, ...]:
        """The sample bot playing at random."""
        return sample_command("sample_bots.dieci")


# Private helpers ------------------------------------------------------------------------


def _one_of(action: Action, allowed: tuple[str, ...]) -> bool:
    return isinstance(action, str) and action in allowed


def _event(state: DieciState, public: dict[str, Any], private: dict[int, dict[str, Any]] | None = None) -> None:
    state.events.append((public, private))


def _render(events: list[Event], seat: int) -> list[dict[str, Any]]:
    """The events as ``seat`` sees them: public fields plus its own private ones."""
    return [{**pub, **priv[seat]} if priv is not None and seat in priv else dict(pub) for pub, priv in events]


def _sat_out(state: DieciState, seat: int) -> dict[str, Any]:
    """``sat_out`` for a seat back in play after a re-entry, until it has played a manche:
    the events of every manche it missed (nothing for any other seat)."""
    missed = state.sat_out[seat]
    if not missed or state.tokens[seat] == 0:
        return {}
    return {"sat_out": [{"manche": k, "events": _render(events, seat)} for k, events in missed]}


def _keep_missed(state: DieciState) -> None:
    """At a manche's end: a seat out now keeps the manche's events for when it re-enters
    (its views stopped); a seat that played the manche has been shown what it missed."""
    if state.manche == 0:
        return
    played = set(state.order)
    for s in range(state.seats):
        if s in played:
            state.sat_out[s] = []
        if state.tokens[s] == 0:
            state.sat_out[s].append((state.manche, state.events))


def _name(state: DieciState, card: int) -> str:
    return RANKS[state.rank[card]]


def _start_manche(state: DieciState) -> None:
    """Deal the next manche: new dealer, order, cards; the first seat's turn."""
    n = state.seats
    _keep_missed(state)
    state.manche += 1
    if state.manche > 1:
        d = state.dealer
        for k in range(1, n + 1):
            d = (state.dealer - k) % n
            if state.tokens[d] > 0:
                break
        state.dealer = d
    state.order = [s for s in ((state.dealer - k) % n for k in range(1, n + 1)) if state.tokens[s] > 0]
    if state.reshuffle:
        state.deck = list(range(len(state.rank)))
        state.used = []
        shuffle(state.rng, state.deck)
    state.revealed = [False] * n
    state.seen = [0] * n
    state.dealt = [None] * n
    state.passed = [[] for _ in range(n)]
    state.received = [[] for _ in range(n)]
    state.prev_events = state.events
    state.events = []
    state.manche_losses = []
    state.manche_out = []
    _reset_chain(state)
    for s in state.order:
        c = _draw(state)
        state.hand[s] = c
        state.seen[s] = 1 << c
        state.dealt[s] = _name(state, c)
    state.pos = 0
    state.phase = TURN


def _draw(state: DieciState) -> int:
    """The top card of the deck; an empty deck is first refilled from the used cards."""
    if not state.deck:
        state.deck = state.used
        state.used = []
        shuffle(state.rng, state.deck)
    return state.deck.pop()


def _reset_chain(state: DieciState) -> None:
    state.chain_first = NONE
    state.chain_start = {}
    state.chain_receiver = NONE


def _next_in_order(state: DieciState, seat: int) -> int:
    """The next seat still in after ``seat`` in the play order, wrapping past the dealer."""
    order = state.order
    k = len(order)
    i = order.index(seat)
    for step in range(1, k + 1):
        s = order[(i + step) % k]
        if state.tokens[s] > 0:
            return s
    return seat


def _next_turn(state: DieciState) -> None:
    """Give the turn to the next seat after the current one that still decides."""
    order = state.order
    last = len(order) - 1
    i = state.pos + 1
    state.phase = TURN
    while i < last:
        s = order[i]
        if state.tokens[s] > 0 and not state.revealed[s]:
            state.pos = i
            if state.chain_receiver != s:
                _reset_chain(state)
            return
        i += 1
    _reset_chain(state)
    state.pos = last
    d = order[last]
    if state.tokens[d] > 0 and not state.revealed[d]:
        state.phase = DEALER
        return
    _showdown(state)


def _ask(state: DieciState, asker: int, target: int) -> None:
    """Offer the asker's swap to ``target``: accept, skip, block or wait for an answer."""
    if target == asker or target in state.chain_start:
        _event(state, {"type": "void", "asker": asker})
        _reset_chain(state)
        _next_turn(state)
        return
    if state.rank[state.hand[target]] > BLOCKER_MAX:
        _accept(state, asker, target)
    elif state.revealed[target]:
        _block(state, asker, target, auto=True)
    else:
        state.phase = RESPOND
        state.asker = asker
        state.target = target


def _accept(state: DieciState, asker: int, target: int) -> None:
    """Swap the asker's and the target's cards; the chain grows by the target."""
    hand = state.hand
    give, get = hand[asker], hand[target]
    if target not in state.chain_start:
        state.chain_start[target] = get
    hand[asker], hand[target] = get, give
    state.chain_receiver = target
    state.seen[asker] |= 1 << get
    state.seen[target] |= 1 << give
    g, r = _name(state, give), _name(state, get)
    state.passed[asker].append(g)
    state.received[asker].append(r)
    state.passed[target].append(r)
    state.received[target].append(g)
    _event(
        state,
        {"type": "accept", "seat": target, "asker": asker},
        {asker: {"gave": g, "got": r}, target: {"gave": r, "got": g}},
    )
    state.asker = state.target = NONE
    _next_turn(state)


def _block(state: DieciState, asker: int, target: int, auto: bool) -> None:
    """The target shows its 6-10: skip on (7) or block with the card's effect."""
    r = state.rank[state.hand[target]]
    state.revealed[target] = True
    state.asker = state.target = NONE
    if r == SALTA:
        nxt = _next_in_order(state, target)
        _event(state, {"type": "skip", "seat": target, "asker": asker, "card": RANKS[r], "next": nxt, "auto": auto})
        _ask(state, asker, nxt)
        return
    _event(state, {"type": "block", "seat": target, "asker": asker, "card": RANKS[r], "auto": auto})
    losers: list[tuple[int, str]] = []
    if r == LUPO:
        losers.append((asker, "lupo"))
    elif r == PUZZOLA:
        _unwind(state)
        losers.append((asker, "puzzola"))
        if state.chain_first not in (NONE, asker):
            losers.append((state.chain_first, "puzzola"))
    _reset_chain(state)
    if losers:
        _lose_tokens(state, losers, mid_manche=True)
        if sum(1 for t in state.tokens if t > 0) < 2:
            _end_manche(state, None)
            return
    _next_turn(state)


def _unwind(state: DieciState) -> None:
    """Every chain member takes back the card it held when the chain began."""
    members = [m for m in state.chain_start if state.hand[m] != state.chain_start[m]]
    if not members:
        return
    private = {}
    for m in members:
        c = state.chain_start[m]
        state.hand[m] = c
        state.seen[m] |= 1 << c
        private[m] = {"got": _name(state, c)}
    _event(state, {"type": "unwind", "first": state.chain_first, "members": members}, private)


def _lose_tokens(state: DieciState, losers: list[tuple[int, str]], mid_manche: bool) -> None:
    """Each loser loses a token; those at 0 are out at once (one shared moment)."""
    out = []
    for s, cause in losers:
        state.tokens[s] -= 1
        state.lost[cause][s] += 1
        state.manche_losses.append([s, cause])
        _event(state, {"type": "token", "seat": s, "cause": cause, "tokens": state.tokens[s]})
        if state.tokens[s] == 0:
            out.append(s)
    if not out:
        return
    state.seq += 1
    for s in out:
        state.elim_seq[s] = state.seq
        state.elim_manche[s] = state.manche
        state.manche_out.append(s)
        card = None
        if mid_manche:
            c = state.hand[s]
            state.hand[s] = NONE
            state.used.append(c)
            card = _name(state, c)
        _event(state, {"type": "eliminated", "seat": s, "card": card})


def _dealer_draw(state: DieciState, dealer: int) -> None:
    """The dealer swaps with the deck's top card, unless it is a 6-10 (which blocks)."""
    c = _draw(state)
    state.seen[dealer] |= 1 << c
    if state.rank[c] <= BLOCKER_MAX:
        state.used.append(c)
        _event(state, {"type": "draw", "seat": dealer, "blocked": True, "card": _name(state, c)})
        return
    old = state.hand[dealer]
    state.hand[dealer] = c
    state.used.append(old)
    g, r = _name(state, old), _name(state, c)
    state.passed[dealer].append(g)
    state.received[dealer].append(r)
    _event(state, {"type": "draw", "seat": dealer, "blocked": False, "discarded": g}, {dealer: {"got": r}})


def _showdown(state: DieciState) -> None:
    """Reveal every card still in play; the lowest lose a token (Jollygatto aside)."""
    players = [s for s in state.order if state.tokens[s] > 0]
    rank = state.rank
    cards: list[str | None] = [None] * state.seats
    for s in players:
        cards[s] = RANKS[rank[state.hand[s]]]
    low = min(VALUES[rank[state.hand[s]]] for s in players)
    jollys = [s for s in players if rank[state.hand[s]] == JOLLY]
    safe = jollys if len(jollys) >= 2 else []
    losers = [s for s in players if VALUES[rank[state.hand[s]]] == low and s not in safe]
    nobody = len(losers) == len(players) and all(state.tokens[s] == 1 for s in losers)
    lowest = next(RANKS[rank[state.hand[s]]] for s in players if VALUES[rank[state.hand[s]]] == low)
    _event(
        state,
        {
            "type": "showdown",
            "cards": cards,
            "lowest": lowest,
            "losers": [] if nobody else losers,
            "safe": safe,
            "nobody_loses": nobody,
        },
    )
    if not nobody:
        _lose_tokens(state, [(s, "showdown") for s in losers], mid_manche=False)
    reentered = []
    if safe:
        for s in range(state.seats):
            if state.tokens[s] == 0 and state.elim_manche[s] < state.manche:
                state.tokens[s] = 1
                state.reentries[s] += 1
                reentered.append(s)
                _event(state, {"type": "reenter", "seat": s, "tokens": 1})
    _end_manche(state, cards, reentered)


def _end_manche(state: DieciState, cards: list[str | None] | None, reentered: list[int] | None = None) -> None:
    """Record the manche, set the cards aside, then deal the next one or end the match."""
    reentered = reentered or []
    for s in range(state.seats):
        c = state.hand[s]
        if c != NONE:
            state.used.append(c)
            state.hand[s] = NONE
            if state.tokens[s] > 0:
                state.survived[s] += 1
    state.log.append(
        {
            "manche": state.manche,
            "dealer": state.dealer,
            "showdown": cards,
            "losses": state.manche_losses,
            "eliminated": state.manche_out,
            "reentered": reentered,
        }
    )
    state.asker = state.target = NONE
    if sum(1 for t in state.tokens if t > 0) < 2 or state.manche >= state.max_manches:
        state.phase = OVER
        _reset_chain(state)
        return
    _start_manche(state)


GAME = Dieci()
