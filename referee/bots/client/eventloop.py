"""The event loop the referee plays on: uvloop where it is installed (the ``fast`` extra,
which ``make`` installs), else asyncio's own; ``REFEREE_EVENT_LOOP=asyncio`` picks
asyncio's where uvloop is installed too. Outputs are the same on either, timings aside
(``tests/test_eventloop.py`` plays one tournament on each and compares them).

uvloop's clock counts whole milliseconds (``loop.time()`` is the last millisecond begun),
so a deadline taken from it is set ``clock_step`` later: never early by up to a
millisecond, late by at most one, as asyncio's own timers are.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
ENV = "REFEREE_EVENT_LOOP"  # "asyncio" or "uvloop"; unset: uvloop where installed

_STEP: dict[type, float] = {}  # per loop class: the resolution of its clock, in seconds


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's ``new_event_loop`` when it is installed and not refused by ``ENV``; None
    (asyncio's own loop) otherwise."""
    if os.environ.get(ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def name() -> str:
    """The loop ``run`` plays on: "uvloop" or "asyncio"."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop ``loop_factory`` picks."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)


def clock_step(loop: asyncio.AbstractEventLoop) -> float:
    """The resolution of ``loop.time()``: 0.0 for asyncio's (nanoseconds), 0.001 for uvloop's."""
    step = _STEP.get(type(loop))
    if step is None:
        step = _STEP[type(loop)] = 0.0 if isinstance(loop, asyncio.BaseEventLoop) else 0.001
    return step
