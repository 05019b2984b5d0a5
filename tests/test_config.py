"""The tournament file: defaults, and an error naming file, key and problem for every
kind of mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config.model import Secret
from referee.config.parse import load_config
from referee.errors import ConfigError
from referee.schedule.settings import published

pytestmark = pytest.mark.parallel

GOOD = """
[tournament]
name = "t1"
game = "nimmt_plus"
players = 3

[[bot]]
name = "a"
url = "http://127.0.0.1:8001/"

[[bot]]
name = "b"
command = ["python", "-m", "sample_bots.nimmt", "random", "--port", "{port}"]

[[bot]]
name = "c"
url = "http://127.0.0.1:8002/"
token = "${REFEREE_TEST_TOKEN}"
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.toml"
    p.write_text(text)
    return p


def test_good_file_and_defaults(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, GOOD), env={"REFEREE_TEST_TOKEN": "tok-123"})
    assert cfg.name == "t1" and cfg.game == "nimmt_plus" and cfg.players == 3
    assert cfg.format == "round_robin" and cfg.rounds == 1 and cfg.concurrency == 8
    assert cfg.seed_secret and published(cfg)["seed"] is None and published(cfg)["seed_secret"] is True
    assert cfg.output == Path("leaderboards/t1")
    assert cfg.options == {"variant": "plus", "zero_heads": 0}
    assert cfg.limits.deadline_ms == 1000 and cfg.limits.on_fault == "fallback"
    assert cfg.limits.max_faults == 10 and cfg.limits.max_response_bytes == 65536
    assert [b.managed for b in cfg.bots] == [False, True, False]
    assert cfg.bots[2].token == Secret("tok-123")
    assert "tok-123" not in repr(cfg) and "tok-123" not in str(published(cfg))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: s.replace("players = 3", "player = 3"), "tournament.player: unknown key (did you mean 'players'?)"),
        (
            lambda s: s.replace("players = 3", 'players = "three"'),
            "tournament.players: expected an integer, got a string",
        ),
        (
            lambda s: s.replace('game = "nimmt_plus"', 'game = "nimt_plus"'),
            "tournament.game: unknown game 'nimt_plus' (did you mean 'nimmt_plus'?)",
        ),
        (
            lambda s: s + '\n[game]\nvarient = "plus"\n',
            "game.varient: nimmt_plus has no option 'varient' (did you mean 'variant'?)",
        ),
        (lambda s: s + '\n[game]\nvariant = "plussy"\n', "game.variant: 'plussy' is not one of"),
        (lambda s: s + "\n[limits]\ndeadline = 5\n", "limits.deadline: unknown key (did you mean 'deadline_ms'?)"),
        (
            lambda s: s + '\n[limits]\non_fault = "forfit"\n',
            "limits.on_fault: unknown policy 'forfit' (did you mean 'forfeit'?)",
        ),
        (lambda s: s.replace("format", "x") + "\n", None),
        (lambda s: s.replace('name = "b"', 'name = "a"'), "bot[1].name: duplicate name 'a' (also bot[0])"),
        (lambda s: s.replace('url = "http://127.0.0.1:8001/"', ""), "bot[0] (a): give exactly one of url"),
        (
            lambda s: s.replace('name = "a"\n', 'name = "a"\ncommand = ["x", "{port}"]\n'),
            "bot[0] (a): give exactly one of url",
        ),
        (lambda s: s.replace('"--port", "{port}"', '"--port", "9"'), "bot[1] (b).command: must contain {port}"),
        (
            lambda s: s.replace("${REFEREE_TEST_TOKEN}", "${NOT_SET_ANYWHERE}"),
            "bot[2] (c).token: environment variable NOT_SET_ANYWHERE is not set",
        ),
        (lambda s: s.replace('name = "c"', 'nmae = "c"'), "nmae: unknown key (did you mean 'name'?)"),
        (lambda s: s.replace("players = 3", "players = 9"), "tournament.players: 9 seats per match but only 3 bots"),
        (
            lambda s: s.replace("[tournament]", '[tournament]\nformat = "swiss"'),
            "tournament.format: unknown format 'swiss'",
        ),
        (
            lambda s: s.replace("[tournament]", "[tournament]\nconcurrency = 0"),
            "tournament.concurrency: must be at least 1",
        ),
        (lambda s: s.replace("[tournament]", "[turnament]"), "turnament: unknown key (did you mean 'tournament'?)"),
        (lambda s: s.replace("[[bot]]", "[bot]", 1), "not valid TOML"),
        (
            lambda s: s.replace('url = "http://127.0.0.1:8001/"', 'url = "ftp://x"'),
            "bot[0] (a).url: 'ftp://x' is not an http:// or https:// address",
        ),
    ],
)
def test_errors_name_file_key_and_problem(tmp_path: Path, edit, expected) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, edit(GOOD))
    if expected is None:
        load_config(path, env={"REFEREE_TEST_TOKEN": "x"})  # an edit that changes nothing relevant
        return
    with pytest.raises(ConfigError) as info:
        load_config(path, env={"REFEREE_TEST_TOKEN": "x"})
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert expected in message, message


def test_players_out_of_range_names_the_key(tmp_path: Path) -> None:
    text = GOOD.replace("players = 3", "players = 1")
    with pytest.raises(ConfigError, match=r"tournament.players: nimmt_plus is played by 2-7 players, not 1"):
        load_config(write(tmp_path, text), env={"REFEREE_TEST_TOKEN": "x"})


def test_missing_file_and_missing_game(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match=r"tournament.game: missing \(required\)"):
        load_config(write(tmp_path, GOOD.replace('game = "nimmt_plus"', "")), env={"REFEREE_TEST_TOKEN": "x"})


def test_overrides(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, GOOD), env={"REFEREE_TEST_TOKEN": "x"})
    over = cfg.with_overrides(seed=42, concurrency=3, output=tmp_path / "o")
    assert (over.seed, over.concurrency, over.output) == (42, 3, tmp_path / "o")
    with pytest.raises(ConfigError, match="--concurrency"):
        cfg.with_overrides(concurrency=0)


def test_a_tournament_too_big_is_refused_by_counting_before_anything_is_allocated(tmp_path: Path) -> None:
    import tracemalloc

    from referee.schedule.formats import MAX_MATCHES, check_count, match_count

    huge = GOOD.replace("players = 3", "players = 3\nrounds = 1000000000")
    tracemalloc.start()
    with pytest.raises(ConfigError) as err:
        check_count(load_config(write(tmp_path, huge), env={"REFEREE_TEST_TOKEN": "t"}))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "tournament.rounds" in str(err.value) and "1,000,000,000 matches" in str(err.value)
    assert f"{MAX_MATCHES:,}" in str(err.value) and peak < 5_000_000, "counted, not listed"

    bots = "\n".join(f'[[bot]]\nname = "b{i}"\nurl = "http://127.0.0.1:{8000 + i}/"' for i in range(60))
    sixty = f'[tournament]\ngame = "nimmt_plus"\nplayers = 7\n{bots}\n'
    try:
        check_count(load_config(write(tmp_path, sixty)))
    except ConfigError as exc:
        assert "386,206,920" in str(exc) and "60 bots in tables of 7" in str(exc)
    else:
        raise AssertionError("60 bots x 7 seats must be refused")
    ok = load_config(
        write(tmp_path, GOOD.replace("players = 3", "players = 3\nrounds = 1000")), env={"REFEREE_TEST_TOKEN": "t"}
    )
    assert match_count(check_count(ok)) == 1000


def test_seed_given_or_secret(tmp_path: Path) -> None:
    given = load_config(
        write(tmp_path, GOOD.replace("players = 3", "players = 3\nseed = 5")), env={"REFEREE_TEST_TOKEN": "t"}
    )
    assert (given.seed, given.seed_secret) == (5, False) and "seed_secret" not in published(given)
    secret = load_config(write(tmp_path, GOOD), env={"REFEREE_TEST_TOKEN": "t"})
    assert secret.seed_secret and secret.with_overrides(seed=9).seed_secret is False
