"""The commands for bot authors: ``games``, ``schema`` and ``check-bot``."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from referee.cli.common import EXIT_FAILED, EXIT_OK, mark, usage
from referee.config.redacted import Secret
from referee.games import GAMES

if TYPE_CHECKING:
    from referee.audit.checkbot import CheckSettings


@click.command()
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


@click.command()
@click.argument("game", required=False)
def schema(game: str | None) -> None:
    """Print the JSON Schema of the wire protocol, or of GAME's messages, state, actions and details."""
    from referee.bots.client import schema as wire_schema

    if game is None:
        click.echo(wire_schema.schema_text(wire_schema.PROTOCOL), nl=False)
        return
    if game not in GAMES:
        usage(f"no game {game!r} (known: {', '.join(sorted(GAMES))})")
    click.echo(wire_schema.schema_text(wire_schema.game_schema_name(game)), nl=False)


def _option_value(text: str) -> Any:
    """A --option value as TOML (``true``, ``3``, ``"x"``), else the bare string."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


FROM_FILE = ("game", "options", "all_variants", "players", "deadline_ms", "max_response_bytes", "startup_ms")
FROM_FILE_TOO = ("max_concurrent", "token_env")
DEFAULTS = {"deadline_ms": 1000, "max_response_bytes": 65536, "startup_ms": 15000, "max_concurrent": 0}


@click.command("check-bot", context_settings={"ignore_unknown_options": True})
@click.argument("target", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Check --bot as this tournament file runs it: its game, options, seats, limits, cage and token.",
)
@click.option("--bot", "bot_name", default=None, help="With --config: the bot of the file to check.")
@click.option("--game", "-g", default=None, help="The game to play (see referee games).")
@click.option("--option", "-o", "options", multiple=True, metavar="KEY=VALUE", help="A game option; repeat.")
@click.option("--all-variants", is_flag=True, help="Every combination of the game's choice and yes/no options.")
@click.option("--matches", type=click.IntRange(1, 1000), default=3, show_default=True, help="Matches per option set.")
@click.option("--players", type=int, default=None, help="Seats per match (default 4, or the nearest allowed).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True, help="Matches in flight.")
@click.option("--deadline-ms", type=click.IntRange(1), default=None, help="Deadline per message.  [default: 1000]")
@click.option("--max-response-bytes", type=click.IntRange(1), default=None, help="[default: 65536]")
@click.option("--startup-ms", type=click.IntRange(1), default=None, help="Time to answer hello.  [default: 15000]")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Keep bot logs here.")
@click.option(
    "--max-concurrent",
    type=click.IntRange(0),
    default=None,
    help="Requests in flight to the bot at once, as a tournament may promise (0: no limit).  [default: 0]",
)
@click.option(
    "--token-env", metavar="NAME", default=None, help="Send the token in environment variable NAME as a bearer token."
)
def check_bot_command(target: tuple[str, ...], config_path: Path | None, bot_name: str | None, **flags: Any) -> None:
    """Play a few matches against one bot and report what to fix; exit 0 only when clean.

    TARGET is the bot's URL, or -- and the command that starts it ({port} is replaced
    by a free port):  referee check-bot --game nimmt_plus -- node bot.js --port {port}

    Or the bot of a tournament file, as that tournament runs it:
    referee check-bot --config tournament.toml --bot mybot
    """
    from referee.audit.checkbot import check_bot

    if config_path is not None or bot_name is not None:
        settings = _settings_from_file(target, config_path, bot_name, flags)
    else:
        settings = _settings_from_flags(target, flags)
    reports = asyncio.run(check_bot(dataclasses.replace(settings, log_section=mark("check-bot"))))
    for report in reports:
        for line in report.lines():
            click.echo(line)
    clean = all(r.clean for r in reports)
    if len(reports) > 1:
        click.echo(f"{sum(r.clean for r in reports)} of {len(reports)} option sets clean")
    sys.exit(EXIT_OK if clean else EXIT_FAILED)


def _own_flags(flags: dict[str, Any]) -> dict[str, Any]:
    """check-bot's own settings, the same with or without a tournament file."""
    return {k: flags[k] for k in ("matches", "concurrency", "seed", "log_dir")}


def _settings_from_flags(target: tuple[str, ...], flags: dict[str, Any]) -> CheckSettings:
    """The settings of ``check-bot [options] TARGET``; exit 2 on a bad one."""
    from referee.audit.checkbot import CheckSettings

    if flags["game"] is None:
        usage("--game is required (or --config FILE --bot NAME)")
    if not target:
        usage("give the bot's URL, or -- and the command that starts it")
    seats, sets = _option_sets(flags["game"], flags["options"], flags["players"], flags["all_variants"])
    is_url = len(target) == 1 and "://" in target[0]
    if is_url and not target[0].startswith("http://"):
        usage(f"{target[0]}: check-bot reaches bots over http:// only")
    if not is_url and not any("{port}" in a for a in target):
        usage("the bot's command must contain {port} (where it listens), or give its URL")
    given: dict[str, int] = {k: DEFAULTS[k] if flags[k] is None else flags[k] for k in DEFAULTS}
    return CheckSettings(
        game=flags["game"],
        option_sets=tuple(sets),
        url=target[0] if is_url else None,
        command=None if is_url else target,
        players=seats,
        token=_token(flags["token_env"]),
        deadline_ms=given["deadline_ms"],
        max_response_bytes=given["max_response_bytes"],
        startup_ms=given["startup_ms"],
        max_concurrent=given["max_concurrent"],
        **_own_flags(flags),
    )


def _settings_from_file(
    target: tuple[str, ...], config_path: Path | None, bot_name: str | None, flags: dict[str, Any]
) -> CheckSettings:
    """The settings of ``check-bot --config FILE --bot NAME``: everything the file says
    about the bot; exit 2 on a bad file, an unknown bot, or a setting given twice."""
    from referee.audit.checkbot import settings_for
    from referee.config.parse import load_config
    from referee.schedule.formats import check

    if config_path is None or bot_name is None:
        usage("--config FILE and --bot NAME go together")
    if target:
        usage(f"--config: the bot's command or URL comes from {config_path}; give no TARGET")
    given = [k for k in (*FROM_FILE, *FROM_FILE_TOO) if flags[k] not in (None, (), False)]
    if given:
        shown = ", ".join("--" + k.replace("_", "-") for k in given)
        usage(f"{shown}: with --config these come from {config_path}")
    config = check(load_config(config_path))
    try:
        settings = settings_for(config, bot_name, **_own_flags(flags))
    except KeyError:
        usage(f"--bot: {config_path} has no bot {bot_name!r} (its bots: {', '.join(b.name for b in config.bots)})")
    if settings.url is not None and not settings.url.startswith("http://"):
        usage(f"bot {bot_name!r} is at {settings.url}: check-bot reaches bots over http:// only")
    return settings


def _option_sets(
    game: str, options: tuple[str, ...], players: int | None, all_variants: bool
) -> tuple[int, list[dict[str, Any]]]:
    """The seats and the option sets check-bot plays, from its --game, --option,
    --players and --all-variants; exit 2 on a bad one."""
    from referee.audit.checkbot import default_players, option_sets
    from referee.games.base import OptionError

    if game not in GAMES:
        usage(f"--game: no game {game!r} (known: {', '.join(sorted(GAMES))})")
    chosen: dict[str, Any] = {}
    for item in options:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            usage(f"--option {item!r}: expected KEY=VALUE")
        chosen[key.strip()] = _option_value(value.strip())
    g = GAMES[game]
    seats = players or default_players(g)
    if not g.info.min_seats <= seats <= g.info.max_seats:
        usage(f"--players: {game} is for {g.info.min_seats}-{g.info.max_seats} players")
    try:
        return seats, option_sets(g, seats, chosen, all_variants)
    except OptionError as exc:
        usage(f"--option {exc}")


def _token(token_env: str | None) -> Secret | None:
    """The bearer token in the environment variable ``token_env``; exit 2 when it is unset."""
    if token_env is None:
        return None
    if not os.environ.get(token_env):
        usage(f"--token-env: environment variable {token_env} is not set")
    return Secret(os.environ[token_env])
