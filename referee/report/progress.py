"""Progress of long publishing work: the callback every publishing function accepts.

``on_progress(done, total, what)``: ``done`` of ``total`` items of the step ``what``
(e.g. "replay pages") are finished. A caller shows it (``referee.cli.progress``); a step
reports at its start (``done`` 0) and at its end (``done == total``), and as often in
between as is cheap. Never called from hot per-decision code.
"""

from __future__ import annotations

from collections.abc import Callable

OnProgress = Callable[[int, int, str], None]


def nothing(done: int, total: int, what: str) -> None:
    """The callback of a caller that shows no progress."""
