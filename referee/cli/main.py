"""The ``referee`` command: parses, calls, prints. The only place with exit codes.

Exit codes: 0 done, 1 the run failed (a bot never became ready, interrupted, a
journal that does not fit), 2 bad usage or a bad tournament file.
"""

from __future__ import annotations

import asyncio
import datetime
import secrets
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from referee import __version__
from referee.config.model import TournamentConfig, load_config
from referee.errors import BotStartError, ConfigError, LeaderboardError, RefereeError
from referee.games import GAMES
from referee.report.publish import (
    FORMATS,
    Leaderboard,
    build_leaderboard,
    load_output_dir,
    render_console,
    tournament_document,
    write_leaderboard,
    write_tournament_file,
)
from referee.run.runner import BotPool, BotStatus, Progress, read_journal, run_tournament
from referee.run.seeds import published_settings, resolve_seed
from referee.run.stopping import DealValues
from referee.schedule.formats import Schedule, schedule, seat_balance
from referee.stats.sequential import deals_needed
from referee.store import journal as jn
from referee.store.journal import JOURNAL

if TYPE_CHECKING:
    from referee.report.viewer import Watch

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """A tournament referee for card-game bots that talk over HTTP."""


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--resume", is_flag=True, help="Play only the matches missing from the output's matches.jsonl.")
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
def run(
    config: Path,
    resume: bool,
    seed: int | None,
    concurrency: int | None,
    output: Path | None,
    quiet: bool,
    workers: int | None,
    cluster: str | None,
) -> None:
    """Play the tournament in CONFIG and publish its leaderboard."""
    cfg = _load(config, seed, concurrency, output, workers, cluster)
    try:
        cfg = resolve_seed(cfg, resume)
    except (RefereeError, OSError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_FAILED)
    fixtures = schedule(cfg)
    where = (
        f", on the cluster at {cfg.cluster}" if cfg.cluster else (f", {cfg.workers} workers" if cfg.workers > 1 else "")
    )
    click.echo(
        f"referee {__version__}: {cfg.name} ({cfg.game}), {len(fixtures)} matches of {cfg.players} players, "
        f"{len(cfg.bots)} bots, concurrency {cfg.concurrency}{where}, output {cfg.output}"
        + (", secret seed" if cfg.seed_secret else ""),
        err=True,
    )
    if resume:  # a journal of another tournament: refuse before touching the folder
        try:
            state = read_journal(cfg.output / JOURNAL, fixtures, [b.name for b in cfg.bots], repair=False)
        except RefereeError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_FAILED)
        for bot, n in sorted(state.left_out.items()):
            click.echo(
                f"note: bot {bot!r} is no longer in {config}: its {n} match(es) stay in the journal "
                "and are left out of the standings",
                err=True,
            )
        if cfg.grow and state.count:
            click.echo(f"grow: {state.count} finished matches kept, {len(fixtures) - state.count} to play", err=True)
    try:
        write_tournament_file(cfg.output, published_settings(cfg, complete=False), len(fixtures))
    except OSError as exc:
        click.echo(f"error: {cfg.output}: cannot write tournament.json: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_FAILED)
    display = _ProgressDisplay(quiet)
    code = EXIT_OK
    lag: dict[str, Any] = {}
    played = True
    try:
        lag = asyncio.run(_run_with_sigterm(cfg, resume, display))
    except (KeyboardInterrupt, asyncio.CancelledError):
        display.finish()
        click.echo(f"interrupted: finished matches are kept; go on with: referee run {config} --resume", err=True)
        code = EXIT_FAILED
    except RefereeError as exc:
        display.finish()
        click.echo(f"error: {exc}", err=True)
        code = EXIT_FAILED
        played = not isinstance(exc, BotStartError)  # nothing was played: nothing to publish
    display.finish()
    if not played:
        sys.exit(code)
    stopped = lag.pop("stopped", None)
    if stopped is not None:
        click.echo(f"stopped: {stopped['reason']}", err=True)
    board = _publish(cfg, fixtures, stopped)
    if board is None:
        code = EXIT_FAILED
    elif code == EXIT_OK:
        click.echo(render_console(board))
        if lag.get("samples"):
            click.echo(
                f"referee event-loop lag: p50 {lag['p50_ms']} ms, p99 {lag['p99_ms']} ms, max {lag['max_ms']} ms; "
                f"requests in flight limited to at least {lag['lowest_limit']} (at the end {lag['final_limit']})",
                err=True,
            )
        click.echo(f"\nleaderboard: {cfg.output / 'README.md'}  standings: {cfg.output / 'standings.json'}", err=True)
    sys.exit(code)


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
def check(config: Path) -> None:
    """Validate CONFIG, start or reach every bot, send hello; play nothing."""
    cfg = _load(config, None, None, None)
    fixtures = schedule(cfg)
    click.echo(
        f"{config}: valid. {cfg.name}: {cfg.game} {dict(cfg.options)}, {len(fixtures)} matches of {cfg.players} players"
        + (" (secret seed, drawn when the run starts)" if cfg.seed_secret else "")
    )
    # the seat count of every fixture: only on schedules small enough to walk quickly
    if (
        cfg.format == "round_robin"
        and len(fixtures) <= 200_000
        and not seat_balance(fixtures, len(cfg.bots), cfg.players)
    ):
        click.echo(
            f"note: with rounds = {cfg.rounds} not every bot sits in every seat equally often; "
            f"use a multiple of {cfg.players}",
            err=True,
        )

    async def greet() -> list[BotStatus]:
        with BotPool(cfg, cfg.output / "logs") as pool:
            return await pool.start()

    statuses = asyncio.run(greet())
    for s in statuses:
        mark = "ok  " if s.ok else "FAIL"
        kind = "started" if s.managed else "remote"
        click.echo(f"  {mark} {s.name:<20} {kind:<8} {s.ms:8.1f} ms  {s.detail if not s.ok else s.url}")
    line, all_ready = readiness(statuses)
    if not all_ready:
        click.echo(line, err=True)
        sys.exit(EXIT_FAILED)
    click.echo(line)


def readiness(statuses: list[BotStatus]) -> tuple[str, bool]:
    """One line on the bots' hello (the ones not ready by name, first) and whether all are ready."""
    ready = ", ".join(f"{s.name} ({s.ms:.0f} ms)" for s in statuses if s.ok)
    failed = [s.name for s in statuses if not s.ok]
    if not failed:
        return f"all {len(statuses)} bots ready: {ready}", True
    return f"{len(failed)} of {len(statuses)} bots not ready: {', '.join(failed)}" + (
        f"; ready: {ready}" if ready else ""
    ), False


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--deals", type=int, default=30, show_default=True, help="Deals the pilot plays.")
@click.option("--seed", type=int, default=None, help="Override [tournament] seed for the pilot.")
def plan(config: Path, deals: int, seed: int | None) -> None:
    """Play a small pilot of CONFIG (in a temporary folder) and estimate how many matches
    a settled top K needs at the configured confidence."""
    if deals < 2:
        click.echo("error: --deals: the pilot needs at least 2 deals", err=True)
        sys.exit(EXIT_USAGE)
    cfg = _load(config, seed, None, None)
    with tempfile.TemporaryDirectory(prefix="referee-plan-") as tmp:
        pilot = cfg.with_overrides(output=Path(tmp))
        if pilot.seed_secret:  # the pilot's cards need not be secret: a fresh seed, used once
            pilot = pilot.with_overrides(seed=secrets.randbits(63))
        click.echo(f"referee plan: a pilot of {deals} deals of {cfg.name} ({cfg.game}), {len(cfg.bots)} bots", err=True)
        try:
            asyncio.run(run_tournament(pilot, pilot_deals=deals))
        except RefereeError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_FAILED)
        values = DealValues(pilot)
        values.add_lines(jn.read_journal(pilot.output / JOURNAL))
    played = min(deals, values.deals)
    what = f"top {cfg.top}" if cfg.top else "whole ranking"
    need = deals_needed(values.values(played), values.bound, confidence=cfg.confidence, top=cfg.top)
    click.echo(f"pilot: {played} deals, {played * values.deal_size} matches")
    if need is None:
        click.echo(
            f"a settled {what} at confidence {cfg.confidence}: not in sight (a pair of the pilot looks equal); "
            f"budget {cfg.match_count} matches"
        )
        return
    matches = need * values.deal_size
    fits = "within" if matches <= cfg.match_count else "MORE than"
    click.echo(
        f"a settled {what} at confidence {cfg.confidence}: about {need} deals, {matches} matches "
        f"({fits} the budget of {cfg.match_count} matches)"
    )


@main.command()
def games() -> None:
    """List the games, their seat counts and their options with defaults."""
    for gid in sorted(GAMES):
        info = GAMES[gid].info
        kind = "cooperative" if info.cooperative else "competitive"
        click.echo(f"{gid}  {info.title}  ({info.min_seats}-{info.max_seats} players, {kind})")
        for o in info.options:
            extra = f" one of {', '.join(map(repr, o.choices))}" if o.choices else ""
            click.echo(f"    {o.name} = {o.default!r}{extra}: {o.help}")
        if info.extra_reply_fields:
            click.echo(f"    reply fields besides action: {', '.join(info.extra_reply_fields)}")


@main.command()
@click.argument("game", required=False)
def schema(game: str | None) -> None:
    """Print the JSON Schema of the wire protocol, or of GAME's messages, state, actions and details."""
    from referee.bots import schema as wire_schema

    if game is None:
        click.echo(wire_schema.schema_text(wire_schema.PROTOCOL), nl=False)
        return
    if game not in GAMES:
        click.echo(f"error: no game {game!r} (known: {', '.join(sorted(GAMES))})", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(wire_schema.schema_text(wire_schema.game_schema_name(game)), nl=False)


def _option_value(text: str) -> Any:
    """A --option value as TOML (``true``, ``3``, ``"x"``), else the bare string."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


@main.command("check-bot", context_settings={"ignore_unknown_options": True})
@click.argument("target", nargs=-1, type=click.UNPROCESSED)
@click.option("--game", "-g", required=True, help="The game to play (see referee games).")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="A game option; repeat.")
@click.option("--all-variants", is_flag=True, help="Every combination of the game's choice and yes/no options.")
@click.option("--matches", type=click.IntRange(1, 1000), default=3, show_default=True, help="Matches per option set.")
@click.option("--players", type=int, default=None, help="Seats per match (default 4, or the nearest allowed).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True, help="Matches in flight.")
@click.option("--deadline-ms", type=click.IntRange(1), default=1000, show_default=True, help="Deadline per message.")
@click.option("--max-response-bytes", type=click.IntRange(1), default=65536, show_default=True)
@click.option("--startup-ms", type=click.IntRange(1), default=15000, show_default=True, help="Time to answer hello.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Keep bot logs here.")
@click.option(
    "--max-concurrent",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Requests in flight to the bot at once, as a tournament may promise (0: no limit).",
)
@click.option(
    "--token-env", metavar="NAME", default=None, help="Send the token in environment variable NAME as a bearer token."
)
def check_bot_command(
    target: tuple[str, ...],
    game: str,
    options: tuple[str, ...],
    all_variants: bool,
    matches: int,
    players: int | None,
    concurrency: int,
    deadline_ms: int,
    max_response_bytes: int,
    startup_ms: int,
    seed: int,
    log_dir: Path | None,
    max_concurrent: int,
    token_env: str | None,
) -> None:
    """Play a few matches against one bot and report what to fix; exit 0 only when clean.

    TARGET is the bot's URL, or -- and the command that starts it ({port} is replaced
    by a free port):  referee check-bot --game nimmt_plus -- node bot.js --port {port}
    """
    from referee.audit.checkbot import CheckSettings, check_bot, default_players, option_sets
    from referee.games.base import OptionError

    if not target:
        click.echo("error: give the bot's URL, or -- and the command that starts it", err=True)
        sys.exit(EXIT_USAGE)
    if game not in GAMES:
        click.echo(f"error: --game: no game {game!r} (known: {', '.join(sorted(GAMES))})", err=True)
        sys.exit(EXIT_USAGE)
    chosen: dict[str, Any] = {}
    for item in options:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            click.echo(f"error: --option {item!r}: expected KEY=VALUE", err=True)
            sys.exit(EXIT_USAGE)
        chosen[key.strip()] = _option_value(value.strip())
    g = GAMES[game]
    seats = players or default_players(g)
    if not g.info.min_seats <= seats <= g.info.max_seats:
        click.echo(f"error: --players: {game} is for {g.info.min_seats}-{g.info.max_seats} players", err=True)
        sys.exit(EXIT_USAGE)
    try:
        sets = option_sets(g, seats, chosen, all_variants)
    except OptionError as exc:
        click.echo(f"error: --option {exc}", err=True)
        sys.exit(EXIT_USAGE)
    is_url = len(target) == 1 and "://" in target[0]
    if is_url and not target[0].startswith("http://"):
        click.echo(f"error: {target[0]}: check-bot reaches bots over http:// only", err=True)
        sys.exit(EXIT_USAGE)
    if not is_url and not any("{port}" in a for a in target):
        click.echo("error: the bot's command must contain {port} (where it listens), or give its URL", err=True)
        sys.exit(EXIT_USAGE)
    token = None
    if token_env is not None:
        import os

        from referee.config.redacted import Secret

        if not os.environ.get(token_env):
            click.echo(f"error: --token-env: environment variable {token_env} is not set", err=True)
            sys.exit(EXIT_USAGE)
        token = Secret(os.environ[token_env])
    settings = CheckSettings(
        game=game,
        option_sets=tuple(sets),
        url=target[0] if is_url else None,
        command=None if is_url else target,
        matches=matches,
        players=seats,
        concurrency=concurrency,
        deadline_ms=deadline_ms,
        max_response_bytes=max_response_bytes,
        startup_ms=startup_ms,
        seed=seed,
        log_dir=log_dir,
        max_concurrent=max_concurrent,
        token=token,
    )
    reports = asyncio.run(check_bot(settings))
    for report in reports:
        for line in report.lines():
            click.echo(line)
    clean = all(r.clean for r in reports)
    if len(reports) > 1:
        click.echo(f"{sum(r.clean for r in reports)} of {len(reports)} option sets clean")
    sys.exit(EXIT_OK if clean else EXIT_FAILED)


def _formats(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """--format values, repeated and/or comma-separated; every format when none is given."""
    chosen = [v.strip() for value in values for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in FORMATS]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)} (choose from {', '.join(FORMATS)})")
    return tuple(dict.fromkeys(chosen)) or tuple(FORMATS)


@main.command()
@click.argument("output_dir", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "-f",
    "formats",
    multiple=True,
    callback=_formats,
    metavar="md|html|json|csv",
    help="Files to write: md, html, json or csv; repeat or comma-separate (default: all).",
)
def leaderboard(output_dir: Path, formats: tuple[str, ...]) -> None:
    """Rebuild the leaderboard files of OUTPUT_DIR from its matches.jsonl and tournament.json."""
    try:
        tournament, records = load_output_dir(output_dir)
        watch = _replay_watch()
        board = build_leaderboard(tournament, watch(records))
        _timings_from_run(board, output_dir, tournament["settings"]["bots"])
    except LeaderboardError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for path in write_leaderboard(output_dir, board, formats):
        click.echo(str(path))
    if "html" in formats:
        _write_replays(output_dir, watch)


@main.command()
@click.argument("output_dir", type=click.Path(path_type=Path))
def verify(output_dir: Path) -> None:
    """Rebuild every match of OUTPUT_DIR from its seed and transcript through the rules, and
    check the journal and the standings files against them."""
    from referee.audit.verify import verify as run_verify
    from referee.errors import TranscriptError

    try:
        report = run_verify(output_dir)
    except (LeaderboardError, TranscriptError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(report.verdict())
    for p in report.problems[1:]:
        click.echo(f"  also: {p}", err=True)
    sys.exit(EXIT_OK if report.ok else EXIT_FAILED)


@main.command()
@click.argument("output_dir", type=click.Path(path_type=Path))
@click.argument("match")
@click.option("--seat", type=int, default=None, help="Only this seat's decisions, with the view it was sent.")
@click.option(
    "--html",
    "html_out",
    is_flag=True,
    help="Make the match's replay data; print the viewer page to open (OUTPUT_DIR/replays/index.html#MATCH).",
)
def replay(output_dir: Path, match: str, seat: int | None, html_out: bool) -> None:
    """Play MATCH of OUTPUT_DIR again from its transcript: every decision, who chose it,
    faults, bot logs, the result."""
    from referee.audit.replay import render_text
    from referee.errors import ReplayError, TranscriptError
    from referee.store.matches import load_match

    try:
        m = load_match(output_dir, match)
        if seat is not None and not 0 <= seat < len(m.record["bots"]):
            raise ReplayError(f"--seat {seat}: the match has seats 0-{len(m.record['bots']) - 1}")
        if html_out:
            from referee.report.viewer import write_replay

            click.echo(f"{write_replay(output_dir, m)}#{m.record['id']}")
            return
        for line in render_text(m, seat):
            click.echo(line)
    except (LeaderboardError, TranscriptError, RefereeError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def _load(
    config: Path,
    seed: int | None,
    concurrency: int | None,
    output: Path | None,
    workers: int | None = None,
    cluster: str | None = None,
) -> TournamentConfig:
    try:
        return load_config(config).with_overrides(
            seed=seed, concurrency=concurrency, output=output, workers=workers, cluster=cluster
        )
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


async def _run_with_sigterm(cfg: TournamentConfig, resume: bool, display: _ProgressDisplay) -> dict[str, Any]:
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
            publish=lambda: _publish_live(cfg, len(schedule(cfg))),
        )
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def _publish(cfg: TournamentConfig, fixtures: Schedule, stopped: dict[str, Any] | None = None) -> Leaderboard | None:
    """Write the leaderboard files from the journal; return what they were rendered from.
    A complete run with a secret seed reveals it in ``tournament.json`` first; a run that
    stopped settled (``stopped``) is complete and says why there."""
    names = [b.name for b in cfg.bots]
    journal = cfg.output / JOURNAL
    try:
        state = read_journal(journal, fixtures, names, repair=False)
        complete = state.count == fixtures.total or stopped is not None
        settings = published_settings(cfg, complete=complete)
        if (cfg.seed_secret and complete) or stopped is not None:
            write_tournament_file(cfg.output, settings, len(fixtures), stopped)
        watch = _replay_watch()
        board = build_leaderboard(
            tournament_document(settings, len(fixtures), stopped), watch(jn.read_journal(journal))
        )
        _timings_from_run(board, cfg.output, names)
        write_leaderboard(cfg.output, board)
    except RefereeError as exc:
        click.echo(f"error: {exc}", err=True)
        return None
    except OSError as exc:
        click.echo(f"error: cannot write the leaderboard: {exc.filename or cfg.output}: {exc.strerror}", err=True)
        return None
    _write_replays(cfg.output, watch)
    return board


def publish_live(cfg: TournamentConfig, scheduled: int, now: datetime.datetime | None = None) -> Leaderboard:
    """Render the outputs from the journal as it stands, marked as in progress (``live``:
    the matches it covers and when); every file replaced whole (temporary file + rename)."""
    journal = cfg.output / JOURNAL
    board = build_leaderboard(
        tournament_document(published_settings(cfg, complete=False), scheduled), jn.read_journal(journal)
    )
    at = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%d %H:%M:%S UTC")
    board.document["live"] = {"matches": board.document["matches"], "scheduled": scheduled, "at": at}
    _timings_from_run(board, cfg.output, [b.name for b in cfg.bots])
    write_leaderboard(cfg.output, board)
    return board


def _publish_live(cfg: TournamentConfig, scheduled: int) -> None:
    """``publish_live`` from the run's worker thread: a failure is a warning, never the run's end."""
    try:
        publish_live(cfg, scheduled)
    except (RefereeError, OSError) as exc:
        click.echo(f"\nwarning: live publish failed (the run goes on): {exc}", err=True)


def _timings_from_run(board: Leaderboard, out: Path, names: list[str]) -> None:
    """Response times come from the run's summary (the journal keeps none); a journal of
    an older referee, with response times in its lines, keeps the figures computed from them."""
    saved = jn.Timings.load(out)
    if saved is not None:
        board.timings = {"tournament": board.timings["tournament"], **saved.document(names)}


def _replay_watch() -> Watch:
    """What chooses the replays to publish as the leaderboard reads the journal (read once)."""
    from referee.report.viewer import Watch

    return Watch()


def _write_replays(out: Path, watch: Watch | None = None) -> None:
    """The replay viewer and its data (a bad transcript costs the replays, not the run)."""
    from referee.errors import TranscriptError
    from referee.report.viewer import write_replays

    try:
        write_replays(out, watch=watch)
    except (RefereeError, TranscriptError) as exc:
        click.echo(f"warning: replay pages not written: {exc}", err=True)
    except OSError as exc:  # a full disk: the pages are lost, the journal and standings are not
        click.echo(f"warning: replay pages not written: {exc.filename or out}: {exc.strerror}", err=True)


class _ProgressDisplay:
    """One updating line on a terminal; a line every few seconds otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.shown = False
        self.progress: Progress | None = None

    def ready(self, statuses: list[BotStatus]) -> None:
        line, all_ready = readiness(statuses)
        if not (all_ready and self.quiet):  # bots that failed are named even with --quiet
            click.echo(line, err=True)

    def update(self, p: Progress) -> None:
        self.progress = p
        now = time.monotonic()
        if self.quiet or (p.done < p.total and now - self.last < (0.2 if self.tty else 5.0)):
            return
        self.last = now
        self._show(p)

    def _show(self, p: Progress) -> None:
        eta = (p.total - p.done) / p.rate if p.rate > 0 else 0.0
        line = (
            f"matches {p.done}/{p.total}  faults {p.faults}  {p.rate:.1f} matches/s"
            f"  elapsed {p.elapsed_s:.1f}s  eta {eta:.0f}s"
        )
        if self.tty:
            sys.stderr.write("\r" + line + "\x1b[K")
            sys.stderr.flush()
            self.shown = True
        else:
            click.echo(line, err=True)

    def finish(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False
