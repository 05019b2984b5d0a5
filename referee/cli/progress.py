"""The one progress display of every long command (``run``, the publish at its end,
``verify``, ``leaderboard``): one line on stderr, rewritten in place on a terminal.

Off a terminal it is silent, but for the run's matches: a line every 5 s, so a log shows
the run is alive (``every_s``); ``--quiet`` silences it everywhere. Our own ~80 lines
rather than a library such as ``rich``: the run's line already existed, its off-terminal
behaviour (a line every 5 s) is one a library would not give, and no dependency is added.
"""

from __future__ import annotations

import sys
import time

import click

from referee.config.model import TournamentConfig
from referee.report.policy import announce
from referee.run.lineup import BotStatus, readiness, readiness_list
from referee.run.sink import Progress
from referee.schedule.formats import match_count

TTY_EVERY_S = 0.2  # redraws on a terminal
LOG_EVERY_S = 5.0  # lines off a terminal, for the commands that print them


class ProgressLine:
    """One updating line (see the module doc); ``step`` is an ``on_progress(done, total,
    what)`` callback of the publishing code."""

    def __init__(self, quiet: bool, every_s: float | None = None) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.every_s = TTY_EVERY_S if self.tty else every_s
        self.last = 0.0
        self.shown = False
        self._step: tuple[str, float] = ("", 0.0)  # the step shown and when it began

    def show(self, line: str, final: bool = False) -> None:
        """Show ``line``, at most every ``every_s`` unless ``final`` (a step's end)."""
        now = time.monotonic()
        if self.quiet or self.every_s is None or (not final and now - self.last < self.every_s):
            return
        self.last = now
        if self.tty:
            sys.stderr.write("\r" + line + "\x1b[K")
            sys.stderr.flush()
            self.shown = True
        else:
            click.echo(line, err=True)

    def step(self, done: int, total: int, what: str) -> None:
        """``done`` of ``total`` items of the step ``what``, with its rate and time left
        (on a terminal only: off one, the steps of a publish are silent)."""
        if not self.tty:
            return
        now = time.monotonic()
        if self._step[0] != what or done == 0:
            self._step = (what, now)
        elapsed = now - self._step[1]
        line = f"{what} {done}/{total}"
        if 0 < done < total and elapsed > 0:
            rate = done / elapsed
            line += f"  {rate:.1f}/s  elapsed {elapsed:.1f}s  eta {(total - done) / rate:.0f}s"
        elif done >= total:
            line += f"  in {elapsed:.1f}s"
        self.show(line, final=done >= total)

    def warn(self, message: str) -> None:
        """A warning (a live publish that failed, pages not written), on a line of its own."""
        self.finish()
        click.echo(f"warning: {message}", err=True)

    def finish(self) -> None:
        """End the updating line (a message printed next starts on a line of its own)."""
        if self.tty and self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False


class RunDisplay(ProgressLine):
    """The run's display: its bots' hello, its matches, its warnings, then its publish."""

    def __init__(self, quiet: bool, verbose: bool = False) -> None:
        super().__init__(quiet, every_s=LOG_EVERY_S)
        self.verbose = verbose
        self.progress: Progress | None = None
        self.lineup: TournamentConfig | None = None  # the config played, once the lineup is judged
        self.first: tuple[int, float] | None = None  # (matches played, elapsed s) at the first match played

    def ready(self, statuses: list[BotStatus]) -> None:
        """The bots' hello in one line (every bot's with --verbose; the unready ones always)."""
        line, all_ready = readiness(statuses)
        if not (all_ready and self.quiet) or self.verbose:  # bots that failed are named even with --quiet
            click.echo(line, err=True)
        if self.verbose or not all_ready:
            for text in readiness_list(statuses if self.verbose else [s for s in statuses if not s.ok]):
                click.echo(text, err=True)

    def lineup_judged(self, config: TournamentConfig) -> None:
        """The lineup the run plays: name the excluded bots, write ``tournament.json`` again."""
        self.lineup = config
        if config.excluded:
            click.echo(
                f"on_unready = 'exclude': playing without {len(config.excluded)} bot(s): "
                + "; ".join(f"{n} ({r})" for n, r in config.excluded),
                err=True,
            )
        announce(config, match_count(config))

    def update(self, p: Progress) -> None:
        """Show ``p`` (at most every 0.2 s on a terminal, every 5 s otherwise, and at the end)."""
        self.progress = p
        line = f"matches {p.done}/{p.total}  faults {p.faults}"
        rate = self.rate(p)
        if rate is not None:  # measured on matches played, never on the wait for the bots
            line += f"  {rate:.1f} matches/s  elapsed {p.elapsed_s:.1f}s  eta {(p.total - p.done) / rate:.0f}s"
        else:
            line += f"  elapsed {p.elapsed_s:.1f}s"
        self.show(line, final=p.done >= p.total)

    def rate(self, p: Progress) -> float | None:
        """Matches per second since the first match of this run ended; None before two have."""
        played = p.done - p.skipped
        if self.first is None:
            if played > 0:
                self.first = (played, p.elapsed_s)
            return None
        n, t = self.first
        return (played - n) / (p.elapsed_s - t) if played > n and p.elapsed_s > t else None
