"""The whole-transcript fast path (``Game.replay``) against the ordinary engine.

On many random playouts of every variant and seat count, ``replay`` gives exactly the
result the ordinary ``setup``/``to_act``/``legal``/``apply`` loop gives; on transcripts
changed at one decision (an illegal card, a legal but different card, the wrong seat,
a bad type, cut short, run long) it refuses exactly those the ordinary loop refuses, and
where both accept they agree. The shuffle the deals use is the stdlib's, draw for draw.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from referee.games import base, get_game
from referee.games.base import IllegalAction, _shuffle
from referee.games.nimmt_plus import GAME

pytestmark = pytest.mark.parallel

VARIANTS = ("plus", "plus_dealt_zeros", "zeros_negative", "simple")


def playout(variant: str, seats: int, seed: int, zero_heads: int = 0) -> tuple[list[int], list[Any], dict[str, Any]]:
    """A random legal playout the ordinary way: the seats, actions and result."""
    opts = GAME.check_options(seats, {"variant": variant, "zero_heads": zero_heads})
    state = GAME.setup(seats, seed, opts)
    rng = random.Random(seed * 7 + 1)
    order: list[int] = []
    actions: list[Any] = []
    while not GAME.is_over(state):
        for s in GAME.to_act(state):
            legal = GAME.legal(state, s)
            # singles more often than the uniform pick would, so hands last several turns
            a = rng.choice(legal if rng.random() < 0.5 else legal[:16])
            order.append(s)
            actions.append(list(a))
            state = GAME.apply(state, s, a)
    return order, actions, GAME.result(state).to_json()


def ordinary(variant: str, seats: int, seed: int, order: list[Any], actions: list[Any], zero_heads: int = 0) -> Any:
    """What verify's ordinary loop makes of a transcript: the result, or None when refused."""
    opts = GAME.check_options(seats, {"variant": variant, "zero_heads": zero_heads})
    state = GAME.setup(seats, seed, opts)
    i = 0
    while not GAME.is_over(state):
        for s in GAME.to_act(state):
            if i >= len(order) or order[i] != s:
                return None
            try:
                state = GAME.apply(state, s, actions[i])
            except IllegalAction:
                return None
            i += 1
    if i < len(order):
        return None
    return GAME.result(state).to_json()


def fast(variant: str, seats: int, seed: int, order: list[Any], actions: list[Any], zero_heads: int = 0) -> Any:
    opts = GAME.check_options(seats, {"variant": variant, "zero_heads": zero_heads})
    result = GAME.replay(GAME.setup(seats, seed, opts), order, actions)
    return None if result is None else result.to_json()


CASES = [(v, n, seed) for v in VARIANTS for n in range(2, 8) for seed in range(6)]


@pytest.mark.parametrize(("variant", "seats", "seed"), CASES)
def test_replay_gives_the_ordinary_result(variant: str, seats: int, seed: int) -> None:
    zero_heads = seed % 3  # 0, 1, 2: scored in the positive variants only
    order, actions, result = playout(variant, seats, 1000 * seats + seed, zero_heads)
    assert fast(variant, seats, 1000 * seats + seed, order, actions, zero_heads) == result
    assert ordinary(variant, seats, 1000 * seats + seed, order, actions, zero_heads) == result


def tampered(order: list[int], actions: list[Any], rng: random.Random) -> tuple[list[Any], list[Any]]:
    """The transcript changed at one place, in one of the ways a forger or a bug might."""
    order, actions = list(order), [list(a) if isinstance(a, list) else a for a in actions]
    i = rng.randrange(len(order))
    how = rng.randrange(10)
    if how == 0:
        actions[i] = [rng.randrange(0, 106)]
    elif how == 1:
        actions[i] = sorted(rng.sample(range(0, 105), 2))
    elif how == 2:
        actions[i] = actions[rng.randrange(len(actions))]  # maybe legal, maybe not
    elif how == 3:
        order[i] = (order[i] + 1 + rng.randrange(6)) % 8
    elif how == 4:
        actions[i] = rng.choice([[True], [1.0], "5", [], [0, 0], [0, 0, 0], [5, 3], None, {"card": 5}, [-1]])
    elif how == 5:
        del order[i:], actions[i:]
    elif how == 6:
        order.append(order[-1])
        actions.append(actions[-1])
    elif how == 7:
        j = rng.randrange(len(order))
        actions[i], actions[j] = actions[j], actions[i]
    elif how == 8:
        a = actions[i]
        actions[i] = [a[0], a[0]] if a else [0, 0]
    else:
        a = actions[i]
        actions[i] = a[::-1] + [a[0]] if a else [1]
    return order, actions


@pytest.mark.parametrize("variant", VARIANTS)
def test_replay_refuses_exactly_what_the_ordinary_loop_refuses(variant: str) -> None:
    rng = random.Random(variant)
    refused = accepted = 0
    for k in range(160):
        seats = 2 + k % 6
        seed = 50_000 + k
        order, actions, _ = playout(variant, seats, seed)
        order2, actions2 = tampered(order, actions, rng)
        want = ordinary(variant, seats, seed, order2, actions2)
        assert fast(variant, seats, seed, order2, actions2) == want, (seats, seed)
        refused += want is None
        accepted += want is not None
    assert refused > 60 and accepted >= 1  # both kinds were really tried


def test_replay_wants_a_fresh_deal() -> None:
    opts = GAME.check_options(4, {})
    state = GAME.setup(4, 3, opts)
    state = GAME.apply(state, 0, GAME.legal(state, 0)[0])
    assert GAME.replay(state, [1, 2, 3], [[1], [2], [3]]) is None


def test_games_without_a_fast_path_say_so() -> None:
    for gid in ("the_game", "drahtseilakt", "dieci"):
        game = get_game(gid)
        assert not game.fast_replay
        assert game.replay(game.setup(game.info.min_seats, 1, {}), [], []) is None
    assert GAME.fast_replay


@pytest.mark.parametrize("size", [0, 1, 2, 5, 64, 65, 104, 107, 300, 513, 1500])
def test_the_inline_shuffle_is_the_stdlib_shuffle(size: int) -> None:
    assert base._INLINE  # this Python's shuffle draws as the inline one expects
    a, b = list(range(size)), list(range(size))
    ra, rb = random.Random(size * 31 + 7), random.Random(size * 31 + 7)
    for _ in range(5):
        ra.shuffle(a)
        _shuffle(rb, b)
        assert a == b
    assert ra.getstate() == rb.getstate()
