"""The Game (RULES.md §1): rule scenarios as tables, On Fire, claims, leaks, playouts."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from referee.games.base import IllegalAction, InvalidExtras, OptionError
from referee.games.the_game.rules import GAME, TheGameState, _start_turn

pytestmark = pytest.mark.parallel

UP0, UP1, DOWN2, DOWN3 = 0, 1, 2, 3
END = "end"


def opts(**kw: Any) -> dict[str, Any]:
    return {"pro": False, "reduced_hand": False, "on_fire": False, "communication": "claims", **kw}


def deal(
    hands: list[list[int]],
    tops: tuple[int, int, int, int] = (1, 1, 100, 100),
    draw: list[int] | None = None,
    deck_empty: bool = False,
    active: int = 0,
    **options: Any,
) -> TheGameState:
    """A state with these hands and pile tops; every other card goes to the piles (below
    the tops) if ``deck_empty``, else to the draw pile, ``draw`` being drawn first."""
    state = GAME.setup(len(hands), 0, opts(**options))
    in_hands = {c for h in hands for c in h}
    first = list(draw or [])
    rest = [c for c in range(2, 100) if c not in in_hands and c not in first and c not in tops]
    piles: list[list[int]] = [[], [], [], []]
    if deck_empty:
        for c in rest:
            if c < tops[0]:
                piles[0].append(c)
            elif c < tops[1]:
                piles[1].append(c)
            elif c > tops[2]:
                piles[2].append(c)
            elif c > tops[3]:
                piles[3].append(c)
            else:
                raise ValueError(f"card {c} fits under no top {tops}")
        rest = []
    for p in range(4):
        piles[p].sort(reverse=p >= 2)
        if tops[p] not in (1, 100):
            piles[p].append(tops[p])
    state.hands = [sorted(h) for h in hands]
    state.deck = rest + list(reversed(first))  # deck[-1] is drawn first
    state.piles = piles
    state.tops = list(tops)
    state.placed_total = sum(len(p) for p in piles)
    state.placed_by = [0] * len(hands)
    state.placed_by[0] = state.placed_total
    every = sorted([c for h in state.hands for c in h] + state.deck + [c for q in piles for c in q])
    assert every == list(range(2, 100)), "the scenario does not account for every card once"
    state.active = active
    state.over = False
    state.end_reason = None
    _start_turn(state)
    return state


def place(state: TheGameState, card: int, pile: int) -> TheGameState:
    return GAME.apply(state, state.active, {"card": card, "pile": pile})


def end(state: TheGameState) -> TheGameState:
    return GAME.apply(state, state.active, END)


def filler(n: int, avoid: set[int], lo: int = 40, hi: int = 60) -> list[int]:
    """n cards between lo and hi not in ``avoid`` (a hand padding that stays put)."""
    return [c for c in range(lo, hi) if c not in avoid][:n]


# Setup ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seats, reduced, size",
    [
        (1, False, 8),
        (2, False, 7),
        (3, False, 6),
        (4, False, 6),
        (5, False, 6),
        (1, True, 7),
        (2, True, 6),
        (3, True, 5),
        (4, True, 5),
        (5, True, 5),
    ],
)
def test_hand_sizes(seats: int, reduced: bool, size: int) -> None:
    state = GAME.setup(seats, 7, {"reduced_hand": reduced})
    assert [len(h) for h in state.hands] == [size] * seats
    assert len(state.deck) == 98 - size * seats
    assert GAME.to_act(state) == (0,)
    assert GAME.invariants(state) == []


def test_options_checked() -> None:
    with pytest.raises(OptionError):
        GAME.setup(3, 1, {"communication": "shout"})
    with pytest.raises(OptionError):
        GAME.setup(3, 1, {"bogus": 1})
    with pytest.raises(OptionError):
        GAME.setup(6, 1, {})
    assert GAME.info.cooperative and GAME.info.extra_reply_fields == ("claims",)
    assert [o.name for o in GAME.info.options] == ["pro", "reduced_hand", "on_fire", "communication"]


# Placing cards -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pile, top, card, ok",
    [
        (UP0, 47, 37, True),  # rulebook: 37 on an ascending 47 (backwards trick)
        (DOWN2, 65, 75, True),  # rulebook: 75 on a descending 65
        (DOWN2, 83, 85, False),  # the misprinted "83, 85": illegal
        (UP0, 47, 48, True),
        (UP0, 47, 57, True),
        (UP0, 47, 36, False),
        (UP0, 47, 46, False),
        (UP0, 47, 38, False),
        (UP1, 1, 2, True),
        (DOWN3, 100, 99, True),
        (DOWN2, 65, 55, True),
        (DOWN2, 65, 66, False),
        (DOWN2, 65, 74, False),
        (UP0, 12, 2, True),
    ],
)
def test_placement_rule(pile: int, top: int, card: int, ok: bool) -> None:
    tops = [1, 1, 100, 100]
    tops[pile] = top
    hand = [card] + filler(5, {card, top})
    state = deal([hand, filler(6, set(hand) | {top}, 60, 90)], tuple(tops))  # type: ignore[arg-type]
    action = {"card": card, "pile": pile}
    assert (action in GAME.legal(state, 0)) is ok
    if ok:
        GAME.apply(state, 0, action)
        assert state.tops[pile] == card
    else:
        with pytest.raises(IllegalAction):
            GAME.apply(state, 0, action)


@pytest.mark.parametrize(
    "pile, start, cards",
    [
        (UP0, 40, [47, 37]),  # 47 then the trick 37 on the 47 just placed
        (DOWN2, 70, [65, 75]),  # 65 then the trick 75
        (UP1, 5, [12, 2]),  # 12 then 2 within one turn
        (DOWN3, 99, [98, 97, 88, 83]),  # the rulebook's sequence without its misprint
        (UP0, 20, [30, 40, 45, 35, 25]),  # two tricks in a row
    ],
)
def test_tricks_within_a_turn(pile: int, start: int, cards: list[int]) -> None:
    tops = [1, 1, 100, 100]
    tops[pile] = start
    hand = cards + filler(8 - len(cards), set(cards) | {start})
    state = deal([hand], tuple(tops))  # type: ignore[arg-type]
    for card in cards:
        place(state, card, pile)
        assert state.tops[pile] == card
    assert state.piles[pile][-len(cards) :] == cards
    assert state.placed == len(cards)


def test_85_on_83_after_the_sequence_is_illegal() -> None:
    hand = [98, 97, 88, 83, 85, 40, 41, 42]
    state = deal([hand])
    for card in (98, 97, 88, 83):
        place(state, card, DOWN2)
    with pytest.raises(IllegalAction):
        place(state, 85, DOWN2)
    assert {"card": 85, "pile": DOWN2} not in GAME.legal(state, 0)


@pytest.mark.parametrize(
    "action",
    [
        {"card": 50},
        {"card": 50, "pile": 4},
        {"card": 50, "pile": "0"},
        {"card": True, "pile": 0},
        [50, 0],
        "End",
        None,
        {"card": 50, "pile": 0, "x": 1},
        {"card": 7, "pile": 0},
    ],
)
def test_malformed_actions(action: Any) -> None:
    state = deal([[50, 51, 52, 53, 54, 55, 56], filler(7, set(range(50, 57)), 60, 90)])
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, action)


def test_only_the_active_seat_acts() -> None:
    state = deal([[50, 51, 52, 53, 54, 55], [60, 61, 62, 63, 64, 65], [70, 71, 72, 73, 74, 75]])
    assert GAME.to_act(state) == (0,)
    assert GAME.legal(state, 1) == []
    with pytest.raises(IllegalAction):
        GAME.apply(state, 1, {"card": 60, "pile": 0})


# The turn ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pro, deck_empty, minimum",
    [(False, False, 2), (False, True, 1), (True, False, 3), (True, True, 1)],
)
def test_minimum(pro: bool, deck_empty: bool, minimum: int) -> None:
    hand = [90, 91, 92, 93, 94]
    others = [95, 96, 97, 98, 99]
    state = deal([hand, others], tops=(89, 1, 100, 100), deck_empty=deck_empty, pro=pro)
    assert state.minimum == minimum
    assert GAME.view(state, 0)["minimum"] == minimum
    for i in range(minimum):
        assert END not in GAME.legal(state, 0)
        with pytest.raises(IllegalAction):
            end(state)
        place(state, hand[i], UP0)
    assert GAME.legal(state, 0)[-1] == END
    end(state)
    assert state.active == 1


def test_minimum_counts_the_draw_pile_at_the_start_of_the_turn() -> None:
    # one card left to draw: the minimum is still 2 this turn, 1 for the next player
    state = deal([[90, 91, 92, 93, 94, 95, 96], [97, 98, 99]], tops=(89, 1, 100, 100), deck_empty=True)
    card = state.piles[0].pop(0)  # move one card from a pile to the draw pile
    state.placed_total -= 1
    state.placed_by[0] -= 1
    state.deck = [card]
    _start_turn(state)
    assert state.minimum == 2
    place(state, 90, UP0)
    place(state, 91, UP0)
    end(state)
    assert state.hands[0] == [card, 92, 93, 94, 95, 96]  # drew what was left
    assert state.deck == [] and state.minimum == 1


@pytest.mark.parametrize("placed", [2, 3, 5])
def test_drawing_the_number_placed(placed: int) -> None:
    hand = [50, 51, 52, 53, 54, 55]
    state = deal(
        [hand, [60, 61, 62, 63, 64, 65], [70, 71, 72, 73, 74, 75]], tops=(30, 1, 99, 100), draw=[10, 11, 12, 13, 14, 15]
    )
    deck_before = len(state.deck)
    for card in hand[:placed]:
        place(state, card, UP0)
    end(state)
    assert state.hands[0] == sorted(hand[placed:] + [10, 11, 12, 13, 14, 15][:placed])
    assert len(state.deck) == deck_before - placed
    assert state.active == 1 and state.turn == 2 and state.placed == 0
    assert GAME.invariants(state) == []


def test_playing_out_the_hand_ends_the_turn_by_itself() -> None:
    state = deal([[90, 91], [95, 96, 97]], tops=(89, 1, 92, 100), deck_empty=True)
    place(state, 90, UP0)
    assert GAME.legal(state, 0) == [{"card": 91, "pile": p} for p in range(4)] + [END]
    place(state, 91, UP0)  # the hand is empty: nothing left to decide
    assert state.active == 1 and not state.over


def test_empty_hands_are_skipped() -> None:
    state = deal([[90], [], [95, 96], []], tops=(89, 1, 91, 100), deck_empty=True)
    assert state.minimum == 1
    place(state, 90, UP0)  # seat 0 empties its hand: the turn ends
    assert state.active == 2
    place(state, 95, UP0)
    end(state)
    assert state.active == 2  # seats 3, 0, 1 are empty: seat 2 again
    assert [t["seat"] for t in state.turn_log] == [0, 2]


# End and score -------------------------------------------------------------------------


def test_game_ends_before_a_turn_without_a_sequence_of_the_minimum() -> None:
    # seat 1 can place one card (95) but not two in a row
    state = deal([[91, 92, 93, 94, 96, 97], [95, 40, 41, 42, 43, 44], [60, 61, 62, 63, 64, 65]], tops=(89, 90, 5, 3))
    place(state, 91, UP1)
    place(state, 92, UP1)
    end(state)
    assert GAME.is_over(state) and GAME.to_act(state) == ()
    assert state.end_reason == "stuck" and state.placed == 0
    result = GAME.result(state)
    assert result.details["cards_left"] == 98 - state.placed_total
    assert result.details["turns"] == 1
    assert result.scores == [result.details["cards_left"]] * 3 and result.ranks == [1, 1, 1]


@pytest.mark.parametrize(
    "hand, over",
    [
        ([95, 40, 41, 42, 43, 44], True),  # one playable card
        ([95, 92, 40, 41, 42, 43], False),  # 92 then 95
        ([95, 85, 40, 41, 42, 43], False),  # 95 then the trick 85: a sequence only
        ([45, 41, 42, 43, 44, 46], True),  # nothing playable at all
    ],
)
def test_sequence_of_the_minimum_at_the_start(hand: list[int], over: bool) -> None:
    state = deal([hand, filler(6, set(hand), 60, 80)], tops=(90, 91, 10, 11))
    assert GAME.is_over(state) is over
    assert GAME.to_act(state) == (() if over else (0,))


def test_game_ends_mid_turn_when_stuck() -> None:
    state = deal([[95, 92, 40, 41, 42, 43], filler(6, set(), 60, 80)], tops=(90, 98, 10, 11))
    assert not state.over  # 92 then 95 would do
    before = state.placed_total
    place(state, 95, UP0)  # 92 fits nowhere now: stuck before the minimum
    assert GAME.is_over(state) and state.end_reason == "stuck"
    assert state.placed_total == before + 1  # the card placed stays placed
    assert GAME.result(state).details["cards_left"] == 98 - before - 1
    assert GAME.result(state).details["turns"] == 1


def test_win_at_98_placed() -> None:
    state = deal([[51], []], tops=(50, 1, 52, 100), deck_empty=True)
    assert state.placed_total == 97
    place(state, 51, UP0)
    result = GAME.result(state)
    assert GAME.is_over(state) and state.end_reason == "won"
    assert result.scores == [0.0, 0.0] and result.ranks == [1, 1] and result.lower_is_better
    assert result.details["won"] and result.details["excellent"] and not result.details["lost_by_fire"]
    assert GAME.seat_stats(result, 1) == {"cards_left": 0.0, "won": 1.0, "excellent": 1.0, "lost_by_fire": 0.0}


# On Fire -------------------------------------------------------------------------------


def fire_deal(seats: int = 3, **kw: Any) -> TheGameState:
    hands = [
        [40, 44, 45, 48, 50, 52],
        [46, 60, 61, 62, 63, 64],
        [47, 70, 71, 72, 73, 74],
        [53, 80, 81, 82, 83, 84],
        [54, 85, 86, 87, 88, 89],
    ][:seats]
    return deal(hands, tops=(30, 1, 99, 100), on_fire=True, **kw)


def test_fire_card_covered_by_the_placer() -> None:
    state = fire_deal()
    place(state, 44, UP0)
    assert [f["card"] for f in state.fire] == [44]
    place(state, 45, UP0)
    assert state.fire == []
    end(state)
    assert not state.over and state.active == 1


def test_fire_card_covered_by_the_next_player() -> None:
    state = fire_deal()
    place(state, 40, UP0)
    place(state, 44, UP0)
    end(state)
    view = GAME.view(state, 2)
    assert view["fire"] == [{"card": 44, "pile": 0, "placed_turn": 1, "deadline_turn": 2, "deadline_seat": 1}]
    place(state, 46, UP0)
    place(state, 60, UP1)
    end(state)
    assert not state.over and state.fire == [] and state.active == 2


def test_fire_card_not_covered_loses() -> None:
    state = fire_deal()
    place(state, 40, UP0)
    place(state, 44, UP0)
    end(state)
    place(state, 60, UP1)
    place(state, 61, UP1)
    assert not state.over  # the deadline is the end of the turn
    end(state)
    result = GAME.result(state)
    assert state.over and state.end_reason == "fire"
    assert result.details["lost_by_fire"] and result.details["cards_left"] == 98 - state.placed_total
    assert GAME.seat_stats(result, 0)["lost_by_fire"] == 1.0


def test_fire_cards_are_plain_without_the_option() -> None:
    state = deal([[40, 44, 45, 48, 50, 52], [46, 60, 61, 62, 63, 64]], tops=(30, 1, 99, 100))
    place(state, 40, UP0)
    place(state, 44, UP0)
    end(state)
    assert state.fire == [] and GAME.view(state, 1)["fire"] == []
    place(state, 60, UP1)
    place(state, 61, UP1)
    end(state)
    assert not state.over


@pytest.mark.parametrize("cover", [True, False])
def test_fire_solo_deadline_is_the_next_own_turn(cover: bool) -> None:
    state = fire_deal(seats=1, draw=[90, 91, 92])
    place(state, 40, UP0)
    place(state, 44, UP0)
    end(state)
    assert not state.over and state.active == 0 and state.turn == 2
    assert GAME.view(state, 0)["fire"][0]["deadline_seat"] == 0
    if cover:
        place(state, 45, UP0)
    else:
        place(state, 90, UP1)
    place(state, 91, UP1)
    end(state)
    assert state.over is (not cover)
    assert GAME.result(state).details["lost_by_fire"] is (not cover)


@pytest.mark.parametrize("cover", [True, False])
def test_fire_deadline_passes_over_a_skipped_player(cover: bool) -> None:
    state = deal([[62, 66], [], [67, 90]], tops=(60, 1, 61, 100), deck_empty=True, on_fire=True)
    place(state, 66, UP0)
    end(state)
    assert state.active == 2  # seat 1 has no cards: seat 2 takes the next turn
    assert GAME.view(state, 0)["fire"][0]["deadline_seat"] == 2
    place(state, 67 if cover else 90, UP0 if cover else UP1)
    end(state)
    assert state.over is (not cover)
    assert (state.end_reason == "fire") is (not cover)


def test_fire_deadline_seat_before_the_turn_ends() -> None:
    state = deal([[62, 66], [], [67, 90]], tops=(60, 1, 61, 100), deck_empty=True, on_fire=True)
    place(state, 66, UP0)  # still seat 0's turn: the next turn is seat 2's
    assert state.active == 0
    assert GAME.view(state, 2)["fire"][0]["deadline_seat"] == 2


def test_stuck_with_a_due_fire_card_is_stuck_not_fire() -> None:
    hands = [[40, 44, 50, 51, 52, 53], [96, 20, 21, 23, 24, 25], [60, 61, 62, 63, 64, 65]]
    state = deal(hands, tops=(30, 95, 5, 3), on_fire=True)
    place(state, 40, UP0)
    place(state, 44, UP0)
    end(state)  # seat 1 can place 96 only: no sequence of 2
    result = GAME.result(state)
    assert state.over and state.end_reason == "stuck" and not result.details["lost_by_fire"]


def test_fire_card_as_the_98th_card_wins() -> None:
    state = deal([[77], []], tops=(76, 1, 78, 100), deck_empty=True, on_fire=True)
    assert state.placed_total == 97
    place(state, 77, DOWN2)
    result = GAME.result(state)
    assert state.over and state.end_reason == "won"
    assert result.details["won"] and not result.details["lost_by_fire"] and result.scores == [0.0, 0.0]


def test_two_fire_cards_uncovered_at_once() -> None:
    hands = [[22, 77, 50, 51, 52, 53], [23, 60, 61, 62, 63, 64], [78, 70, 71, 72, 73, 74]]
    state = deal(hands, tops=(20, 30, 80, 99), on_fire=True)
    place(state, 22, UP0)
    place(state, 77, DOWN2)
    end(state)
    assert sorted(f["card"] for f in GAME.view(state, 1)["fire"]) == [22, 77]
    place(state, 23, UP0)  # covers 22 only
    place(state, 60, UP1)
    assert [f["card"] for f in state.fire] == [77]
    end(state)
    assert state.over and state.end_reason == "fire"


def test_fire_cards_keep_their_own_deadlines() -> None:
    hands = [[22, 50, 51, 52, 53, 54], [23, 33, 60, 61, 62, 63], [34, 70, 71, 72, 73, 74]]
    state = deal(hands, tops=(20, 30, 99, 100), on_fire=True)
    place(state, 22, UP0)
    place(state, 50, UP1)  # pile 1: 30 -> 50
    end(state)
    place(state, 23, UP0)  # covers 22 (deadline turn 2)
    place(state, 33, UP0)  # a new fire card: deadline turn 3
    end(state)
    assert not state.over
    assert GAME.view(state, 2)["fire"] == [
        {"card": 33, "pile": 0, "placed_turn": 2, "deadline_turn": 3, "deadline_seat": 2}
    ]
    place(state, 34, UP0)
    place(state, 70, DOWN2)
    end(state)
    assert not state.over and state.fire == []


# Claims --------------------------------------------------------------------------------


def test_claims_are_parsed_replaced_and_seen_by_all() -> None:
    state = deal([[50, 51, 52, 53, 54, 55], [60, 61, 62, 63, 64, 65], [70, 71, 72, 73, 74, 75]])
    place(state, 50, UP0)
    GAME.apply_extras(state, 0, {"claims": [3, 1]})
    for seat in range(3):
        assert GAME.view(state, seat)["claims"] == [[1, 3], [], []]
    GAME.apply_extras(state, 0, {"claims": [2]})
    assert GAME.view(state, 2)["claims"] == [[2], [], []]
    GAME.apply_extras(state, 0, {})  # no claims field: no change
    assert state.claims[0] == [2]
    GAME.apply_extras(state, 0, {"claims": []})
    assert state.claims[0] == []


@pytest.mark.parametrize(
    "claims",
    ["1", 1, None, {"0": 1}, [4], [-1], [0, 0], [True], [1.0], ["1"], [[1]], [0, 1, 2, 3, 0]],
)
def test_malformed_claims(claims: Any) -> None:
    state = deal([[50, 51, 52, 53, 54, 55], [60, 61, 62, 63, 64, 65]])
    with pytest.raises(InvalidExtras):
        GAME.apply_extras(state, 0, {"claims": claims})
    assert state.claims == [[], []]


@pytest.mark.parametrize("claims, ok", [(None, True), ([], True), ([1], False), ("x", False)])
def test_claims_with_communication_none(claims: Any, ok: bool) -> None:
    state = deal([[50, 51, 52, 53, 54, 55], [60, 61, 62, 63, 64, 65]], communication="none")
    if ok:
        GAME.apply_extras(state, 0, {"claims": claims})
    else:
        with pytest.raises(InvalidExtras):
            GAME.apply_extras(state, 0, {"claims": claims})
    assert state.claims == [[], []]


# Views and hidden information ----------------------------------------------------------


def test_view_shows_what_the_rules_allow() -> None:
    state = GAME.setup(3, 11, {"on_fire": True})
    view = GAME.view(state, 1)
    assert set(view) == {
        "seat",
        "players",
        "turn",
        "turn_number",
        "active",
        "your_turn",
        "hand",
        "hand_sizes",
        "draw_pile",
        "piles",
        "minimum",
        "placed_this_turn",
        "cards_left",
        "communication",
        "claims",
        "fire",
        "over",
    }
    assert view["hand"] == state.hands[1] and view["hand_sizes"] == [6, 6, 6]
    assert view["draw_pile"] == 80 and view["active"] == 0 and not view["your_turn"]
    text = json.dumps(view)
    for seat in (0, 2):
        assert json.dumps(state.hands[seat])[1:-1] not in text
    assert json.loads(text) == view


def random_states(count: int, seed: int) -> list[tuple[TheGameState, int]]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        seats = rng.randint(1, 5)
        state = GAME.setup(seats, rng.randrange(10**6), {"on_fire": rng.random() < 0.5})
        for _ in range(rng.randrange(60)):
            if GAME.is_over(state):
                break
            (s,) = GAME.to_act(state)
            legal = GAME.legal(state, s)
            # play cheap cards so that states reach late in the game
            action = min(legal, key=lambda a: 0 if a == END else _gap(state, a))
            if rng.random() < 0.2:
                action = rng.choice(legal)
            GAME.apply(state, s, action)
        out.append((state, rng.randrange(seats)))
    return out


def _gap(state: TheGameState, action: dict[str, int]) -> int:
    top = state.tops[action["pile"]]
    return (action["card"] - top) if action["pile"] < 2 else (top - action["card"])


def test_redeal_hidden_keeps_the_view_and_changes_hidden_cards() -> None:
    changed = 0
    rng = random.Random(5)
    for state, seat in random_states(150, 3):
        before = GAME.view(state, seat)
        other = GAME.redeal_hidden(state, seat, rng)
        assert GAME.view(other, seat) == before
        assert GAME.view(state, seat) == before  # the original is untouched
        assert GAME.invariants(other) == []
        if other.deck != state.deck or other.hands != state.hands:
            changed += 1
        if not GAME.is_over(other):  # the copy can be played on
            (s,) = GAME.to_act(other)
            assert GAME.legal(other, s)
            GAME.apply(other, s, GAME.legal(other, s)[0])
    assert changed > 100


def test_other_hands_and_draw_order_never_change_a_view() -> None:
    state = GAME.setup(4, 21, {})
    view = GAME.view(state, 2)
    state.hands[0], state.hands[1] = state.hands[1], state.hands[0]
    state.deck.reverse()
    assert GAME.view(state, 2) == view


# Playouts ------------------------------------------------------------------------------


OPTION_SETS = [
    {"pro": pro, "reduced_hand": red, "on_fire": fire, "communication": comm}
    for pro, red, fire, comm in itertools.product([False, True], [False, True], [False, True], ["claims", "none"])
]


def playout(seats: int, seed: int, options: dict[str, Any], check: bool = False) -> list[Any]:
    state = GAME.setup(seats, seed, options)
    rng = random.Random(seed)
    trace: list[Any] = []
    for _ in range(2000):
        if GAME.is_over(state):
            break
        (seat,) = GAME.to_act(state)
        view = GAME.view(state, seat)
        legal = GAME.legal(state, seat)
        assert legal
        if check:
            assert json.loads(json.dumps(view)) == view
            assert json.loads(json.dumps(legal)) == legal
        action = rng.choice(legal)
        trace.append((seat, action))
        GAME.apply(state, seat, action)
        if options["communication"] == "claims" and rng.random() < 0.3:
            GAME.apply_extras(state, seat, {"claims": sorted(rng.sample(range(4), rng.randint(0, 2)))})
        if check:
            assert GAME.invariants(state) == []
    assert GAME.is_over(state)
    result = GAME.result(state)
    assert json.loads(json.dumps(result.to_json())) == result.to_json()
    trace.append(result.to_json())
    return trace


@pytest.mark.parametrize("seats", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_random_playouts(seats: int, options: dict[str, Any]) -> None:
    for seed in range(3):
        assert playout(seats, seed, options, check=True) == playout(seats, seed, options)


def test_cheap_playouts_reach_the_end_game() -> None:
    # random play ends early; play the cheapest card to exercise empty draw piles and wins
    reasons = set()
    for seed in range(40):
        state = GAME.setup(2 + seed % 4, seed, {"on_fire": seed % 2 == 0})
        while not GAME.is_over(state):
            (s,) = GAME.to_act(state)
            legal = GAME.legal(state, s)
            cards = [a for a in legal if a != END]
            best = min(cards, key=lambda a: _gap(state, a)) if cards else END
            if END in legal and (not cards or _gap(state, best) > 2):
                best = END
            GAME.apply(state, s, best)
            assert GAME.invariants(state) == []
        reasons.add(state.end_reason)
        assert len(state.deck) == 0 or state.end_reason != "won"
    assert "stuck" in reasons


# Sample bots ---------------------------------------------------------------------------


def bot_playout(strategy: str, seats: int, seed: int, options: dict[str, Any]) -> TheGameState:
    from sample_bots import the_game as bots

    act = bots.STRATEGIES[strategy]
    state = GAME.setup(seats, seed, options)
    decision = 0
    while not GAME.is_over(state):
        (seat,) = GAME.to_act(state)
        message = {
            "protocol": 1,
            "type": "act",
            "tournament": "t",
            "match": f"m{seed}",
            "game": "the_game",
            "options": options,
            "seat": seat,
            "players": [strategy] * seats,
            "decision": decision,
            "deadline_ms": 1000,
            "state": GAME.view(state, seat),
            "legal": GAME.legal(state, seat),
        }
        reply = json.loads(json.dumps(act(message)))
        assert reply["action"] in message["legal"]
        GAME.apply(state, seat, reply["action"])
        if "claims" in reply:
            assert options["communication"] == "claims"
            GAME.apply_extras(state, seat, {"claims": reply["claims"]})
        decision += 1
    return state


@pytest.mark.parametrize("strategy", ["random", "heuristic", "greedy"])
@pytest.mark.parametrize("options", OPTION_SETS[::3], ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_sample_bots_play_legally(strategy: str, options: dict[str, Any]) -> None:
    for seats in (1, 3, 5):
        bot_playout(strategy, seats, seats, options)


def test_heuristic_beats_random() -> None:
    def mean_left(strategy: str) -> float:
        results = [GAME.result(bot_playout(strategy, 3, seed, opts())) for seed in range(20)]
        return sum(r.details["cards_left"] for r in results) / len(results)

    assert mean_left("heuristic") < 20 < 60 < mean_left("random")


def test_heuristic_covers_a_due_fire_card() -> None:
    from sample_bots import the_game as bots

    state = fire_deal()
    place(state, 40, UP0)
    place(state, 44, UP0)
    end(state)
    for decision in range(10):
        if state.over or state.active != 1:
            break
        message = {
            "options": opts(on_fire=True),
            "match": "m",
            "seat": 1,
            "decision": decision,
            "state": GAME.view(state, 1),
            "legal": GAME.legal(state, 1),
        }
        GAME.apply(state, 1, bots.heuristic(message)["action"])
    assert not state.over and state.active == 2 and state.tops[0] != 44
