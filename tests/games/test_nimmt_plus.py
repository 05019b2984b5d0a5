"""Rule scenarios for 6 nimmt! Plus (RULES.md section 3), the rulebook example first."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from referee.games.base import IllegalAction, OptionError
from referee.games.nimmt_plus.rules import GAME, HEADS, NimmtState, heads
from tests.support.games import roundtrip

pytestmark = pytest.mark.parallel

VARIANTS = ("plus", "plus_dealt_zeros", "zeros_negative", "simple")


def build(
    hands: list[list[int]],
    rows: list[list[int]],
    variant: str = "plus",
    piles: list[list[int]] | None = None,
    totals: list[int] | None = None,
    hand_number: int = 1,
    turn: int = 0,
    zero_heads: int = 0,
) -> NimmtState:
    """An exact mid-hand state; every card not placed is in the hidden deck."""
    seats = len(hands)
    piles = piles or [[] for _ in range(seats)]
    state = NimmtState(
        seats=seats,
        variant=variant,
        zero_heads=zero_heads,
        rng=random.Random(0),
        hands_total=seats,
        hand_number=hand_number,
    )
    state.hands = [sorted(h) for h in hands]
    state.rows = [list(r) for r in rows]
    state.piles = [list(p) for p in piles]
    state.pile_heads = [sum(HEADS[c] for c in p) for p in piles]
    state.rows_taken = [0] * seats
    state.pending = [None] * seats
    state.history = []
    state.turn = state.starter = turn
    state.totals = list(totals or [0] * seats)
    state.hand_log = [
        {"hand": i + 1, "scores": list(state.totals) if i == 0 else [0] * seats} for i in range(hand_number - 1)
    ]
    used = [c for group in (hands, rows, piles) for cards in group for c in cards]
    state.deck = [c for c in range(1, 105) if c not in used] + [0] * (7 - used.count(0))
    assert GAME.invariants(state) == []
    return state


def play_turn(state: NimmtState, choices: dict[int, list[int]]) -> NimmtState:
    """Apply every seat's choice in seat order (as the referee does)."""
    for seat in sorted(choices):
        state = GAME.apply(state, seat, choices[seat])
    assert GAME.invariants(state) == []
    return state


def random_playout(seats: int, seed: int, options: dict[str, Any]) -> tuple[NimmtState, list]:
    """A seeded random match; returns the final state and the trace."""
    state = GAME.setup(seats, seed, options)
    rng = random.Random(seed)
    trace = []
    while not GAME.is_over(state):
        for seat in GAME.to_act(state):
            action = rng.choice(GAME.legal(state, seat))
            trace.append((seat, action))
            state = GAME.apply(state, seat, action)
    return state, trace


# The rulebook example -----------------------------------------------------------------


def test_rulebook_example_zero_cards_are_placed_first():
    # 5+6, 27, 49+0, 53+0 are placed 49, 53, 5, 6, 27.
    state = build(
        hands=[[5, 6, 80], [27, 81], [0, 49, 82], [0, 53, 83]],
        rows=[[3], [25], [41, 42, 43, 44, 45], [70]],
    )
    state = play_turn(state, {0: [5, 6], 1: [27], 2: [0, 49], 3: [0, 53]})
    turn = state.history[-1]
    assert [(p["card"], p["seat"]) for p in turn["placements"]] == [(49, 2), (53, 3), (5, 0), (6, 0), (27, 1)]
    # 49 is the 6th card of the 45 row: seat 2 takes it; 53 then follows 49.
    assert turn["placements"][0]["took"] == [41, 42, 43, 44, 45]
    assert state.rows == [[3, 5, 6], [25, 27], [49, 53], [70]]
    assert state.piles[2] == [0, 41, 42, 43, 44, 45]
    assert state.piles[3] == [0]
    assert turn["plays"] == [
        {"seat": 0, "cards": [5, 6]},
        {"seat": 1, "cards": [27]},
        {"seat": 2, "cards": [0, 49]},
        {"seat": 3, "cards": [0, 53]},
    ]
    assert state.hands == [[80], [81], [82], [83]]


def test_zero_pairs_ascending_among_themselves_then_the_rest():
    # Without the 0, 47 would come first and take the row; with it, 49 takes it.
    state = build(
        hands=[[47, 90], [0, 49, 91]],
        rows=[[3], [25], [41, 42, 43, 44, 45], [70]],
    )
    state = play_turn(state, {0: [47], 1: [0, 49]})
    assert [p["card"] for p in state.history[-1]["placements"]] == [49, 47]
    assert state.piles[1] == [0, 41, 42, 43, 44, 45]
    # 47 is below 49 and above 45-less rows: it goes after 25 (highest end below 47).
    assert state.rows == [[3], [25, 47], [49], [70]]


# Placement ----------------------------------------------------------------------------

PLACEMENTS = [
    # rows, card, expected rows, cards taken
    ([[10], [20], [30], [40]], 25, [[10], [20, 25], [30], [40]], []),
    ([[10], [20], [30], [40]], 99, [[10], [20], [30], [40, 99]], []),
    # low card: the row with the highest end, taken only as its 6th card
    ([[10], [20], [30], [40, 41]], 5, [[10], [20], [30], [40, 41, 5]], []),
    ([[10], [20], [30], [60, 61, 62, 63, 64]], 5, [[10], [20], [30], [5]], [60, 61, 62, 63, 64]),
    # the 6th card takes the 5
    ([[10, 11, 12, 13, 14], [20], [30], [40]], 15, [[15], [20], [30], [40]], [10, 11, 12, 13, 14]),
    # the highest end below the card wins even if another row is longer
    (
        [[10, 11, 12, 13, 14], [17], [30], [40]],
        18,
        [[10, 11, 12, 13, 14], [17, 18], [30], [40]],
        [],
    ),
]


@pytest.mark.parametrize("rows,card,after,took", PLACEMENTS)
@pytest.mark.parametrize("variant", ["plus", "simple"])
def test_placement(rows, card, after, took, variant):
    state = build(hands=[[card, 101], [0, 102]], rows=rows, variant=variant)
    state = play_turn(state, {0: [card], 1: [0]})  # in simple, seat 1 passes with its 0
    placements = [p for turn in state.history for p in turn["placements"]]
    assert placements == [{"seat": 0, "card": card, "row": placements[0]["row"], "took": took}]
    assert state.rows == after
    assert state.piles[0] == took


SIXTH_CARD_SCORES = [
    # variant, zero_heads, pile heads of seat 0 after taking 10, 11, 55, 20, 15 with 0+x
    ("plus", 0, 3 + 5 + 7 + 3 + 2),
    ("plus", 3, 3 + 5 + 7 + 3 + 2 + 3),
    ("plus_dealt_zeros", 2, 3 + 5 + 7 + 3 + 2 + 2),
    ("zeros_negative", 3, 3 + 5 + 7 + 3 + 2),
]


@pytest.mark.parametrize("variant,zero_heads,expected", SIXTH_CARD_SCORES)
def test_sixth_card_takes_the_five_and_scores_their_heads(variant, zero_heads, expected):
    state = build(
        hands=[[0, 60, 90], [4, 91, 92]],
        rows=[[10, 11, 55, 20, 15], [1], [2], [3]],
        variant=variant,
        zero_heads=zero_heads,
    )
    state = play_turn(state, {0: [0, 60], 1: [4]})
    assert state.piles[0] == [0, 10, 11, 55, 20, 15]
    assert state.rows[0] == [60]
    view = GAME.view(state, 1)
    assert view["points"][0] == {"cards": [0, 10, 11, 55, 20, 15], "heads": expected}
    assert view["points"][1] == {"cards": [], "heads": 0}


@pytest.mark.parametrize("n,expected", [(1, 1), (5, 2), (10, 3), (11, 5), (55, 7), (100, 3), (104, 1), (99, 5)])
def test_bull_heads(n, expected):
    assert heads(n) == expected
    assert sum(heads(c) for c in range(1, 105)) == 171


@pytest.mark.parametrize("choice", [[0], [0, 0]])
@pytest.mark.parametrize("variant", ["plus", "zeros_negative"])
def test_zero_alone_and_zero_pair_go_to_the_pile_never_a_row(choice, variant):
    rows = [[10], [20], [30], [40]]
    state = build(hands=[[0, 0, 50], [60, 61]], rows=rows, variant=variant, zero_heads=4)
    state = play_turn(state, {0: choice, 1: [61]})
    assert state.rows == [[10], [20], [30], [40, 61]]
    assert state.piles[0] == choice
    assert [p["card"] for p in state.history[0]["placements"]] == [61]
    expected = 4 * len(choice) if variant == "plus" else 0
    assert GAME.view(state, 0)["points"][0]["heads"] == expected


# Deal ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seats", range(2, 8))
@pytest.mark.parametrize("variant", VARIANTS)
def test_deal_sizes_and_dealt_zeros(seats, variant):
    for seed in range(5):
        state = GAME.setup(seats, seed, {"variant": variant})
        size = 12 if variant == "simple" else 15
        assert [len(h) for h in state.hands] == [size] * seats
        assert all(len(r) == 1 for r in state.rows)
        assert all(c != 0 for r in state.rows for c in r)  # zeros are shuffled in after
        if variant == "plus_dealt_zeros":
            given = 2 if seats <= 3 else 1
            assert all(h.count(0) >= given for h in state.hands)
            assert state.deck.count(0) + sum(h.count(0) for h in state.hands) == 7
        assert GAME.invariants(state) == []


def test_dealt_zeros_seven_players_take_every_zero():
    state = GAME.setup(7, 3, {"variant": "plus_dealt_zeros"})
    assert [h.count(0) for h in state.hands] == [1] * 7
    assert state.deck.count(0) == 0


# Turns --------------------------------------------------------------------------------


def test_simultaneous_choices_are_hidden_until_all_have_chosen():
    state = build(hands=[[5, 6, 80], [27, 81], [0, 49, 82]], rows=[[3], [25], [45], [70]])
    before = [GAME.view(state, s) for s in range(3)]
    assert GAME.to_act(state) == (0, 1, 2)
    state = GAME.apply(state, 0, [5, 6])
    assert GAME.to_act(state) == (1, 2)
    assert GAME.legal(state, 0) == []
    for s in (1, 2):
        assert GAME.view(state, s) == before[s]
    after0 = GAME.view(state, 0)
    assert after0["hand"] == [5, 6, 80] and after0["your_turn"] is False
    assert after0["to_act"] == [0, 1, 2]
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, [80])


def test_a_seat_without_cards_is_not_asked():
    state = build(hands=[[5, 6], [27, 81, 82]], rows=[[3], [25], [45], [70]])
    state = play_turn(state, {0: [5, 6], 1: [27]})
    assert state.hands == [[], [81, 82]]
    assert GAME.to_act(state) == (1,)
    assert GAME.legal(state, 0) == []
    assert GAME.view(state, 0)["to_act"] == [1]
    state = play_turn(state, {1: [81]})
    assert GAME.to_act(state) == (1,)
    state = play_turn(state, {1: [82]})
    assert state.hand_number == 2  # the hand ended, the next was dealt


def test_simple_turn_order_and_the_zero_pass():
    state = build(
        hands=[[0, 11], [12, 13], [14, 15]],
        rows=[[3], [25], [45], [70]],
        variant="simple",
    )
    assert GAME.to_act(state) == (0,)
    assert GAME.legal(state, 0) == [[0], [11]]
    assert GAME.legal(state, 1) == []
    state = GAME.apply(state, 0, [0])  # pass: nothing placed
    assert state.rows == [[3], [25], [45], [70]]
    assert state.piles[0] == [0]
    assert state.history[-1]["placements"] == []
    assert GAME.to_act(state) == (1,)
    view = GAME.view(state, 2)
    assert view["turn"] == 1 and view["to_act"] == [1] and view["your_turn"] is False
    with pytest.raises(IllegalAction):
        GAME.apply(state, 2, [14])
    state = GAME.apply(state, 1, [12])
    assert GAME.to_act(state) == (2,)
    state = GAME.apply(state, 2, [14])
    assert GAME.to_act(state) == (0,)


SIMPLE_STARTERS = [
    # totals before the last play (seat 0 plays 4 onto a full row: +5 heads), next starter
    ([0, 0, 0], 0),  # seat 0 takes: 5 heads
    ([0, 9, 0], 1),
    ([0, 5, 5], 0),  # 5, 5, 5 tie: lowest seat
    ([0, 5, 6], 2),
]


@pytest.mark.parametrize("totals,starter", SIMPLE_STARTERS)
def test_simple_later_hands_start_with_most_penalty_points(totals, starter):
    state = build(
        hands=[[4], [], []],
        rows=[[31, 32, 34, 36, 37], [7], [8], [9]],
        variant="simple",
        totals=totals,
        hand_number=2,
        turn=0,
    )
    state = GAME.apply(state, 0, [4])
    assert state.totals == [totals[0] + 5, totals[1], totals[2]]
    assert state.hand_number == 3
    assert GAME.to_act(state) == (starter,)
    assert GAME.view(state, 0)["turn"] == starter


def test_simple_first_hand_starts_at_seat_zero_clockwise():
    state = GAME.setup(4, 11, {"variant": "simple"})
    order = []
    for _ in range(8):
        (seat,) = GAME.to_act(state)
        order.append(seat)
        state = GAME.apply(state, seat, GAME.legal(state, seat)[-1])
    assert order == [0, 1, 2, 3, 0, 1, 2, 3]


# Legal and illegal --------------------------------------------------------------------


def test_legal_lists_singles_then_distinct_pairs():
    state = build(hands=[[0, 0, 7, 9], [50]], rows=[[3], [25], [45], [70]])
    assert GAME.legal(state, 0) == [[0], [7], [9], [0, 0], [0, 7], [0, 9], [7, 9]]
    assert GAME.legal(state, 1) == [[50]]


ILLEGAL = [
    [8],  # not in hand
    [9, 7],  # not ascending
    [7, 7],  # one 7 only
    [0, 0],  # one 0 only
    [0, 7, 9],  # three cards
    [],
    7,
    "7",
    [7.0],
    [True],
    {"cards": [7]},
]


@pytest.mark.parametrize("action", ILLEGAL)
def test_illegal_actions_raise(action):
    state = build(hands=[[0, 7, 9], [50]], rows=[[3], [25], [45], [70]])
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, action)
    assert GAME.invariants(state) == []
    assert state.pending == [None, None]


def test_illegal_seat_and_simple_pairs():
    state = build(hands=[[7, 9], [50, 51]], rows=[[3], [25], [45], [70]], variant="simple")
    for seat, action in [(1, [50]), (5, [7]), (0, [7, 9])]:
        with pytest.raises(IllegalAction):
            GAME.apply(state, seat, action)


def test_options_are_checked():
    with pytest.raises(OptionError):
        GAME.setup(4, 1, {"variant": "classic"})
    with pytest.raises(OptionError):
        GAME.setup(4, 1, {"zero_heads": -1})
    with pytest.raises(OptionError):
        GAME.setup(8, 1, {})
    with pytest.raises(OptionError):
        GAME.setup(1, 1, {})


# Scoring and the match ----------------------------------------------------------------

RANKS = [
    ("plus", [10, 5, 5, 20], False, [2, 3, 3, 1]),
    ("plus_dealt_zeros", [10, 5, 5, 20], False, [2, 3, 3, 1]),
    ("zeros_negative", [10, 5, 5, 20], True, [3, 1, 1, 4]),
    ("simple", [10, 5, 5, 20], True, [3, 1, 1, 4]),
]


@pytest.mark.parametrize("variant,totals,lower,ranks", RANKS)
def test_scoring_sense_and_ranks(variant, totals, lower, ranks):
    state = build(
        hands=[[], [], [], [1]], rows=[[3], [25], [45], [70]], variant=variant, totals=totals, hand_number=4, turn=3
    )
    state = play_turn(state, {3: [1]})
    assert GAME.is_over(state)
    result = GAME.result(state)
    assert result.scores == totals
    assert result.lower_is_better is lower
    assert result.ranks == ranks
    assert GAME.to_act(state) == ()


@pytest.mark.parametrize("seats", range(2, 8))
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_match_is_one_hand_per_player(seats, variant):
    state, _ = random_playout(seats, seats * 31, {"variant": variant})
    result = GAME.result(state)
    hands = result.details["hands"]
    assert [h["hand"] for h in hands] == list(range(1, seats + 1))
    assert result.scores == [sum(h["scores"][s] for h in hands) for s in range(seats)]
    assert json.loads(json.dumps(result.to_json())) == result.to_json()
    for h in hands:
        assert all(len(x) == seats for x in h.values() if isinstance(x, list))
    stats = GAME.seat_stats(result, 0)
    assert set(stats) == {s.key for s in GAME.info.stats}


def test_same_seed_same_match():
    a, ta = random_playout(4, 5, {"variant": "plus"})
    b, tb = random_playout(4, 5, {"variant": "plus"})
    assert ta == tb
    assert GAME.result(a).to_json() == GAME.result(b).to_json()


# Views and the leak test --------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_views_are_json_and_redeal_hidden_keeps_them(variant):
    for seats in (2, 3, 5, 7):
        state = GAME.setup(seats, seats, {"variant": variant, "zero_heads": 1})
        rng = random.Random(seats)
        check = random.Random(-seats)  # which decisions are checked: one in six, at any point of a turn
        changed = 0
        step = 0
        while not GAME.is_over(state):
            for seat in GAME.to_act(state):
                if check.random() < 1 / 6:
                    for s in range(seats):
                        view = GAME.view(state, s)
                        assert roundtrip(view) == view
                        copy = GAME.redeal_hidden(state, s, random.Random(step))
                        assert GAME.view(copy, s) == view
                        assert GAME.invariants(copy) == []
                        assert GAME.to_act(copy) == GAME.to_act(state)
                        changed += copy.hands != state.hands or copy.pending != state.pending
                legal = GAME.legal(state, seat)
                assert roundtrip(legal) == legal
                state = GAME.apply(state, seat, rng.choice(legal))
                assert GAME.invariants(state) == []
                step += 1
        assert changed > 0


def test_view_shows_no_hidden_information():
    state = GAME.setup(4, 2, {"variant": "plus"})
    state = GAME.apply(state, 1, GAME.legal(state, 1)[0])
    view = GAME.view(state, 0)
    text = json.dumps(view)
    assert "pending" not in text and "deck" not in text
    assert view["hand"] == state.hands[0]
    assert view["hand_sizes"] == [15, 15, 15, 15]
    assert set(view) == {
        "variant",
        "lower_is_better",
        "zero_heads",
        "seats",
        "seat",
        "hand_number",
        "hands_total",
        "turn_number",
        "hand",
        "rows",
        "hand_sizes",
        "points",
        "totals",
        "hand_scores",
        "history",
        "previous_hand",
        "to_act",
        "your_turn",
        "turn",
    }
    assert view["previous_hand"] is None


def test_redeal_keeps_known_dealt_zeros():
    state = GAME.setup(3, 9, {"variant": "plus_dealt_zeros"})
    for i in range(20):
        copy = GAME.redeal_hidden(state, 0, random.Random(i))
        assert all(copy.hands[s].count(0) >= 2 for s in (1, 2))
        assert copy.hands[0] == state.hands[0]


def test_invariants_catch_a_lost_or_duplicated_card():
    state = GAME.setup(4, 1, {"variant": "plus"})
    state.hands[0].pop()
    assert GAME.invariants(state)
    state = GAME.setup(4, 1, {"variant": "plus"})
    state.rows[0].append(state.hands[1][-1])
    assert GAME.invariants(state)


# Views show the end of every hand (RULES.md section 3, "What a seat sees") -------------


def _replay_rows(start: list[list[int]], history: list[dict[str, Any]]) -> list[list[int]]:
    """The rows after ``history``'s placements, from the rows ``start``."""
    rows = [list(r) for r in start]
    for turn in history:
        for p in turn["placements"]:
            if p["took"]:
                assert rows[p["row"]] == p["took"]
                rows[p["row"]] = [p["card"]]
            else:
                rows[p["row"]].append(p["card"])
    return rows


@pytest.mark.parametrize("variant", VARIANTS)
def test_previous_hand_shows_every_turn_of_the_finished_hand(variant):
    """Seat 0 plays pairs and runs out early (or, in simple, the last seat plays last):
    turns it was never asked about are still shown to it in the next hand."""
    seats = 3
    state = GAME.setup(seats, 21, {"variant": variant})
    start_rows = GAME.view(state, 0)["rows"]
    dealt = [list(h) for h in state.hands]
    asked_last: dict[int, int] = {}
    while state.hand_number == 1:
        for s in GAME.to_act(state):
            legal = GAME.legal(state, s)
            asked_last[s] = GAME.view(state, s)["turn_number"]
            state = GAME.apply(state, s, legal[-1] if s == 0 else legal[0])
    views = [GAME.view(state, s) for s in range(seats)]
    prev = views[0]["previous_hand"]
    assert all(v["previous_hand"] == prev for v in views)
    assert prev["hand"] == 1 and views[0]["history"] == []
    history = prev["history"]
    for s in range(seats):
        played = sorted(c for t in history for p in t["plays"] if p["seat"] == s for c in p["cards"])
        assert played == dealt[s], f"seat {s}'s cards of hand 1 are not all shown"
    assert len(history) > asked_last[0], "seat 0 missed turns after its last decision"
    assert prev["rows"] == _replay_rows(start_rows, history)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_seat_is_shown_each_finished_hand_once_when_first_asked(variant):
    seats = 3
    state = GAME.setup(seats, 5, {"variant": variant})
    pick = random.Random(5)
    shown: dict[int, list[int]] = {s: [] for s in range(seats)}
    first_ask: dict[tuple[int, int], bool] = {}
    while not GAME.is_over(state):
        for s in GAME.to_act(state):
            view = GAME.view(state, s)
            prev = view["previous_hand"]
            first = (view["hand_number"], s) not in first_ask
            first_ask[(view["hand_number"], s)] = True
            assert (prev is not None) == (first and view["hand_number"] > 1), "shown at a seat's first decision only"
            if prev is not None:
                assert prev["hand"] == view["hand_number"] - 1
                shown[s].append(prev["hand"])
            legal = GAME.legal(state, s)
            state = GAME.apply(state, s, legal[pick.randrange(len(legal))])
    assert all(shown[s] == [1, 2] for s in range(seats))
    final = GAME.view(state, 0)
    assert final["previous_hand"] is None
    size = 12 if variant == "simple" else 15
    assert sum(len(p["cards"]) for t in final["history"] for p in t["plays"]) == seats * size
