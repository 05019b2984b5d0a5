"""``docs/config.md`` from the key declarations: ``python -m referee.config.docs > docs/config.md``."""

from __future__ import annotations

from typing import Any

from referee.config.keys import REQUIRED, type_name
from referee.config.model import BOT_KEYS, CLUSTER_KEYS, LIMIT_KEYS, TOURNAMENT_KEYS


def keys_markdown() -> str:
    """The table of every key of the tournament file, as docs/config.md shows it."""
    lines = [
        "# The tournament file's keys",
        "",
        "Written by `python -m referee.config.docs` from the declarations in `referee/config/model.py`"
        " (a test keeps it current): the one reference of the tournament file. [tournament.md](tournament.md)"
        " shows a file in use; [seasons.md](seasons.md) explains the formats and stopping rules,"
        " [cage.md](cage.md) the limits of started bots, [scale.md](scale.md) workers and clusters.",
    ]
    for section, keys in (
        ("[tournament]", TOURNAMENT_KEYS),
        ("[limits]", LIMIT_KEYS),
        ("[[bot]]", BOT_KEYS),
        ("[cluster]", CLUSTER_KEYS),
    ):
        lines += ["", f"## {section}", "", "| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        for name, k in keys.items():
            default = "required" if k.default is REQUIRED else "—" if k.default is None else _toml(k.default)
            allowed = " / ".join(f"`{c}`" for c in k.choices) if k.choices else k.bounds
            allowed += f" {k.note}" if k.note and allowed else ""
            typ = type_name(k.type()).split(" ", 1)[1]
            doc = k.doc.replace("|", "\\|")
            lines.append(f"| `{name}` | {typ} | {default} | {allowed} | {doc} |")
    return "\n".join(lines) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, (tuple, list)):
        return "`[]`"
    if isinstance(value, dict):
        return "`{}`"
    return f"`{value}`"


if __name__ == "__main__":
    print(keys_markdown(), end="")
