"""Property tests: no registered game leaks what a seat cannot see (issue 7).

Hypothesis picks a game's seat count, options (every choice and flag, small numbers),
deal seed and the random choices of a playout, and a point in that playout. There, for
every seat ``s``, whatever ``s`` cannot see is re-dealt (``redeal_hidden``) several
times: ``s``'s view, legal list, whether it acts and the whole ``act`` message bytes
must not change. One seat then plays on in lockstep in the real and a re-dealt match
(the same choices where it can): as long as its views agree, its messages must agree,
and if both matches end that way, so must its ``end`` message. Finally the real match
is played to its end and the ``end`` message of every seat must survive a re-deal of
what that seat still cannot see, so the published result reveals nothing hidden.

Two sanity tests prove the properties can fail: a game whose view shows another seat's
hand and a game whose result lists the hands are both caught.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st

from referee.bots.client import protocol
from referee.games import GAMES
from referee.games.base import Game, OptionError, OptionSpec, Result

pytestmark = pytest.mark.parallel

MAX_BATCHES = 5_000  # bound on any playout; real matches take at most a few hundred
LOCKSTEP_BATCHES = 400  # bound on the lockstep continuation
REDEALS = 3  # re-deals per seat and checked state
# at the end (a whole match's state: the costliest copy) one re-deal per seat and example
END_REDEALS = 1
DEADLINE_MS = 1000
# Tuned so the whole file stays well under 30 s on a loaded 2-core machine.
EXAMPLES = {"dieci": 150, "drahtseilakt": 150, "nimmt_plus": 150, "the_game": 250}

Choices = list[list[int]]  # per batch of to_act, the index chosen by each seat in order


# Strategies --------------------------------------------------------------------------


def option_values(spec: OptionSpec) -> st.SearchStrategy[Any]:
    """Values of one option: every choice, both flags, small numbers from the minimum,
    small per-key counts for a table option (Dieci's deck)."""
    default = spec.default
    if spec.choices is not None:
        return st.sampled_from(spec.choices)
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, int):
        low = spec.minimum if spec.minimum is not None else 0
        return st.just(default) | st.integers(low, low + 6)
    if isinstance(default, dict):
        top = max((v for v in default.values() if isinstance(v, int)), default=4) + 2
        return st.dictionaries(st.sampled_from(sorted(default)), st.integers(0, top), max_size=len(default))
    return st.just(default)


@st.composite
def setups(draw: st.DrawFn, game: Game) -> tuple[int, dict[str, Any], int]:
    """(seats, checked options, deal seed) for ``game``; combinations it refuses are
    filtered out."""
    seats = draw(st.integers(game.info.min_seats, game.info.max_seats))
    chosen = {o.name: draw(option_values(o)) for o in game.info.options if draw(st.booleans())}
    try:
        options = game.check_options(seats, chosen)
    except OptionError:
        reject()
    seed = draw(st.integers(0, 2**32 - 1))
    return seats, options, seed


# Playing -----------------------------------------------------------------------------


def batch(game: Game, state: Any) -> list[tuple[int, list[Any]]]:
    """The seats asked now with their legal lists, taken before any of them plays (as
    ``match.play_match`` does)."""
    return [(s, game.legal(state, s)) for s in game.to_act(state)]


def play(game: Game, state: Any, pick: random.Random, batches: int, asked: list[int]) -> tuple[Any, int]:
    """Play up to ``batches`` batches of random legal choices; return the state and the
    number of batches played. ``asked`` counts each seat's decisions (updated)."""
    for played in range(batches):
        if game.is_over(state):
            return state, played
        for s, legal in batch(game, state):
            assert legal, f"seat {s} must act but has no legal action"
            asked[s] += 1
            state = game.apply(state, s, legal[pick.randrange(len(legal))])
    return state, batches


def advance_both(
    game: Game, real: Any, dealt: Any, pick: random.Random, asked_real: list[int], asked_dealt: list[int]
) -> tuple[Any, Any]:
    """Play one batch in both matches: each seat plays a random legal action in the real
    one, and in the re-dealt one the same action if it is legal there, else the one at
    the same index (so the matches stay alike as long as they can)."""
    draws = [pick.getrandbits(32) for _ in asked_real]
    played: dict[int, Any] = {}
    for s, legal in batch(game, real):
        asked_real[s] += 1
        played[s] = legal[draws[s] % len(legal)]
        real = game.apply(real, s, played[s])
    for s, legal in batch(game, dealt):
        asked_dealt[s] += 1
        same = s in played and protocol.find_legal(played[s], legal) >= 0
        dealt = game.apply(dealt, s, played[s] if same else legal[draws[s] % len(legal)])
    return real, dealt


def context(game: Game, seats: int, options: Mapping[str, Any]) -> protocol.MatchContext:
    """The match context every message of the test match shares."""
    return protocol.MatchContext("props", "m000001", game.info.id, options, [f"bot{s}" for s in range(seats)])


def act_bytes(game: Game, ctx: protocol.MatchContext, state: Any, seat: int, decision: int) -> bytes:
    """The ``act`` message ``seat`` would get now (also when it is not asked)."""
    return protocol.act(ctx, seat, decision, DEADLINE_MS, game.view(state, seat), game.legal(state, seat))


def end_bytes(game: Game, ctx: protocol.MatchContext, state: Any, seat: int, result: Result | None = None) -> bytes:
    """The ``end`` message ``seat`` gets, with the result (``game.result(state)`` unless
    given) published as ``match.py`` publishes it when nobody forfeited, and the seat's view
    of the final position."""
    result = game.result(state) if result is None else result
    published = {
        "scores": result.scores,
        "ranks": result.ranks,
        "lower_is_better": result.lower_is_better,
        "forfeited": [],
        "details": result.details,
    }
    return protocol.end(ctx, seat, published, game.view(state, seat))


# The properties ------------------------------------------------------------------------


def assert_blind(
    game: Game, ctx: protocol.MatchContext, state: Any, seat: int, decision: int, rng: random.Random
) -> None:
    """Re-dealing what ``seat`` cannot see changes nothing ``seat`` is told."""
    view = game.view(state, seat)
    legal = game.legal(state, seat)
    acts = seat in game.to_act(state)
    message = act_bytes(game, ctx, state, seat, decision)
    for _ in range(REDEALS):
        other = game.redeal_hidden(state, seat, rng)
        assert game.view(state, seat) == view, "redeal_hidden changed the original state"
        assert game.view(other, seat) == view, f"seat {seat}'s view changed when only hidden information did"
        assert game.legal(other, seat) == legal, f"seat {seat}'s legal actions depend on what it cannot see"
        assert (seat in game.to_act(other)) == acts, f"whether seat {seat} acts depends on what it cannot see"
        assert act_bytes(game, ctx, other, seat, decision) == message, f"seat {seat}'s act message leaks"


def assert_end_blind(game: Game, ctx: protocol.MatchContext, final: Any, seats: int, rng: random.Random) -> None:
    """At the end, re-dealing what a seat still cannot see changes neither its view nor
    its ``end`` message: the published result reveals nothing hidden."""
    result = game.result(final)
    for s in range(seats):
        message, view = end_bytes(game, ctx, final, s, result), game.view(final, s)
        for _ in range(END_REDEALS):
            other = game.redeal_hidden(final, s, rng)
            assert game.is_over(other), "a re-deal of a finished match must be finished"
            assert game.view(other, s) == view, f"seat {s}'s final view leaks"
            assert end_bytes(game, ctx, other, s) == message, f"seat {s}'s end message reveals hidden information"


def assert_lockstep(
    game: Game, ctx: protocol.MatchContext, state: Any, seat: int, asked: list[int], rng: random.Random, pick_seed: int
) -> None:
    """Play a real and a re-dealt copy on together, ``seat`` making the same choices and
    the others the same choice indices: while ``seat``'s views agree its act messages
    (decision numbers included) agree, and if both end that way its end messages agree."""
    real, dealt = game.copy(state), game.redeal_hidden(state, seat, rng)
    asked_real, asked_dealt = list(asked), list(asked)
    pick = random.Random(pick_seed)
    for _ in range(LOCKSTEP_BATCHES):
        if game.view(real, seat) != game.view(dealt, seat):
            return  # public information differs now (others played other cards): stop
        over = game.is_over(real), game.is_over(dealt)
        if over == (True, True):
            assert end_bytes(game, ctx, real, seat) == end_bytes(game, ctx, dealt, seat), (
                f"seat {seat} saw the same match but got different end messages"
            )
            return
        if True in over:
            return
        assert (seat in game.to_act(real)) == (seat in game.to_act(dealt)), f"seat {seat} acts in one match only"
        assert act_bytes(game, ctx, real, seat, asked_real[seat]) == act_bytes(
            game, ctx, dealt, seat, asked_dealt[seat]
        ), f"seat {seat} saw the same match but got different act messages"
        real, dealt = advance_both(game, real, dealt, pick, asked_real, asked_dealt)
    raise AssertionError(f"lockstep did not settle within {LOCKSTEP_BATCHES} batches")


def check_leak_proof(game: Game, data: st.DataObject) -> None:
    """The whole property for one example: a reachable state, the lockstep, the end."""
    seats, options, seed = data.draw(setups(game), label="setup")
    choice_seed = data.draw(st.integers(0, 2**32 - 1), label="choice seed")
    ctx = context(game, seats, options)

    _, length = play(game, game.setup(seats, seed, options), random.Random(choice_seed), MAX_BATCHES, [0] * seats)
    assert length < MAX_BATCHES, f"no end after {MAX_BATCHES} batches"
    stop = data.draw(st.integers(0, length), label="batches played")
    pick = random.Random(choice_seed)
    asked = [0] * seats
    state, _ = play(game, game.setup(seats, seed, options), pick, stop, asked)

    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="redeal seed"))
    for s in range(seats):
        assert_blind(game, ctx, state, s, asked[s], rng)
    watched = data.draw(st.integers(0, seats - 1), label="lockstep seat")
    assert_lockstep(game, ctx, state, watched, asked, rng, choice_seed ^ 0x5EED)

    final, _ = play(game, state, pick, MAX_BATCHES, asked)
    assert game.is_over(final)
    assert_end_blind(game, ctx, final, seats, rng)


def run_property(game: Game, **overrides: Any) -> None:
    """Run ``check_leak_proof`` for ``game`` under Hypothesis."""
    config = {
        "max_examples": EXAMPLES.get(game.info.id, 30),
        "deadline": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much],
        **overrides,
    }

    @settings(**config)
    @given(data=st.data())
    def prop(data: st.DataObject) -> None:
        check_leak_proof(game, data)

    prop()


@pytest.mark.parametrize("gid", sorted(GAMES))
def test_no_view_act_or_end_message_leaks(gid: str) -> None:
    run_property(GAMES[gid])


# Sanity: the properties catch leaks ----------------------------------------------------

_SANITY = {"max_examples": 30, "derandomize": True, "database": None, "phases": [Phase.generate]}
_Nimmt = type(GAMES["nimmt_plus"])
_TheGame = type(GAMES["the_game"])


class PeekingNimmt(_Nimmt):  # type: ignore[valid-type, misc]
    """6 nimmt! whose view also shows the next seat's hand: a leak."""

    def view(self, state: Any, seat: int) -> dict[str, Any]:
        out = super().view(state, seat)
        out["peek"] = super().view(state, (seat + 1) % state.seats)["hand"]
        return out


class TellingTheGame(_TheGame):  # type: ignore[valid-type, misc]
    """The Game whose result lists the hands left (hidden at the end): a leak."""

    def result(self, state: Any) -> Result:
        out = super().result(state)
        out.details["hands"] = [list(h) for h in state.hands]
        return out


def test_a_peeking_view_is_caught() -> None:
    with pytest.raises(AssertionError, match=r"view changed|act message leaks"):
        run_property(PeekingNimmt(), **_SANITY)


def test_a_telling_result_is_caught() -> None:
    with pytest.raises(AssertionError, match="end message"):
        run_property(TellingTheGame(), **_SANITY)
