"""The commands on an output folder: ``leaderboard``, ``verify`` and ``replay``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from referee.cli.common import EXIT_FAILED, EXIT_OK
from referee.cli.progress import ProgressLine
from referee.report.policy import rebuild
from referee.report.publish import FORMATS

QUIET = click.option("--quiet", "-q", is_flag=True, help="No progress display.")


def _formats(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """--format values, repeated and/or comma-separated; every format when none is given."""
    chosen = [v.strip() for value in values for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in FORMATS]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)} (choose from {', '.join(FORMATS)})")
    return tuple(dict.fromkeys(chosen)) or tuple(FORMATS)


@click.command()
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
@QUIET
def leaderboard(output_dir: Path, formats: tuple[str, ...], quiet: bool) -> None:
    """Rebuild the leaderboard files of OUTPUT_DIR from its matches.jsonl and tournament.json."""
    display = ProgressLine(quiet)
    try:
        published = rebuild(output_dir, formats, display.step)
    finally:
        display.finish()
    for path in published.paths:
        click.echo(str(path))
    for warning in published.warnings:
        display.warn(warning)


@click.command()
@click.argument("output_dir", type=click.Path(path_type=Path))
@QUIET
@click.option("--verbose", "-v", is_flag=True, help="A line per bot naming its versions (else a summary past 10 bots).")
def verify(output_dir: Path, quiet: bool, verbose: bool) -> None:
    """Rebuild every match of OUTPUT_DIR from its seed and transcript through the rules, and
    check the journal and the standings files against them; once the seed is public, every
    match against the schedule derived again (seed, bots, none missing)."""
    from referee.audit.verify import verify as run_verify

    display = ProgressLine(quiet)
    try:
        report = run_verify(output_dir, display.step)
    finally:
        display.finish()
    click.echo(report.verdict())
    for line in report.version_lines(every=verbose):
        click.echo(line)
    for p in report.problems[1:]:
        click.echo(f"  also: {p}", err=True)
    sys.exit(EXIT_OK if report.ok else EXIT_FAILED)


@click.command()
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
    from referee.errors import ReplayError
    from referee.store.matches import load_match

    m = load_match(output_dir, match)
    if seat is not None and not 0 <= seat < len(m.record["bots"]):
        raise ReplayError(f"--seat {seat}: the match has seats 0-{len(m.record['bots']) - 1}")
    if html_out:
        from referee.report.viewer import write_replay

        click.echo(f"{write_replay(output_dir, m)}#{m.record['id']}")
        return
    for line in render_text(m, seat):
        click.echo(line)
