"""Rule scenarios for Dieci (RULES.md section 4), the rulebook's three examples first."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from referee.bots.client.schema import errors, game_schema_name
from referee.games.base import IllegalAction, OptionError
from referee.games.dieci.rules import GAME, NONE, RANK_INDEX, RANKS, DieciState

pytestmark = pytest.mark.parallel


def build(
    hands: list[str | None],
    deck_top: tuple[str, ...] = (),
    tokens: list[int] | None = None,
    dealer: int = 0,
    manche: int = 1,
    out_in: dict[int, int] | None = None,
    **options: Any,
) -> DieciState:
    """A freshly dealt manche with exactly these cards (None = an eliminated seat);
    ``deck_top`` lists the deck's top cards, top first; ``out_in`` gives the manche in
    which each eliminated seat went out."""
    n = len(hands)
    state = GAME.setup(n, 0, options)
    state.tokens = list(tokens) if tokens else [3] * n
    state.dealer = dealer
    state.manche = manche
    state.order = [s for s in ((dealer - k) % n for k in range(1, n + 1)) if state.tokens[s] > 0]
    pool: dict[int, list[int]] = {r: [] for r in range(len(RANKS))}
    for c, r in enumerate(state.rank):
        pool[r].append(c)
    state.hand = [NONE] * n
    for s, name in enumerate(hands):
        assert (name is None) == (state.tokens[s] == 0)
        if name is not None:
            state.hand[s] = pool[RANK_INDEX[name]].pop()
    top = [pool[RANK_INDEX[name]].pop() for name in deck_top]
    state.deck = [c for r in pool for c in pool[r]] + top[::-1]
    state.used = []
    state.seen = [0 if c == NONE else 1 << c for c in state.hand]
    state.dealt = [None if c == NONE else RANKS[state.rank[c]] for c in state.hand]
    state.events = []
    state.log = []
    state.seq = 0
    for s, m in (out_in or {}).items():
        state.seq += 1
        state.elim_seq[s] = state.seq
        state.elim_manche[s] = m
    assert GAME.invariants(state) == []
    return state


def play(state: DieciState, *moves: tuple[int, str]) -> DieciState:
    """Apply (seat, action) pairs, checking each seat is the one to act."""
    for seat, action in moves:
        assert GAME.to_act(state) == (seat,), f"expected seat {seat}, got {GAME.to_act(state)}"
        state = GAME.apply(state, seat, action)
        assert GAME.invariants(state) == []
    return state


def cards(state: DieciState) -> list[str | None]:
    return [None if c == NONE else RANKS[state.rank[c]] for c in state.hand]


def types(state: DieciState) -> list[str]:
    return [pub["type"] for pub, _ in state.events]


def showdown_of(state: DieciState) -> dict[str, Any]:
    """The showdown event of the last finished manche."""
    events = state.events if GAME.is_over(state) else state.prev_events
    return next(pub for pub, _ in events if pub["type"] == "showdown")


# The rulebook's examples ---------------------------------------------------------------
# Four seats, seat 0 deals: the play order is 3, 2, 1, then the dealer 0.


def test_play_order_starts_right_of_the_dealer():
    state = GAME.setup(6, 1, {})
    assert state.order == [5, 4, 3, 2, 1, 0]
    assert GAME.to_act(state) == (5,)
    state = build(["5", "5", "5", "5", "4", "4"], dealer=3)
    assert state.order == [2, 1, 0, 5, 4, 3]


def test_example_1_forced_accept_zero_for_two():
    state = build(["5", "4", "2", "0"])
    state = play(state, (3, "swap"))
    # seat 2 holds no 6-10: it accepts without being asked; now it is its own turn
    assert GAME.to_act(state) == (2,)
    assert cards(state) == ["5", "4", "0", "2"]
    assert state.tokens == [3, 3, 3, 3]
    assert types(state) == ["ask", "accept"]
    v3, v2, v1 = (GAME.view(state, s) for s in (3, 2, 1))
    assert v3["events"][1] == {"type": "accept", "seat": 2, "asker": 3, "gave": "0", "got": "2"}
    assert v2["events"][1] == {"type": "accept", "seat": 2, "asker": 3, "gave": "2", "got": "0"}
    assert v1["events"][1] == {"type": "accept", "seat": 2, "asker": 3}
    assert (v3["card"], v3["dealt"], v3["passed"], v3["received"]) == ("2", "0", ["0"], ["2"])
    assert (v2["card"], v2["decision"], v2["target"]) == ("0", "turn", 1)
    assert (v1["card"], v1["decision"], v1["passed"], v1["received"]) == ("4", None, [], [])


def test_example_2_lupo_blocks_and_the_asker_loses_a_token_and_keeps_the_zero():
    state = build(["5", "4", "9", "0"])
    state = play(state, (3, "swap"))
    assert GAME.to_act(state) == (2,)
    assert GAME.legal(state, 2) == ["accept", "block"]
    v2 = GAME.view(state, 2)
    assert (v2["decision"], v2["asker"]) == ("respond", 3)
    state = play(state, (2, "block"))
    assert cards(state) == ["5", "4", "9", "0"]
    assert state.tokens == [3, 3, 3, 2]
    assert GAME.view(state, 0)["revealed"] == [None, None, "9", None]
    assert GAME.view(state, 0)["events"][1:] == [
        {"type": "block", "seat": 2, "asker": 3, "card": "9", "auto": False},
        {"type": "token", "seat": 3, "cause": "lupo", "tokens": 2},
    ]
    # the blocker has revealed: it makes no further decision; seat 1 is next
    assert GAME.to_act(state) == (1,)


def test_example_3_puzzola_at_the_end_of_a_chain_sends_the_zero_back():
    state = build(["5", "8", "2", "0"])
    state = play(state, (3, "swap"), (2, "swap"))
    assert cards(state) == ["5", "8", "0", "2"]  # the 0 reached seat 2, which passes it on
    state = play(state, (1, "block"))
    assert cards(state) == ["5", "8", "2", "0"]  # the 0 is back with the first discarder
    assert state.tokens == [3, 3, 2, 2]
    assert state.lost["puzzola"] == [0, 0, 1, 1]
    v3 = GAME.view(state, 3)
    assert v3["card"] == "0"
    assert v3["events"][-4:] == [
        {"type": "block", "seat": 1, "asker": 2, "card": "8", "auto": False},
        {"type": "unwind", "first": 3, "members": [3, 2], "got": "0"},
        {"type": "token", "seat": 2, "cause": "puzzola", "tokens": 2},
        {"type": "token", "seat": 3, "cause": "puzzola", "tokens": 2},
    ]
    assert GAME.view(state, 0)["events"][-3] == {"type": "unwind", "first": 3, "members": [3, 2]}
    assert GAME.view(state, 2)["events"][-3]["got"] == "2"
    assert GAME.to_act(state) == (0,)  # seat 1 revealed; the dealer is last


def test_puzzola_unwinds_a_longer_chain_everyone_takes_back_their_own_card():
    # Six seats: order 5, 4, 3, 2, 1, 0. The 0 travels 5 -> 4 -> 3; 2 blocks with 8.
    state = build(["5", "1", "8", "3", "2", "0"])
    state = play(state, (5, "swap"), (4, "swap"), (3, "swap"))
    assert cards(state) == ["5", "1", "8", "0", "3", "2"]  # the 0 has reached seat 3
    state = play(state, (2, "block"))
    assert cards(state) == ["5", "1", "8", "3", "2", "0"]
    assert state.tokens == [3, 3, 3, 2, 3, 2]  # asker 3 and first discarder 5; 4 is spared


def test_puzzola_on_a_fresh_swap_costs_the_asker_one_token_only():
    state = build(["5", "4", "8", "0"])
    state = play(state, (3, "swap"), (2, "block"))
    assert state.tokens == [3, 3, 3, 2]
    assert cards(state) == ["5", "4", "8", "0"]
    assert "unwind" not in types(state)


def test_a_kept_card_ends_the_chain():
    # 3 passes the 0 to 2, 2 keeps, 1 passes its own 1 to the dealer who blocks with 8
    state = build(["8", "1", "2", "0"])
    state = play(state, (3, "swap"), (2, "keep"), (1, "swap"), (0, "block"))
    assert state.tokens[1] == 2 and state.tokens[3] == 3


def test_a_blocker_may_choose_to_accept():
    state = build(["5", "4", "10", "0"])
    state = play(state, (3, "swap"), (2, "accept"))
    assert cards(state) == ["5", "4", "0", "10"]
    assert GAME.to_act(state) == (2,)


# Saltaconiglio ----------------------------------------------------------------------


def test_saltaconiglio_skips_once():
    state = build(["5", "4", "7", "0"])
    state = play(state, (3, "swap"), (2, "block"))
    # the swap goes on to seat 1, who holds a 4 and must accept
    assert cards(state) == ["5", "0", "7", "4"]
    assert GAME.view(state, 0)["events"][1] == {
        "type": "skip",
        "seat": 2,
        "asker": 3,
        "card": "7",
        "next": 1,
        "auto": False,
    }
    # seat 2 revealed: the receiver, seat 1, decides next and may pass the 0 on
    assert GAME.to_act(state) == (1,)
    state = play(state, (1, "swap"))
    assert cards(state) == ["0", "5", "7", "4"]
    assert GAME.to_act(state) == (0,)


def test_saltaconiglio_skips_twice_to_the_dealer():
    state = build(["3", "7", "7", "0"])
    state = play(state, (3, "swap"), (2, "block"), (1, "block"))
    assert cards(state) == ["0", "7", "7", "3"]
    assert GAME.to_act(state) == (0,)
    assert GAME.legal(state, 0) == ["keep", "draw"]


def test_a_skip_onto_a_lupo_hits_the_original_asker():
    state = build(["5", "9", "7", "0"])
    state = play(state, (3, "swap"), (2, "block"))
    assert GAME.to_act(state) == (1,)
    assert GAME.view(state, 1)["asker"] == 3
    state = play(state, (1, "block"))
    assert state.tokens == [3, 3, 3, 2]
    assert cards(state) == ["5", "9", "7", "0"]
    assert GAME.to_act(state) == (0,)


def test_a_skip_onto_a_puzzola_unwinds_the_askers_chain():
    # 5 passes the 0 to 4; 4 passes it on, 3 skips, 2 blocks with Puzzola
    state = build(["5", "4", "8", "7", "2", "0"])
    state = play(state, (5, "swap"), (4, "swap"), (3, "block"), (2, "block"))
    assert cards(state) == ["5", "4", "8", "7", "2", "0"]
    assert state.tokens == [3, 3, 3, 3, 2, 2]


def test_the_wrap_around_voids_a_skip_that_comes_back_to_the_asker():
    state = build(["7", "7", "0", "7"])
    state = play(state, (3, "keep"), (2, "swap"), (1, "block"), (0, "block"), (3, "block"))
    events = [pub for pub, _ in state.prev_events]
    assert [e["type"] for e in events] == ["keep", "ask", "skip", "skip", "skip", "void", "showdown", "token"]
    assert events[3]["next"] == 3 and events[4]["next"] == 2
    assert state.tokens == [3, 3, 2, 3]  # seat 2 kept its 0 and lost the showdown
    assert state.manche == 2


def test_the_wrap_around_can_reach_a_player_who_already_played():
    state = build(["7", "7", "0", "5"])
    state = play(state, (3, "keep"), (2, "swap"), (1, "block"), (0, "block"))
    # seat 3 holds a 5: it accepts; every later seat has revealed, so the showdown follows
    events = [pub for pub, _ in state.prev_events]
    assert [e["type"] for e in events][:6] == ["keep", "ask", "skip", "skip", "accept", "showdown"]
    assert showdown_of(state)["cards"] == ["7", "7", "5", "0"]
    assert state.tokens == [3, 3, 3, 2]


def test_a_wrap_around_into_the_askers_chain_is_void():
    # 3 passes the 0 to 2; 2 passes it on: 1 and 0 skip, the swap would return to 3
    state = build(["7", "7", "4", "0"])
    state = play(state, (3, "swap"), (2, "swap"), (1, "block"), (0, "block"))
    events = [pub for pub, _ in state.prev_events]
    assert [e["type"] for e in events][:7] == ["ask", "accept", "ask", "skip", "skip", "void", "showdown"]
    assert showdown_of(state)["cards"] == ["7", "7", "0", "4"]


def test_a_revealed_card_reached_again_acts_by_itself():
    # 3 swaps, 2 blocks with Lupo; 1 swaps, the dealer skips, the swap wraps to 3 (a 5:
    # no) - here 3 has been eliminated by the Lupo, so it goes on to 2's revealed Lupo
    state = build(["7", "0", "9", "1"], tokens=[3, 3, 3, 1])
    state = play(state, (3, "swap"), (2, "block"))
    assert state.tokens == [3, 3, 3, 0]
    assert cards(state) == ["7", "0", "9", None]  # out at once; its card is discarded face up
    assert GAME.view(state, 0)["discard_pile"] == ["1"]
    assert GAME.view(state, 1)["events"][-1] == {"type": "eliminated", "seat": 3, "card": "1"}
    state = play(state, (1, "swap"), (0, "block"))
    events = [pub for pub, _ in state.prev_events]
    skip = next(e for e in events if e["type"] == "skip")
    assert skip["next"] == 2  # the eliminated seat 3 is skipped
    block = [e for e in events if e["type"] == "block"][-1]
    assert block == {"type": "block", "seat": 2, "asker": 1, "card": "9", "auto": True}
    assert state.tokens == [3, 1, 3, 0]  # Lupo again, on seat 1; then seat 1's 0 loses
    assert state.lost["lupo"] == [0, 1, 0, 1] and state.lost["showdown"] == [0, 1, 0, 0]
    # the showdown: seat 3 takes no part; seat 1 keeps its 0 and is lowest
    assert showdown_of(state)["cards"] == ["7", "0", "9", None]
    assert showdown_of(state)["losers"] == [1]


def test_a_seat_eliminated_by_lupo_is_skipped_afterwards():
    state = build(["5", "4", "9", "0"], tokens=[3, 3, 3, 1])
    state = play(state, (3, "swap"), (2, "block"))
    assert state.tokens[3] == 0 and GAME.to_act(state) == (1,)
    state = play(state, (1, "keep"), (0, "keep"))
    assert showdown_of(state)["cards"] == ["5", "4", "9", None]
    # next manche: the deal passes to the right of 0, i.e. seat 3 - but it is out: seat 2
    assert state.dealer == 2 and state.order == [1, 0, 2]
    assert GAME.view(state, 3)["card"] is None and GAME.legal(state, 3) == []
    assert GAME.view(state, 0)["out"] == [3]


# The dealer ------------------------------------------------------------------------------


def test_the_dealer_drawing_a_6_to_10_is_blocked():
    state = build(["0", "4", "3", "5"], deck_top=("8",))
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"), (0, "draw"))
    events = [pub for pub, _ in state.prev_events]
    assert events[3] == {"type": "draw", "seat": 0, "blocked": True, "card": "8"}
    assert showdown_of(state)["cards"] == ["0", "4", "3", "5"]
    assert state.tokens == [2, 3, 3, 3]  # no Puzzola effect; the 0 loses the showdown


def test_the_dealer_swaps_with_the_deck():
    state = build(["0", "4", "3", "5"], deck_top=("2",))
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"))
    state = GAME.apply(state, 0, "draw")
    events = state.prev_events
    pub, private = events[3]
    assert pub == {"type": "draw", "seat": 0, "blocked": False, "discarded": "0"}
    assert private == {0: {"got": "2"}}
    assert showdown_of(state)["cards"] == ["2", "4", "3", "5"]
    assert state.tokens == [2, 3, 3, 3]  # 2 is still the lowest


def test_the_dealer_keeps():
    state = build(["6", "0", "3", "5"])
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"), (0, "keep"))
    assert state.tokens == [3, 2, 3, 3]


# Showdown, Jollygatto, the end ----------------------------------------------------------


def test_a_tie_for_lowest_all_lose():
    state = build(["6", "5", "0", "0"])
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"), (0, "keep"))
    assert showdown_of(state)["losers"] == [3, 2]
    assert state.tokens == [3, 3, 2, 2]
    assert state.lost["showdown"] == [0, 0, 1, 1]


def test_a_single_jollygatto_counts_as_0000():
    state = build(["0000", "jollygatto", "00", "5"])
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"), (0, "keep"))
    assert showdown_of(state)["losers"] == [1, 0]
    assert state.tokens == [2, 2, 3, 3]


def test_two_jollygatti_save_their_holders_and_bring_back_earlier_eliminations():
    # Six seats, manche 3. Seat 5 went out in manche 1; seat 4 (1 token) goes out now
    # by Lupo; seats 2 and 1 show Jollygatti; the dealer's 0000 still loses.
    state = build(
        ["0000", "jollygatto", "jollygatto", "9", "0", None],
        tokens=[3, 2, 2, 3, 1, 0],
        manche=3,
        out_in={5: 1},
    )
    state = play(state, (4, "swap"), (3, "block"))
    assert state.tokens[4] == 0
    state = play(state, (2, "keep"), (1, "keep"), (0, "keep"))
    show = showdown_of(state)
    assert show["safe"] == [2, 1] and show["losers"] == [0]
    assert state.tokens == [2, 2, 2, 3, 0, 1]  # 5 is back with 1 token; 4 is not
    assert state.reentries == [0, 0, 0, 0, 0, 1]
    assert [pub for pub, _ in state.prev_events][-1] == {"type": "reenter", "seat": 5, "tokens": 1}
    # manche 4: the deal passes to the right of 0, to the re-entered seat 5
    assert state.manche == 4 and state.dealer == 5 and state.order == [3, 2, 1, 0, 5]


def test_two_jollygatti_alone_at_the_bottom_nobody_loses():
    state = build(["jollygatto", "jollygatto", "2", "5"])
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"), (0, "keep"))
    assert showdown_of(state)["losers"] == [] and showdown_of(state)["safe"] == [1, 0]
    assert state.tokens == [3, 3, 3, 3]


def test_a_showdown_that_would_eliminate_everyone_left_costs_nothing():
    state = build(["2", None, "2", None], tokens=[1, 0, 1, 0], manche=5, out_in={1: 2, 3: 4})
    assert state.order == [2, 0]
    state = play(state, (2, "keep"), (0, "keep"))
    show = showdown_of(state)
    assert show["nobody_loses"] is True and show["losers"] == []
    assert state.tokens == [1, 0, 1, 0] and not GAME.is_over(state)
    assert state.manche == 6 and state.dealer == 2


def test_a_showdown_tie_with_a_survivor_is_applied():
    state = build(["0", "0", "5", "6"], tokens=[1, 2, 3, 3])
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"), (0, "keep"))
    assert state.tokens == [0, 1, 3, 3]


def test_the_last_survivor_wins_and_the_others_rank_by_elimination():
    # Seat 3 went out first (manche 1), seat 1 second (manche 2); now seats 2 and 0 tie
    # on 1 token each, 0 loses with the 0.
    state = build(["0", None, "4", None], tokens=[1, 0, 1, 0], manche=3, out_in={3: 1, 1: 2})
    state = play(state, (2, "keep"), (0, "keep"))
    assert GAME.is_over(state)
    result = GAME.result(state)
    assert result.scores == [2.0, 3.0, 1.0, 4.0]
    assert result.ranks == [2, 3, 1, 4]
    assert result.lower_is_better is True
    d = result.details
    assert d["finishing_order"] == [[2], [0], [1], [3]]
    assert d["manches"] == 3 and d["draw"] is False and d["survivors"] == [2]
    assert d["eliminated_in"] == [3, 2, None, 1]
    assert GAME.legal(state, 2) == [] and GAME.to_act(state) == ()
    with pytest.raises(IllegalAction):
        GAME.apply(state, 2, "keep")


def test_lupo_ending_the_match_mid_manche():
    # three left: the Lupo takes seat 3 out, seats 0 and 2 play on
    state = build(["5", None, "9", "0"], tokens=[3, 0, 3, 1], manche=2, out_in={1: 1})
    state = play(state, (3, "swap"), (2, "block"))
    assert not GAME.is_over(state) and GAME.to_act(state) == (0,)
    # two left: seat 0 swaps into the dealer's Lupo with its last token; the match ends
    state = build(["5", None, "9", None], tokens=[1, 0, 3, 0], dealer=2, manche=2, out_in={1: 1, 3: 1})
    assert state.order == [0, 2]
    state = play(state, (0, "swap"), (2, "block"))
    assert GAME.is_over(state)
    result = GAME.result(state)
    assert result.ranks == [2, 4, 1, 3]  # 1 went out before 3 (in the same manche)
    assert result.details["manche_log"][-1]["showdown"] is None
    assert result.details["tokens_lost"]["lupo"] == [1, 0, 0, 0]


def test_puzzola_eliminating_asker_and_first_discarder_share_the_moment():
    state = build(["5", "8", "2", "0", "6", "6"], tokens=[3, 3, 1, 1, 3, 3])
    # order 5, 4, 3, 2, 1, 0: 5 and 4 keep, 3 passes the 0 to 2, 2 passes it to Puzzola
    state = play(state, (5, "keep"), (4, "keep"), (3, "swap"), (2, "swap"), (1, "block"))
    assert state.tokens == [3, 3, 0, 0, 3, 3]
    assert state.elim_seq[2] == state.elim_seq[3]
    state = play(state, (0, "keep"))
    assert state.order[-1] == state.dealer


def test_max_manches_is_a_draw_among_the_survivors():
    state = build(["6", "5", "0", "4"], max_manches=1)
    state = play(state, (3, "keep"), (2, "keep"), (1, "keep"), (0, "keep"))
    assert GAME.is_over(state)
    result = GAME.result(state)
    assert result.ranks == [1, 1, 1, 1] and result.details["draw"] is True
    assert result.details["manches_survived"] == [1, 1, 1, 1]
    assert GAME.seat_stats(result, 2) == {"manches_survived": 1.0}


def test_deal_passes_to_the_right_each_manche():
    state = GAME.setup(5, 3, {})
    dealers = []
    while not GAME.is_over(state) and len(dealers) < 6:
        if not dealers or dealers[-1][0] != state.manche:
            dealers.append((state.manche, state.dealer, list(state.order)))
        (s,) = GAME.to_act(state)
        state = GAME.apply(state, s, "keep" if "keep" in GAME.legal(state, s) else "accept")
    for _, dealer, order in dealers:
        assert order[-1] == dealer and order[0] == (dealer - 1) % 5
    assert dealers[0][1] == 0 and dealers[1][1] == 4


# Options ----------------------------------------------------------------------------


def test_options_defaults_and_checks():
    opts = GAME.check_options(6, {})
    assert opts["tokens"] == 3 and opts["reshuffle"] is True and opts["max_manches"] == 500
    assert sum(opts["deck"].values()) == 55
    assert opts["deck"]["10"] == 4 and opts["deck"]["jollygatto"] == 3
    merged = GAME.check_options(4, {"deck": {"jollygatto": 5}})
    assert merged["deck"]["jollygatto"] == 5 and sum(merged["deck"].values()) == 57
    assert GAME.check_options(4, {"reshuffle": False})["reshuffle"] is False
    bad = [
        (5, {"reshuffle": False}, "reshuffle"),
        (12, {"reshuffle": False}, "reshuffle"),
        (4, {"deck": {"11": 1}}, "deck"),
        (4, {"deck": {"5": -1}}, "deck"),
        (4, {"deck": {"5": True}}, "deck"),
        (4, {"deck": ["10"]}, "deck"),
        (4, {"deck": {name: 0 for name in RANKS} | {"3": 4}}, "deck"),
        (4, {"tokens": 0}, "tokens"),
        (4, {"max_manches": 0}, "max_manches"),
        (3, {}, "players"),
        (13, {}, "players"),
        (4, {"nope": 1}, "nope"),
    ]
    for seats, options, key in bad:
        with pytest.raises(OptionError) as info:
            GAME.check_options(seats, options)
        assert info.value.key == key
    # the smallest deck that is enough: one card per player plus one for the dealer's draw
    small = {name: 0 for name in RANKS} | {"3": 4, "2": 1}
    state = GAME.setup(4, 1, {"deck": small, "reshuffle": False})
    _random_playout(state, random.Random(1))


def test_tokens_option():
    state = GAME.setup(4, 1, {"tokens": 5})
    assert state.tokens == [5, 5, 5, 5]


def test_illegal_actions():
    state = build(["5", "4", "9", "0"])
    for bad in ("accept", "draw", "Keep", None, ["keep"], 1):
        with pytest.raises(IllegalAction):
            GAME.apply(state, 3, bad)
    with pytest.raises(IllegalAction):
        GAME.apply(state, 2, "keep")
    state = play(state, (3, "swap"))
    with pytest.raises(IllegalAction):
        GAME.apply(state, 3, "keep")
    with pytest.raises(IllegalAction):
        GAME.apply(state, 2, "swap")
    state = play(state, (2, "accept"), (2, "keep"), (1, "keep"))
    with pytest.raises(IllegalAction):
        GAME.apply(state, 0, "swap")
    assert GAME.legal(state, 1) == []


# Whole matches: invariants, termination, determinism, leaks -----------------------------

CONFIGS = [(n, True) for n in range(4, 13)] + [(4, False)]


def _random_playout(state: DieciState, rng: random.Random, checks: list | None = None) -> DieciState:
    steps = 0
    while not GAME.is_over(state):
        (seat,) = GAME.to_act(state)
        legal = GAME.legal(state, seat)
        before = list(state.tokens)
        manche = state.manche
        order = list(state.order)
        state = GAME.apply(state, seat, legal[rng.randrange(len(legal))])
        assert GAME.invariants(state) == []
        steps += 1
        assert steps < 20_000
        if checks is not None:
            checks.append((before, manche, order, state))
    return state


@pytest.mark.parametrize("seats,reshuffle", CONFIGS)
def test_conformance_playouts(seats, reshuffle):
    for seed in range(8):
        rng = random.Random(seed)
        state = GAME.setup(seats, seed, {"reshuffle": reshuffle})
        assert len(state.rank) == 55
        while not GAME.is_over(state):
            (seat,) = GAME.to_act(state)
            legal = GAME.legal(state, seat)
            view = GAME.view(state, seat)
            assert json.loads(json.dumps(view)) == view and legal
            assert view["decision"] is not None
            before, manche, order = list(state.tokens), state.manche, list(state.order)
            state = GAME.apply(state, seat, legal[rng.randrange(len(legal))])
            assert GAME.invariants(state) == []
            finished = GAME.is_over(state) or state.manche != manche
            events = [pub for pub, _ in (state.events if GAME.is_over(state) else state.prev_events)]
            if finished:
                _check_finished_manche(events, order, before, state)
            else:
                assert all(a <= b for a, b in zip(state.tokens, before)), "tokens rise only at a showdown"
        result = GAME.result(state)
        assert min(result.ranks) == 1
        assert result.details["draw"] or len(result.details["survivors"]) == 1


def _check_finished_manche(events: list[dict], order: list[int], before: list[int], state: DieciState) -> None:
    """One card per seat still in at the showdown; tokens rise only by re-entry."""
    mid_out = {e["seat"] for e in events if e["type"] == "eliminated" and e["card"] is not None}
    shows = [e for e in events if e["type"] == "showdown"]
    if shows:
        show = shows[0]
        holders = {s for s, c in enumerate(show["cards"]) if c is not None}
        assert holders == set(order) - mid_out
    back = {e["seat"] for e in events if e["type"] == "reenter"}
    for s, (b, a) in enumerate(zip(before, state.tokens)):
        if a > b:
            assert s in back and b == 0 and a == 1
            assert shows and len(shows[0]["safe"]) >= 2


@pytest.mark.parametrize("seats,reshuffle", [(4, True), (4, False), (7, True), (12, True)])
def test_same_seed_same_match(seats, reshuffle):
    def trace(seed: int) -> tuple[list, dict]:
        rng = random.Random(seed + 50)
        state = GAME.setup(seats, seed, {"reshuffle": reshuffle})
        out = []
        while not GAME.is_over(state):
            (seat,) = GAME.to_act(state)
            legal = GAME.legal(state, seat)
            out.append((seat, GAME.view(state, seat)))
            state = GAME.apply(state, seat, legal[rng.randrange(len(legal))])
        return out, GAME.result(state).to_json()

    assert trace(3) == trace(3)
    assert trace(3) != trace(4)


def test_matches_end_by_survivor_or_max_manches():
    ends = set()
    for seed in range(40):
        state = GAME.setup(6, seed, {"max_manches": 8, "tokens": 2 + seed % 3})
        state = _random_playout(state, random.Random(seed))
        d = GAME.result(state).details
        ends.add(d["draw"])
        assert d["manches"] <= 8
        assert d["draw"] == (len(d["survivors"]) > 1)
        assert len(d["manche_log"]) == d["manches"]
        lost = sum(sum(v) for v in d["tokens_lost"].values())
        assert lost == 6 * (2 + seed % 3) + sum(d["reentries"]) - sum(d["tokens"])
    assert ends == {True, False}


@pytest.mark.parametrize("seats,reshuffle", [(4, True), (4, False), (6, True), (11, True)])
def test_hidden_cards_never_change_a_view(seats, reshuffle):
    rng = random.Random(seats)
    changed = checked = 0
    for seed in range(3 if seats < 8 else 1):
        state = GAME.setup(seats, seed, {"reshuffle": reshuffle})
        while not GAME.is_over(state):
            for seat in range(seats):
                view = GAME.view(state, seat)
                other = GAME.redeal_hidden(state, seat, rng)
                assert GAME.view(other, seat) == view
                assert GAME.invariants(other) == []
                checked += 1
                changed += any(GAME.view(other, o) != GAME.view(state, o) for o in range(seats))
            (seat,) = GAME.to_act(state)
            legal = GAME.legal(state, seat)
            state = GAME.apply(state, seat, legal[rng.randrange(len(legal))])
    assert changed > checked // 3


def test_a_passer_sees_the_card_it_passed_and_no_other_hidden_card():
    state = build(["4", "3", "2", "0", "1", "5"])
    # order 5, 4, 3, 2, 1, 0: 5 passes its 5 to 4; 4 passes the 5 on to 3
    state = play(state, (5, "swap"), (4, "swap"))
    v5 = GAME.view(state, 5)
    assert (v5["card"], v5["passed"], v5["received"]) == ("1", ["5"], ["1"])
    text = json.dumps(v5)
    # seat 5 knows seat 4 got its 5 (and passed it on): it never sees 3's old 0 or others
    assert '"0"' not in text and '"2"' not in text and '"3"' not in text and '"4"' not in text
    v1 = GAME.view(state, 1)
    assert v1["card"] == "3" and '"5"' not in json.dumps(v1) and '"gave"' not in json.dumps(v1)
    for _ in range(20):
        other = GAME.redeal_hidden(state, 5, random.Random(_))
        assert GAME.view(other, 5) == v5
        assert cards(other)[5] == "1"


def test_redeal_keeps_the_responders_card_a_blocker():
    state = build(["4", "3", "9", "0"])
    state = play(state, (3, "swap"))
    for seed in range(30):
        other = GAME.redeal_hidden(state, 0, random.Random(seed))
        assert GAME.invariants(other) == []
        assert cards(other)[2] == "9"
        assert GAME.view(other, 0) == GAME.view(state, 0)


def test_a_pending_answer_is_not_shown_to_others():
    state = build(["4", "3", "9", "0"])
    state = play(state, (3, "swap"))
    for s in (0, 1, 3):
        v = GAME.view(state, s)
        assert v["decision"] is None and v["asker"] is None and v["turn"] == 3
        assert v["revealed"] == [None, None, None, None]


def test_reshuffle_false_sets_used_cards_aside_until_the_deck_runs_out():
    state = GAME.setup(4, 5, {"reshuffle": False, "tokens": 10})
    rng = random.Random(5)
    sizes = []
    while not GAME.is_over(state) and state.manche < 30:
        v = GAME.view(state, GAME.to_act(state)[0])
        sizes.append((v["deck_size"], len(v["discard_pile"])))
        (seat,) = GAME.to_act(state)
        state = GAME.apply(state, seat, rng.choice(GAME.legal(state, seat)))
    decks = [d for d, _ in sizes]
    assert decks[0] == 55 - 4 and min(decks) < 20
    assert any(p > 10 for _, p in sizes)  # used cards pile up face up
    assert any(b > a for a, b in itertools.pairwise(decks))  # and go back when the deck runs out


def test_view_shape():
    state = GAME.setup(6, 2, {})
    v = GAME.view(state, 5)
    assert set(v) == {
        "seat",
        "players",
        "manche",
        "max_manches",
        "dealer",
        "order",
        "tokens",
        "out",
        "deck_size",
        "discard_pile",
        "card",
        "dealt",
        "passed",
        "received",
        "revealed",
        "turn",
        "decision",
        "asker",
        "target",
        "events",
        "previous_events",
        "your_turn",
    }
    assert v["decision"] == "turn" and v["your_turn"] and v["target"] == 4 and v["deck_size"] == 49
    assert GAME.view(state, 4)["decision"] is None


def _shown(view: dict[str, Any]) -> set[tuple[int, int]]:
    """The events a view shows, as (manche, index in that manche)."""
    k = view["manche"]
    keys = {(k, i) for i in range(len(view["events"]))} | {(k - 1, i) for i in range(len(view["previous_events"]))}
    for missed in view.get("sat_out", ()):
        keys |= {(missed["manche"], i) for i in range(len(missed["events"]))}
    return keys


def _reentry_playouts(matches: int) -> list[tuple[int, list[tuple[int, dict[str, Any], set[tuple[int, int]]]]]]:
    """Random playouts with few tokens, so that seats are out and re-enter: for every
    decision, the seat, its view and every event that had happened by then."""
    out = []
    for seed in range(matches):
        n = 4 + seed % 5
        rng = random.Random(seed)
        state = GAME.setup(n, seed, {"tokens": 1 + seed % 2})
        ended: dict[int, int] = {}  # manche -> its number of events
        trace = []
        while not GAME.is_over(state):
            (seat,) = GAME.to_act(state)
            happened = {(k, i) for k, count in ended.items() for i in range(count)}
            happened |= {(state.manche, i) for i in range(len(state.events))}
            trace.append((seat, GAME.view(state, seat), happened))
            state = GAME.apply(state, seat, rng.choice(GAME.legal(state, seat)))
            if state.manche > 1:
                ended[state.manche - 1] = len(state.prev_events)
        out.append((n, trace))
    return out


def test_a_seat_that_re_enters_is_shown_every_event_of_the_manches_it_sat_out():
    """RULES.md: a seat sees every public event. One that was out while other manches were
    played is shown them (``sat_out``) in its views of the manche after its re-entry; at
    every decision, every event so far has been shown to the deciding seat."""
    reentered = 0
    for n, trace in _reentry_playouts(160):
        seen: dict[int, set[tuple[int, int]]] = {s: set() for s in range(n)}
        for seat, view, happened in trace:
            seen[seat] |= _shown(view)
            assert happened <= seen[seat], (seat, view["manche"], sorted(happened - seen[seat])[:5])
            if "sat_out" in view:
                reentered += 1
                assert all(m["manche"] < view["manche"] - 1 for m in view["sat_out"])
                assert errors(view, game_schema_name("dieci"), "state", strict=True) == []
    assert reentered > 0, "no playout had a seat re-enter after sitting out: the property was not exercised"
