"""Hostile bot servers and their well-behaved twin, run as real processes by
``tests/test_hostile.py`` (``server.py``: one hostile bot per ``--mode``; ``twin.py``: a
bot that plays exactly the referee's fallback moves)."""
