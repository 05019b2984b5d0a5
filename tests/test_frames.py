"""``match.frames``: a match's decisions again through the rules, each with the view its
seat was sent (for a simultaneous choice, every view taken before any move is applied);
a transcript the rules refuse names the decision, and ``store.matches`` adds the match."""

from __future__ import annotations

import random
from typing import Any

import pytest

from referee.errors import ReplayError
from referee.games import get_game
from referee.match.frames import frames
from referee.record import BOT, Move
from referee.store.matches import Match
from referee.store.transcripts import Transcript

pytestmark = pytest.mark.parallel


def played(game_id: str, n: int, seed: int) -> tuple[Any, dict[str, Any], list[Move], list[Any], list[Any]]:
    """A random playout: the game, options, moves, each move's sent view and the views after it."""
    game = get_game(game_id)
    options = game.check_options(n, {})
    state = game.setup(n, seed, options)
    rng = random.Random(seed)
    moves: list[Move] = []
    sent: list[Any] = []
    after: list[Any] = []
    counts = [0] * n
    while not game.is_over(state):
        group = [(s, game.view(state, s), game.legal(state, s)) for s in game.to_act(state)]
        for s, view, legal in group:
            action = rng.choice(legal)
            state = game.apply(state, s, action)
            moves.append(Move(s, counts[s], action, BOT))
            counts[s] += 1
            sent.append(view)
            after.append([game.view(state, k) for k in range(n)])
    return game, options, moves, sent, after


@pytest.mark.parametrize(("game_id", "n"), [("nimmt_plus", 3), ("the_game", 3), ("drahtseilakt", 3), ("dieci", 4)])
def test_frames_give_the_views_play_sent(game_id: str, n: int) -> None:
    game, options, moves, sent, after = played(game_id, n, 11)
    got = list(frames(game, options, 11, n, moves, after=True))
    assert [f.index for f in got] == list(range(len(moves)))
    assert [f.move for f in got] == moves
    assert [f.sent for f in got] == sent
    assert [f.after for f in got] == after
    assert all(f.after is None for f in frames(game, options, 11, n, moves))


def test_a_move_out_of_turn_names_the_decision_and_the_match() -> None:
    game, options, moves, _, _ = played("drahtseilakt", 3, 4)
    wrong = moves[:2] + [Move((moves[2].seat + 1) % 3, 0, moves[2].action, BOT)] + moves[3:]
    with pytest.raises(ReplayError, match=r"^decision 3 is seat \d's, the rules ask seat \d$"):
        list(frames(game, options, 4, 3, wrong))
    tr = Transcript(
        "m000007", 4, [m.seat for m in wrong], [m.action for m in wrong], "b" * len(wrong), [1] * len(wrong), {}, {}, {}
    )
    m = Match(game, options, {"id": "m000007", "seed": 4, "bots": ["a", "b", "c"]}, tr, "t")
    with pytest.raises(ReplayError, match=r"^match m000007: decision 3 is seat"):
        list(m.frames())
