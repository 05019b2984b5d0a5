"""Drahtseilakt rules (RULES.md §2): the rulebook examples first, then the scenarios of
issue 4, conformance playouts with extra invariants, and the leak test."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from referee.games.base import IllegalAction, OptionError
from referee.games.drahtseilakt import rules as D
from tests.support.games import roundtrip

pytestmark = pytest.mark.parallel

GAME = D.GAME
VARIANTS = [{"tactical": t, "chaotic": c} for t, c in itertools.product((False, True), repeat=2)]


def rig(
    n: int,
    hands: list[list[int]],
    score_cards: list[str],
    *,
    opts: dict | None = None,
    round_: int = 0,
    trick: int = 0,
    leader: int | None = None,
) -> D.DrahtState:
    """A state whose trick ``trick`` of round ``round_`` reveals ``score_cards`` first and
    whose seats hold ``hands``."""
    st = GAME.setup(n, 1, opts or {})
    st.round = st.dealer = round_
    st.raw_scores = [[0] * round_ for _ in range(n)]
    st.leader = (round_ + 1) % n if leader is None else leader
    st.trick = trick
    st.hands = [sorted(h) for h in hands]
    held = {c for h in hands for c in h}
    st.unused = [c for c in range(1, st.max_card + 1) if c not in held]
    rest = [c for c in D.SCORE_CARDS if c not in score_cards]
    st.score_deck = rest + list(reversed(score_cards))
    st.score_revealed = []
    D._start_trick(st)
    return st


def play_trick(st: D.DrahtState, cards: dict[int, int]) -> D.DrahtState:
    """Play one trick: ``cards[seat]`` for every seat, in the order the game asks."""
    while True:
        seats = GAME.to_act(st)
        for s in seats:
            st = GAME.apply(st, s, cards[s])
        if not st.plays and all(p is None for p in st.pending):
            return st


def random_playout(n, seed, opts, on_step=None):
    st = GAME.setup(n, seed, opts)
    rng = random.Random(seed)
    trace = []
    while not GAME.is_over(st):
        seats = GAME.to_act(st)
        views = {s: GAME.view(st, s) for s in seats}
        choices = {s: rng.choice(GAME.legal(st, s)) for s in seats}
        for s in seats:
            trace.append((s, views[s], choices[s]))
            st = GAME.apply(st, s, choices[s])
            if on_step:
                on_step(st)
    return st, trace


# The rulebook's own examples ---------------------------------------------------------


def test_rulebook_example_3_with_7_28_36():
    st = rig(3, [[7, 1], [28, 2], [36, 3]], ["3"], leader=0)
    assert GAME.view(st, 0)["score"] == {"cards": ["3"], "red": 3, "blue": 3}
    st = play_trick(st, {0: 7, 1: 28, 2: 36})
    assert (st.red, st.blue) == ([3, 0, 0], [0, 0, 3])
    assert st.leader == 2 and GAME.to_act(st) == (2,)
    t = GAME.view(st, 1)["tricks"][0]
    assert (t["blue_to"], t["red_to"]) == (2, 0)


def test_blue_zero_then_4_lowest_takes_4_red_highest_nothing():
    st = rig(3, [[7, 1], [28, 2], [36, 3]], ["blue0", "4"], leader=0)
    assert GAME.view(st, 0)["score"] == {"cards": ["blue0", "4"], "red": 4, "blue": 0}
    st = play_trick(st, {0: 7, 1: 28, 2: 36})
    assert (st.red, st.blue) == ([4, 0, 0], [0, 0, 0])
    assert st.leader == 2  # the highest card leads even when blue was zeroed
    assert GAME.view(st, 0)["tricks"][0]["blue_to"] is None


def test_red_zero_then_4_highest_takes_blue_only():
    st = rig(3, [[7, 1], [28, 2], [36, 3]], ["red0", "4"], leader=0)
    st = play_trick(st, {0: 7, 1: 28, 2: 36})
    assert (st.red, st.blue) == ([0, 0, 0], [0, 0, 4])


@pytest.mark.parametrize("zeros", [["red0", "blue0"], ["blue0", "red0"]])
def test_two_zeros_cancel_and_third_card_scores_both_colours(zeros):
    st = rig(3, [[7, 1], [28, 2], [36, 3]], zeros + ["6"], leader=0)
    assert GAME.view(st, 1)["score"] == {"cards": zeros + ["6"], "red": 6, "blue": 6}
    st = play_trick(st, {0: 7, 1: 28, 2: 36})
    assert (st.red, st.blue) == ([6, 0, 0], [0, 0, 6])
    assert "red0" not in GAME.view(st, 0)["score_cards_unrevealed"]


def test_a_zero_only_affects_its_own_trick():
    st = rig(3, [[7, 1], [28, 2], [36, 3]], ["blue0", "4", "5"], leader=0)
    st = play_trick(st, {0: 7, 1: 28, 2: 36})
    assert GAME.view(st, 0)["score"] == {"cards": ["5"], "red": 5, "blue": 5}
    st = play_trick(st, {0: 1, 1: 2, 2: 3})
    assert (st.red, st.blue) == ([9, 0, 0], [0, 0, 5])


# Issue 4 scenarios -------------------------------------------------------------------


def test_pairs_are_handed_back_after_the_trick():
    st = rig(4, [[10, 4], [20, 2], [30, 3], [40, 1]], ["5", "2"], leader=0)
    st.red[3] = st.got_red[3] = 3
    st = play_trick(st, {0: 10, 1: 20, 2: 30, 3: 40})  # seat 3 takes 5 blue, holds 3 red
    assert (st.red, st.blue) == ([5, 0, 0, 0], [0, 0, 0, 2])
    st = play_trick(st, {0: 4, 1: 2, 2: 3, 3: 1})  # seat 0 takes 2 blue; seat 3 takes 2 red
    assert (st.red, st.blue) == ([3, 0, 0, 0], [0, 0, 0, 0])
    assert GAME.view(st, 2)["sticks"][0] == {"red": 3, "blue": 0}


def test_invariants_catch_broken_states():
    st = GAME.setup(3, 4, {})
    assert GAME.invariants(st) == []
    bad = GAME.copy(st)
    bad.hands[0][0] = bad.hands[1][0]
    assert any("accounted" in m for m in GAME.invariants(bad))
    bad = GAME.copy(st)
    bad.red[1] = bad.blue[1] = 2
    assert any("both colours" in m for m in GAME.invariants(bad))
    bad = GAME.copy(st)
    bad.got_red[2] = 4
    bad.red[2] = 4
    assert any("red handed out" in m for m in GAME.invariants(bad))
    bad = GAME.copy(st)
    bad.score_revealed.append(bad.score_deck[0])
    assert any("score cards" in m for m in GAME.invariants(bad))


def _last_trick(n, raw, round_, cancelled=None):
    """Seat 0 ends round ``round_`` clean; seat 1 takes 9 red and seat n-1 9 blue."""
    hands = [[20 + s] for s in range(n)]
    hands[1] = [1]
    hands[n - 1] = [50]
    st = rig(n, hands, ["9"], round_=round_, trick=8)
    st.raw_scores = [list(r) for r in raw]
    st.cancelled = cancelled or [[] for _ in range(n)]
    return play_trick(st, {s: hands[s][0] for s in range(n)})


def test_clean_round_cancels_the_highest_earlier_round():
    st = _last_trick(3, [[4, 7], [1, 2], [3, 3]], 2)
    assert st.raw_scores == [[4, 7, 0], [1, 2, 9], [3, 3, 9]]
    assert st.cancelled == [[1], [], []]
    assert st.over
    r = GAME.result(st)
    assert r.scores == [4.0, 12.0, 15.0] and r.ranks == [1, 2, 3]
    seat0 = r.details["seats"][0]
    assert seat0 == {
        "round_scores": [4, 7, 0],
        "cancelled_rounds": [1],
        "scores_after_cancel": [4, 0, 0],
        "total": 4,
        "clean_rounds": 1,
    }
    assert r.details["totals"] == [4, 12, 15]
    assert r.details["rounds"][-1]["cancels"] == [{"seat": 0, "round": 1, "score": 7}]
    assert GAME.seat_stats(r, 0) == {"sticks_per_round": 11 / 3, "clean_share": 1 / 3}


def test_clean_round_cancel_ties_take_the_earliest_and_zero_cancels_nothing():
    st = _last_trick(4, [[5, 2, 5], [1, 1, 1], [0, 0, 0], [1, 1, 1]], 3)
    assert st.cancelled[0] == [0]
    assert st.cancelled[2] == []  # nothing above 0 to cancel
    assert GAME.result(st).details["seats"][2]["clean_rounds"] == 4


def test_clean_first_round_cancels_nothing():
    st = _last_trick(3, [[], [], []], 0)
    assert st.raw_scores == [[0], [9], [9]]
    assert st.cancelled == [[], [], []]
    assert st.round == 1 and not st.over


def test_second_clean_round_cancels_the_highest_round_not_yet_cancelled():
    raw = [[6, 8, 0, 3], [1] * 4, [1] * 4, [1] * 4, [1] * 4]
    st = _last_trick(5, raw, 4, cancelled=[[1], [], [], [], []])
    assert st.cancelled[0] == [1, 0]
    r = GAME.result(st)
    assert r.scores[0] == 3.0
    assert r.details["seats"][0]["scores_after_cancel"] == [0, 0, 0, 3, 0]


@pytest.mark.parametrize("n", [3, 4, 5])
def test_dealer_rotation_and_first_leader(n):
    st = GAME.setup(n, 7, {})
    rng = random.Random(7)
    seen = []
    while not GAME.is_over(st):
        v = GAME.view(st, 0)
        if v["trick"] == 0 and not v["current_trick"] and v["round"] not in [r for r, *_ in seen]:
            seen.append((v["round"], v["dealer"], v["leader"], GAME.to_act(st)))
        s = GAME.to_act(st)[0]
        st = GAME.apply(st, s, rng.choice(GAME.legal(st, s)))
    assert seen == [(r, r, (r + 1) % n, ((r + 1) % n,)) for r in range(n)]
    assert [r["dealer"] for r in GAME.result(st).details["rounds"]] == list(range(n))


@pytest.mark.parametrize("n", [3, 4, 5])
@pytest.mark.parametrize("chaotic", [False, True])
def test_tactical_deck_is_all_dealt(n, chaotic):
    st = GAME.setup(n, 3, {"tactical": True, "chaotic": chaotic})
    assert st.max_card == 9 * n and st.unused == []
    assert sorted(c for h in st.hands for c in h) == list(range(1, 9 * n + 1))
    assert all(len(h) == 9 for h in st.hands)
    assert GAME.view(st, 0)["highest_card"] == 9 * n
    full = GAME.setup(n, 3, {})
    assert len(full.unused) == 50 - 9 * n


def test_chaotic_nobody_sees_a_choice_before_all_have_chosen():
    st = GAME.setup(4, 11, {"chaotic": True})
    assert GAME.to_act(st) == (0, 1, 2, 3)
    before = {s: GAME.view(st, s) for s in range(4)}
    legal_before = {s: GAME.legal(st, s) for s in range(4)}
    picks = {s: legal_before[s][0] for s in range(4)}
    for k, s in enumerate((0, 1, 2)):
        st = GAME.apply(st, s, picks[s])
        assert GAME.view(st, s)["chosen"] == picks[s]
        for o in range(4):
            if o not in (0, 1, 2)[: k + 1]:
                assert GAME.view(st, o) == before[o]
                assert GAME.legal(st, o) == legal_before[o]
        with pytest.raises(IllegalAction):
            GAME.apply(st, s, GAME.view(st, s)["hand"][0])  # no second choice
    st = GAME.apply(st, 3, picks[3])
    trick = GAME.view(st, 0)["tricks"][0]
    assert {p["seat"]: p["card"] for p in trick["plays"]} == picks
    assert [p["seat"] for p in trick["plays"]] == [1, 2, 3, 0]  # clockwise from the leader
    assert GAME.view(st, 0)["leader"] == max(picks, key=picks.get)
    assert GAME.to_act(st) == (0, 1, 2, 3)


def test_normal_trick_is_played_clockwise_from_the_leader():
    st = GAME.setup(5, 2, {})
    order = []
    for _ in range(5):
        (s,) = GAME.to_act(st)
        assert GAME.view(st, s)["turn"] == s
        order.append(s)
        st = GAME.apply(st, s, GAME.legal(st, s)[-1])
    assert order == [1, 2, 3, 4, 0]


# Actions, options, results -----------------------------------------------------------


def test_illegal_actions_are_refused():
    st = GAME.setup(3, 5, {})
    (s,) = GAME.to_act(st)
    other = (s + 1) % 3
    card = st.hands[s][0]
    not_mine = st.hands[other][0]
    for bad in [not_mine, str(card), float(card), [card], None, True, 0, 51]:
        with pytest.raises(IllegalAction):
            GAME.apply(st, s, bad)
    with pytest.raises(IllegalAction):
        GAME.apply(st, other, not_mine)
    assert GAME.legal(st, other) == []
    assert GAME.apply(st, s, json.loads(json.dumps(card))) is st


def test_options_and_seat_counts():
    assert GAME.check_options(3, {}) == {"tactical": False, "chaotic": False}
    with pytest.raises(OptionError):
        GAME.check_options(3, {"tactic": True})
    with pytest.raises(OptionError):
        GAME.check_options(3, {"chaotic": 1})
    for n in (2, 6):
        with pytest.raises(OptionError):
            GAME.setup(n, 1, {})
    assert [o.name for o in GAME.info.options] == ["tactical", "chaotic"]
    assert [s.key for s in GAME.info.stats] == ["sticks_per_round", "clean_share"]


@pytest.mark.parametrize("n", [3, 4, 5])
def test_result_details_are_complete_and_consistent(n):
    st, _ = random_playout(n, 99, {})
    r = GAME.result(st)
    assert json.loads(json.dumps(r.to_json())) == r.to_json()
    assert r.lower_is_better
    d = r.details
    assert len(d["rounds"]) == n and len(d["seats"]) == n
    for s, seat in enumerate(d["seats"]):
        assert seat["round_scores"] == [rd["scores"][s] for rd in d["rounds"]]
        assert seat["total"] == sum(seat["scores_after_cancel"]) == r.scores[s]
        stats = GAME.seat_stats(r, s)
        assert stats["sticks_per_round"] == sum(seat["round_scores"]) / n
    assert r.ranks == [1 + sum(o < x for o in r.scores) for x in r.scores]


# Conformance playouts with the invariants ------------------------------------


def _expected_values(cards):
    if cards[0] in ("red0", "blue0"):
        if cards[1] in ("red0", "blue0"):
            return int(cards[2]), int(cards[2])
        v = int(cards[1])
        return (0, v) if cards[0] == "red0" else (v, 0)
    return int(cards[0]), int(cards[0])


@pytest.mark.parametrize("n", [3, 4, 5])
@pytest.mark.parametrize("opts", VARIANTS, ids=lambda o: f"t{int(o['tactical'])}c{int(o['chaotic'])}")
def test_conformance_playouts(n, opts):
    for seed in range(15):
        st = GAME.setup(n, seed, opts)
        rng = random.Random(seed)
        decisions = 0
        tricks_in_round = 0
        rnd = 0
        while not GAME.is_over(st):
            seats = GAME.to_act(st)
            assert seats
            choices = {}
            for s in seats:
                v, lg = GAME.view(st, s), GAME.legal(st, s)
                assert lg and lg == sorted(lg) == v["hand"]
                assert roundtrip(v) == v and roundtrip(lg) == lg
                choices[s] = rng.choice(lg)
            hist_before = len(st.history)
            for s in seats:
                st = GAME.apply(st, s, choices[s])
                decisions += 1
                assert GAME.invariants(st) == []
            if st.over or st.round != rnd or len(st.history) != hist_before:
                tricks_in_round += 1
                assert all(not (st.red[x] and st.blue[x]) for x in range(n))
            if st.over or st.round != rnd:
                assert tricks_in_round == 9
                tricks_in_round = 0
                rnd = st.round
            else:
                hist = st.history
                assert len(st.score_revealed) <= 11
                red_out = sum(_expected_values(t["score_cards"])[0] for t in hist)
                blue_out = sum(_expected_values(t["score_cards"])[1] for t in hist)
                assert sum(st.got_red) == red_out and sum(st.got_blue) == blue_out
                assert [(t["red"], t["blue"]) for t in hist] == [_expected_values(t["score_cards"]) for t in hist]
        assert decisions == 9 * n * n
        for rd in GAME.result(st).details["rounds"]:
            assert len(rd["score_cards_revealed"]) <= 11
            assert sum(c not in ("red0", "blue0") for c in rd["score_cards_revealed"]) == 9


@pytest.mark.parametrize("opts", VARIANTS)
def test_same_seed_same_trace(opts):
    a = random_playout(4, 1234, opts)
    b = random_playout(4, 1234, opts)
    assert a[1] == b[1]
    assert GAME.result(a[0]).to_json() == GAME.result(b[0]).to_json()
    c = random_playout(4, 1235, opts)
    assert c[1] != a[1]


# Leak test ---------------------------------------------------------------------------


def _sample_states(n, opts, seed, every=7):
    states = []
    st = GAME.setup(n, seed, opts)
    rng = random.Random(seed)
    k = 0
    while not GAME.is_over(st):
        seats = GAME.to_act(st)
        for s in seats:
            st = GAME.apply(st, s, rng.choice(GAME.legal(st, s)))
            k += 1
            if k % every == 0:
                states.append(GAME.copy(st))
    return states


@pytest.mark.parametrize("n", [3, 4, 5])
@pytest.mark.parametrize("opts", VARIANTS, ids=lambda o: f"t{int(o['tactical'])}c{int(o['chaotic'])}")
def test_redeal_hidden_keeps_the_view_and_changes_the_hidden(n, opts):
    rng = random.Random(n)
    changed = 0
    total = 0
    for state in _sample_states(n, opts, seed=n * 10):
        for seat in range(n):
            copy = GAME.redeal_hidden(state, seat, rng)
            assert GAME.view(copy, seat) == GAME.view(state, seat)
            assert GAME.invariants(copy) == []
            total += 1
            others = [s for s in range(n) if s != seat]
            if any(copy.hands[s] != state.hands[s] for s in others) or copy.pending != state.pending:
                changed += 1
            # the copy is playable to the end
            if total % 17 == 0:
                r2 = random.Random(total)
                while not GAME.is_over(copy):
                    for s in GAME.to_act(copy):
                        copy = GAME.apply(copy, s, r2.choice(GAME.legal(copy, s)))
                        assert GAME.invariants(copy) == []
    assert changed > total * 0.8


@pytest.mark.parametrize("chaotic", [False, True])
def test_other_hands_and_unused_cards_never_change_a_view(chaotic):
    for state in _sample_states(4, {"chaotic": chaotic}, seed=5, every=5):
        for seat in range(4):
            before = GAME.view(state, seat)
            other = (seat + 1) % 4
            hacked = GAME.copy(state)
            if hacked.hands[other] and hacked.unused:
                a, b = hacked.hands[other][0], hacked.unused[-1]
                hacked.hands[other][0], hacked.unused[-1] = b, a
                hacked.hands[other].sort()
                hacked.unused.sort()
            hacked.score_deck.reverse()
            hacked.rng = random.Random(0)
            if chaotic and hacked.pending[other] is not None and hacked.hands[other]:
                p = hacked.pending[other]
                hacked.pending[other] = hacked.hands[other].pop()
                hacked.hands[other] = sorted(hacked.hands[other] + [p])
            assert GAME.view(hacked, seat) == before
            assert not any(key in before for key in ("hands", "unused", "score_deck", "pending", "rng"))


# Views show the end of every round (RULES.md §2, "What a seat sees") -------------------


@pytest.mark.parametrize("opts", VARIANTS)
def test_previous_round_shows_the_whole_finished_round_to_every_seat(opts):
    n = 4
    st = GAME.setup(n, 17, opts)
    dealt = [list(h) for h in st.hands]
    assert all(GAME.view(st, s)["previous_round"] is None for s in range(n))
    pick = random.Random(17)
    while st.round == 0:
        for s in GAME.to_act(st):
            st = GAME.apply(st, s, pick.choice(GAME.legal(st, s)))
    views = [GAME.view(st, s) for s in range(n)]
    prev = views[0]["previous_round"]
    assert all(v["previous_round"] == prev for v in views)
    assert prev["round"] == 0 and prev["dealer"] == 0 and views[0]["tricks"] == []
    tricks = prev["tricks"]
    assert len(tricks) == D.TRICKS_PER_ROUND and all(len(t["plays"]) == n for t in tricks)
    for s in range(n):
        played = sorted(p["card"] for t in tricks for p in t["plays"] if p["seat"] == s)
        assert played == dealt[s], f"seat {s}'s cards of round 0 are not all shown"
    last = tricks[-1]
    hi = max(last["plays"], key=lambda p: p["card"])["seat"]
    lo = min(last["plays"], key=lambda p: p["card"])["seat"]
    assert last["blue_to"] in (hi, None) and last["red_to"] in (lo, None)
    assert prev["tricks"][0]["leader"] == 1


def test_chaotic_ninth_trick_is_shown_after_the_round():
    """In chaotic mode nobody sees the 9th trick while it is played; the next round's
    view shows it, with the score cards, the cards and who took the sticks."""
    st = GAME.setup(3, 4, {"chaotic": True})
    while st.trick < D.TRICKS_PER_ROUND - 1:
        for s in GAME.to_act(st):
            st = GAME.apply(st, s, GAME.legal(st, s)[0])
    last_hands = [list(h) for h in st.hands]
    score = GAME.view(st, 0)["score"]
    for s in GAME.to_act(st):
        st = GAME.apply(st, s, GAME.legal(st, s)[0])
    assert st.round == 1
    ninth = GAME.view(st, 2)["previous_round"]["tricks"][-1]
    assert ninth["plays"] == [
        {"seat": (ninth["leader"] + i) % 3, "card": last_hands[(ninth["leader"] + i) % 3][0]} for i in range(3)
    ]
    assert ninth["score_cards"] == score["cards"] and (ninth["red"], ninth["blue"]) == (score["red"], score["blue"])


def test_final_view_keeps_the_last_round_complete():
    """After the last round nothing is dealt: the final view still lists its 9 tricks."""
    st = GAME.setup(3, 8, {"chaotic": True})
    pick = random.Random(8)
    while not GAME.is_over(st):
        for s in GAME.to_act(st):
            st = GAME.apply(st, s, pick.choice(GAME.legal(st, s)))
    final = GAME.view(st, 1)
    assert len(final["tricks"]) == D.TRICKS_PER_ROUND and all(len(t["plays"]) == 3 for t in final["tricks"])
    assert final["previous_round"] is None and not final["your_turn"] and final["hand"] == []


@pytest.mark.parametrize("opts", VARIANTS)
def test_every_seat_is_shown_each_finished_round_once_in_trick_zero(opts):
    n = 3
    st = GAME.setup(n, 6, opts)
    pick = random.Random(6)
    shown: dict[int, list[int]] = {s: [] for s in range(n)}
    while not GAME.is_over(st):
        for s in GAME.to_act(st):
            view = GAME.view(st, s)
            prev = view["previous_round"]
            assert (prev is not None) == (view["trick"] == 0 and view["round"] > 0)
            if prev is not None:
                assert prev["round"] == view["round"] - 1 and len(prev["tricks"]) == D.TRICKS_PER_ROUND
                shown[s].append(prev["round"])
            st = GAME.apply(st, s, pick.choice(GAME.legal(st, s)))
    assert all(shown[s] == [0, 1] for s in range(n))
