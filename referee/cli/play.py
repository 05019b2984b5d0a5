"""The commands that play: ``run``, ``check`` (hello only) and ``plan`` (a pilot)."""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
import signal
import sys
from pathlib import Path

import click

from referee import __version__
from referee.bots.client import eventloop
from referee.cli.common import EXIT_FAILED, EXIT_OK, load, mark, usage
from referee.cli.progress import RunDisplay
from referee.config.model import TournamentConfig
from referee.errors import BotStartError, JournalError, OutputError, RefereeError
from referee.report.policy import announce, publish_final
from referee.report.publish import CONSOLE_ROWS, render_console
from referee.run.fresh import closed_reason, finish_moves, move_aside, season_line, season_of, stamp
from referee.run.lineup import excluded_before, greet_all, judge_lineup, readiness, without
from referee.run.pilot import pilot
from referee.run.rejoin import greet_again
from referee.run.runner import RunReport, read_journal, run_tournament
from referee.run.season import resolve_ladder
from referee.run.seeds import resolve_schedule_version, resolve_seed
from referee.schedule.formats import match_count, schedule, seat_balance
from referee.schedule.registry import format_class
from referee.store.journal import JOURNAL
from referee.store.tournament_file import read_settings

SEED_NOTE = (
    "note: the seed is given (in the file or by --seed): anyone who can guess it can predict every hand; "
    "for a competition leave it out (a secret seed is drawn, committed to, and revealed at the end)"
)


@click.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--resume", is_flag=True, help="Play only the matches missing from the output's matches.jsonl.")
@click.option(
    "--fresh", is_flag=True, help="Start a new season: move the output folder's previous one to previous/<date>/."
)
@click.option("--seed", type=int, default=None, help="Override [tournament] seed.")
@click.option("--concurrency", type=int, default=None, help="Override [tournament] concurrency (matches in flight).")
@click.option(
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Override [tournament] output folder.",
)
@click.option("--quiet", "-q", is_flag=True, help="No live progress display.")
@click.option("--workers", type=int, default=None, help="Override [tournament] workers (processes on this machine).")
@click.option("--cluster", default=None, metavar="tcp://HOST:PORT", help="Play on the Dask scheduler at this address.")
@click.option("--verbose", "-v", is_flag=True, help="Every bot's answer to hello, one line each.")
@click.option("--all-rows", is_flag=True, help="Print every standings row at the end (else the top 10).")
def run(
    config: Path,
    resume: bool,
    fresh: bool,
    seed: int | None,
    concurrency: int | None,
    output: Path | None,
    quiet: bool,
    workers: int | None,
    cluster: str | None,
    verbose: bool,
    all_rows: bool,
) -> None:
    """Play the tournament in CONFIG and publish its leaderboard."""
    if fresh and resume:
        usage("--fresh starts a new season and --resume goes on with this one: choose one")
    cfg = load(config, seed, concurrency, output, workers, cluster)
    _keep_season(cfg.output, resume, fresh)
    cfg = _start(config, cfg, resume)
    cfg = dataclasses.replace(cfg, log_section=mark("run"))
    display = RunDisplay(quiet, verbose)
    code, report, failed = EXIT_OK, None, None
    try:
        report = eventloop.run(_run_with_sigterm(cfg, resume, display))  # uvloop where installed
    except (KeyboardInterrupt, asyncio.CancelledError):
        display.finish()
        again = resume_command(
            config, seed=seed, concurrency=concurrency, output=output, workers=workers, cluster=cluster
        )
        click.echo(f"interrupted: finished matches are kept; go on with: {again}", err=True)
        code = EXIT_FAILED
    except RefereeError as exc:
        display.finish()
        _note_resume(exc, config)
        if isinstance(exc, BotStartError | OutputError):  # nothing to publish, or no room to publish it
            raise
        failed = exc  # what was played is published, then the run fails with it
    display.finish()
    cfg = report.config if report is not None and report.config is not None else display.lineup or cfg
    stopped = report.stopped if report is not None else None
    if stopped is not None:
        click.echo(f"stopped: {stopped.reason}", err=True)
    try:
        published = publish_final(cfg, stopped.document() if stopped is not None else None, display.step)
    except RefereeError as exc:
        display.finish()
        if failed is not None:  # the play's error is the cause: it is the one reported
            failed.add_note(f"nothing published: {exc}")
            raise failed from exc
        _note_resume(exc, config)
        raise
    display.finish()
    for warning in published.warnings:
        display.warn(warning)
    if failed is not None:
        raise failed
    if code == EXIT_OK:
        click.echo(render_console(published.board, None if all_rows else CONSOLE_ROWS))
        _print_lag(report)
        click.echo(f"\nleaderboard: {cfg.output / 'README.md'}  standings: {cfg.output / 'standings.json'}", err=True)
    sys.exit(code)


def _note_resume(exc: RefereeError, config: Path) -> None:
    """After an output file could not be written: how to go on, as a note of ``exc``
    (``cli.main`` prints it after the message); nothing for other errors."""
    if isinstance(exc, OutputError):
        fix = "free some space" if exc.disk_full else "make it writable"
        exc.add_note(
            f"the journal is intact up to the last complete match: {fix} and go on with: referee run {config} --resume"
        )


def _keep_season(out: Path, resume: bool, fresh: bool) -> None:
    """Never lose a season: a move a killed ``--fresh`` left half done is finished; without
    ``--resume`` a season in ``out`` is moved aside (``--fresh``) or the run refused."""
    try:
        for folder in finish_moves(out):
            click.echo(f"note: an interrupted --fresh is finished: the season before is in {folder}", err=True)
        if resume:
            return
        season = season_of(out)
        if fresh:
            moved = move_aside(out, stamp())
            if moved is not None:
                click.echo(f"fresh: the previous season is in {moved}", err=True)
        elif season is not None:
            raise JournalError(season_line(out, season))
    except OSError as exc:
        raise OutputError(f"{exc.filename or out}: {exc.strerror or exc}") from exc


def _start(path: Path, cfg: TournamentConfig, resume: bool) -> TournamentConfig:
    """The secret seed drawn (or read back), the banner, a resumed journal checked before
    the folder is touched, and ``tournament.json`` written."""
    try:
        cfg = resolve_ladder(resolve_schedule_version(resolve_seed(cfg, resume), resume), resume)
    except OSError as exc:  # the output folder, where the secret seed is kept
        raise OutputError(f"{exc.filename or cfg.output}: {exc.strerror or exc}") from exc
    if resume:  # a tournament without grow keeps the bots it started with
        earlier = excluded_before(cfg, read_settings(cfg.output) or {})
        cfg = without(cfg, asyncio.run(greet_again(cfg, earlier)))
    fixtures = schedule(cfg)
    closed = closed_reason(cfg.output, len(fixtures), cfg.closed, cfg.grow) if resume else None
    if closed is not None:
        raise JournalError(closed)
    where = (
        f", on the cluster at {cfg.cluster}" if cfg.cluster else (f", {cfg.workers} workers" if cfg.workers > 1 else "")
    )
    click.echo(
        f"referee {__version__}: {cfg.name} ({cfg.game}), {len(fixtures)} matches of {cfg.players} players, "
        f"{len(cfg.bots)} bots, concurrency {cfg.concurrency}{where}, output {cfg.output}"
        + (", secret seed" if cfg.seed_secret else ""),
        err=True,
    )
    if not cfg.seed_secret:
        click.echo(SEED_NOTE, err=True)
    cage_warnings(cfg)
    if resume:
        state = read_journal(cfg.output / JOURNAL, fixtures, [b.name for b in cfg.bots], repair=False)
        for bot, n in sorted(state.left_out.items()):
            click.echo(
                f"note: bot {bot!r} is no longer in {path}: its {n} match(es) stay in the journal "
                "and count for the bots it met; it has no row in the standings",
                err=True,
            )
        if cfg.grow and state.count:
            click.echo(f"grow: {state.count} finished matches kept, {len(fixtures) - state.count} to play", err=True)
    announce(cfg, len(fixtures))
    return cfg


def cage_warnings(cfg: TournamentConfig) -> None:
    """One warning per started bot that runs with less of a cage than the tournament's
    (docs/cage.md; the standings mark it too)."""
    for name, marks in cfg.cage_marks().items():
        if marks:
            click.echo(
                f"warning: bot {name!r} runs with a weaker cage than the tournament's [limits]: "
                f"{', '.join(marks)} (marked in the standings)",
                err=True,
            )


def _print_lag(report: RunReport | None) -> None:
    """The referee's own event-loop lag, when the run measured any."""
    lag = report.lag if report is not None else {}
    if lag.get("samples"):
        click.echo(
            f"referee event-loop lag: p50 {lag['p50_ms']} ms, p99 {lag['p99_ms']} ms, max {lag['max_ms']} ms; "
            f"requests in flight limited to at least {lag['lowest_limit']} (at the end {lag['final_limit']})",
            err=True,
        )


async def _run_with_sigterm(cfg: TournamentConfig, resume: bool, display: RunDisplay) -> RunReport:
    """``run_tournament`` with SIGTERM cancelling it as Ctrl-C does."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await run_tournament(
            cfg,
            resume=resume,
            on_progress=display.update,
            on_ready=display.ready,
            on_warning=display.warn,
            on_lineup=display.lineup_judged,
        )
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


@click.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
def check(config: Path) -> None:
    """Validate CONFIG, start or reach every bot, send hello; play nothing."""
    cfg = dataclasses.replace(load(config, None, None, None), log_section=mark("check"))
    fixtures = schedule(cfg)
    click.echo(
        f"{config}: valid. {cfg.name}: {cfg.game} {dict(cfg.options)}, {len(fixtures)} matches of {cfg.players} players"
        + (" (secret seed, drawn when the run starts)" if cfg.seed_secret else "")
    )
    # the seat count of every fixture: only on schedules small enough to walk quickly
    if (
        format_class(cfg).rounds_rotate_seats
        and len(fixtures) <= 200_000
        and not seat_balance(fixtures, len(cfg.bots), cfg.players)
    ):
        click.echo(
            f"note: with rounds = {cfg.rounds} not every bot sits in every seat equally often; "
            f"use a multiple of {cfg.players}",
            err=True,
        )
    cage_warnings(cfg)
    statuses = asyncio.run(greet_all(cfg))
    for s in statuses:
        verdict = "ok  " if s.ok else "FAIL"
        kind = "started" if s.managed else "remote"
        click.echo(f"  {verdict} {s.name:<20} {kind:<8} {s.ms:8.1f} ms  {s.detail if not s.ok else s.url}")
    line, all_ready = readiness(statuses)
    if all_ready:
        click.echo(line)
        return
    click.echo(line, err=True)
    if cfg.on_unready != "exclude":
        sys.exit(EXIT_FAILED)
    played = judge_lineup(cfg, statuses, fixed=False)  # the rule the run uses: enough bots left?
    click.echo(
        f"on_unready = 'exclude': the run would go ahead with {len(played.bots)} bots, "
        f"would play without: {', '.join(n for n, _ in played.excluded)}"
    )


@click.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--deals", type=int, default=30, show_default=True, help="Deals the pilot plays.")
@click.option("--seed", type=int, default=None, help="Override [tournament] seed for the pilot.")
def plan(config: Path, deals: int, seed: int | None) -> None:
    """Play a small pilot of CONFIG (in a temporary folder) and estimate how many matches
    a settled top K needs at the configured confidence."""
    if deals < 2:
        usage("--deals: the pilot needs at least 2 deals")
    cfg = load(config, seed, None, None)
    click.echo(f"referee plan: a pilot of {deals} deals of {cfg.name} ({cfg.game}), {len(cfg.bots)} bots", err=True)
    est = asyncio.run(pilot(cfg, deals))
    what = f"top {cfg.top}" if cfg.top else "whole ranking"
    click.echo(f"pilot: {est.deals} deals, {est.deals * est.deal_size} matches")
    if est.needed is None:
        click.echo(
            f"a settled {what} at confidence {cfg.confidence}: not in sight (a pair of the pilot looks equal); "
            f"budget {match_count(cfg)} matches"
        )
        return
    matches = est.needed * est.deal_size
    fits = "within" if matches <= match_count(cfg) else "MORE than"
    click.echo(
        f"a settled {what} at confidence {cfg.confidence}: about {est.needed} deals, {matches} matches "
        f"({fits} the budget of {match_count(cfg)} matches)"
        + (", if the pilot's differences are real" if est.equal else "")
    )
    for a, b in est.equal:
        click.echo(
            f"warning: {a} and {b} look equal in the pilot (their difference is within its noise): if they are, "
            f"no budget settles them, and the run spends all {match_count(cfg)} matches and ends 'not settled'"
        )


def resume_command(
    config: Path,
    *,
    seed: int | None = None,
    concurrency: int | None = None,
    output: Path | None = None,
    workers: int | None = None,
    cluster: str | None = None,
) -> str:
    """The command that goes on with an interrupted run: the same overrides, and --resume."""
    args = ["referee", "run", str(config)]
    for flag, value in (
        ("--output", output),
        ("--seed", seed),
        ("--concurrency", concurrency),
        ("--workers", workers),
        ("--cluster", cluster),
    ):
        if value is not None:
            args += [flag, str(value)]
    return shlex.join([*args, "--resume"])
