"""Sample bots for Dieci (game id ``dieci``).

Run one with ``python -m sample_bots.dieci threshold --port 8001``.

Every ``act`` message carries ``state`` (this seat's view) and ``legal`` (every legal
action, plain strings). ``state["decision"]`` says what is asked:

* ``"turn"``: your turn in the play order; ``legal == ["keep", "swap"]``. A swap offers
  your card to ``state["target"]`` (the next player), who must take it unless they hold a
  6-10: a 9 (Lupo) or an 8 (Puzzola) block costs you a token.
* ``"respond"``: ``state["asker"]`` wants to swap with you and you hold a 6-10;
  ``legal == ["accept", "block"]``. Blocking shows your card and keeps it (a 7 passes the
  swap on to the next player).
* ``"dealer"``: you deal, you decide last; ``legal == ["keep", "draw"]``. A draw swaps your
  card with the deck's top card, unless that card is a 6-10 (then you keep yours).

Your card is ``state["card"]``, a rank key: "10".."1", "0", "00", "000", "0000" or
"jollygatto" (worth the same as "0000"). At the showdown every holder of the lowest
value loses a token. The reply is ``{"action": <one element of legal>}``.

Strategies
----------
``random``     a random legal action.
``threshold``  swaps only a card worth at most SWAP_AT (-1: "00", "000", "0000",
               "jollygatto"), always blocks when it may (it is only asked while holding
               a 6-10, which beats whatever the asker is getting rid of), and as dealer
               draws with a card worth at most DRAW_AT (0); a drawn 6-10 is harmless.
               Swapping is expensive: one target in seven holds a Lupo or a Puzzola,
               each a token, so only cards that are very likely the lowest are passed.
``bold``       the same, but swaps anything worth 2 or less and draws with 1 or less.
``keeper``     never swaps or draws, always blocks.
"""

from __future__ import annotations

from typing import Any

from sample_bots._server import main, message_rng

VALUE = {
    "10": 10,
    "9": 9,
    "8": 8,
    "7": 7,
    "6": 6,
    "5": 5,
    "4": 4,
    "3": 3,
    "2": 2,
    "1": 1,
    "0": 0,
    "00": -1,
    "000": -2,
    "0000": -3,
    "jollygatto": -3,
}

# Tuned on in-process matches against random seats (scripts/eval_dieci.py --sweep).
SWAP_AT = -1  # swap on your turn a card worth at most this
DRAW_AT = 0  # as dealer, draw from the deck with a card worth at most this


def random_strategy(message: dict[str, Any]) -> dict[str, Any]:
    """A random legal action."""
    return {"action": message_rng(message, "random").choice(message["legal"])}


def threshold_play(message: dict[str, Any], swap_at: int, draw_at: int) -> dict[str, Any]:
    """Get rid of a card worth at most the threshold; always block when asked."""
    state = message["state"]
    value = VALUE[state["card"]]
    decision = state["decision"]
    if decision == "respond":
        return {"action": "block"}  # asked only while holding a 6-10: keep it
    if decision == "dealer":
        return {"action": "draw" if value <= draw_at else "keep"}
    return {"action": "swap" if value <= swap_at else "keep"}


def threshold(message: dict[str, Any]) -> dict[str, Any]:
    """The tuned threshold bot."""
    return threshold_play(message, SWAP_AT, DRAW_AT)


def bold(message: dict[str, Any]) -> dict[str, Any]:
    """Swaps any card worth 2 or less; draws with 1 or less."""
    return threshold_play(message, 2, 1)


def keeper(message: dict[str, Any]) -> dict[str, Any]:
    """Never swaps or draws; blocks whenever it may."""
    return {"action": "block" if "block" in message["legal"] else "keep"}


STRATEGIES = {"random": random_strategy, "threshold": threshold, "bold": bold, "keeper": keeper}

if __name__ == "__main__":
    main(STRATEGIES)
