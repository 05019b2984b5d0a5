"""Golden playthroughs: the third test level of DESIGN.md (style 9).

Each file ``<game>.<variant>.jsonl`` here holds a few seeded matches of one game and
variant, played by a deterministic policy (a seeded random index into ``legal``; in The
Game with claims, every third decision of a seat also sends claims). Per match:

* a header line ``{"match": k, "game", "variant", "seats", "options", "seed"}``;
* one line per decision, in the order ``match.play_match`` asks (a simultaneous batch is
  viewed before any seat of it plays): ``{"d", "seat", "view", "legal", "action"}``
  plus ``"claims"`` when the policy sent some. ``view`` is stored as a delta against the
  view of the line before (whichever seat it was): a key is present only when its value
  changed; a list that only grew is stored as ``"<key>+": [the new items]``, a list of the
same length with a few items changed as ``"<key>~": {"index": item, ...}``. ``legal``
  is stored in full, or as ``"legal-": [indices]`` when it is the same seat's previous
  legal list with the items at those indices removed;
* ``{"result": ...}``, the final ``Result.to_json()``.

A rule change shows as a diff of these files across versions, and ``test_golden.py``
replays them and fails with a readable diff at the first decision that differs.

Regenerate after an intended rule or view change (then read ``git diff``)::

    .venv/bin/python -m tests.games.golden --update

Without ``--update`` the command checks the files and prints the first difference.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.games import get_game

HERE = Path(__file__).parent
SEEDS = (1, 2)


@dataclass(frozen=True)
class Case:
    """One game and variant: the file ``<game>.<variant>.jsonl``."""

    game: str
    variant: str
    seats: int
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """Where this case's golden file lives."""
        return HERE / f"{self.game}.{self.variant}.jsonl"


CASES = (
    Case("nimmt_plus", "plus", 3, {"variant": "plus"}),
    Case("nimmt_plus", "plus_dealt_zeros", 2, {"variant": "plus_dealt_zeros", "zero_heads": 2}),
    Case("nimmt_plus", "zeros_negative", 2, {"variant": "zeros_negative"}),
    Case("nimmt_plus", "simple", 2, {"variant": "simple"}),
    Case("drahtseilakt", "standard", 3),
    Case("drahtseilakt", "tactical", 3, {"tactical": True}),
    Case("drahtseilakt", "chaotic", 3, {"chaotic": True}),
    Case("drahtseilakt", "tactical_chaotic", 3, {"tactical": True, "chaotic": True}),
    Case("the_game", "standard", 2),
    Case("the_game", "pro", 3, {"pro": True}),
    Case("the_game", "on_fire", 1, {"on_fire": True}),
    Case("the_game", "reduced_hand_no_claims", 4, {"reduced_hand": True, "communication": "none"}),
    Case("dieci", "standard", 4, {"tokens": 2}),
    Case("dieci", "no_reshuffle", 4, {"tokens": 2, "reshuffle": False}),
)


def dumps(value: Any) -> str:
    """One compact JSON line, the same bytes on every run."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``after`` as changes against ``before`` (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in after.items():
        if key in before and before[key] == value:
            continue
        old = before.get(key)
        if isinstance(old, list) and isinstance(value, list) and len(value) > len(old) and value[: len(old)] == old:
            out[key + "+"] = value[len(old) :]
        elif isinstance(old, list) and isinstance(value, list) and len(value) == len(old) > 1:
            changed = {str(i): v for i, (o, v) in enumerate(zip(old, value)) if o != v}
            out[key + ("~" if len(changed) * 2 <= len(value) else "")] = (
                changed if len(changed) * 2 <= len(value) else value
            )
        else:
            out[key] = value
    gone = [key for key in before if key not in after]
    if gone:
        out["-"] = gone
    return out


def undelta(before: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """The view that ``change`` describes against ``before``."""
    out = {key: value for key, value in before.items() if key not in change.get("-", ())}
    for key, value in change.items():
        if key == "-":
            continue
        if key.endswith("+"):
            out[key[:-1]] = list(out[key[:-1]]) + value
        elif key.endswith("~"):
            items = list(out[key[:-1]])
            for i, item in value.items():
                items[int(i)] = item
            out[key[:-1]] = items
        else:
            out[key] = value
    return out


def legal_delta(before: list[Any] | None, after: list[Any]) -> dict[str, Any]:
    """``{"legal-": [indices]}`` if ``after`` is ``before`` with those items removed,
    else ``{"legal": after}``."""
    if before is None or len(after) >= len(before):
        return {"legal": after}
    gone, j = [], 0
    for i, item in enumerate(before):
        if j < len(after) and after[j] == item:
            j += 1
        else:
            gone.append(i)
    return {"legal-": gone} if j == len(after) else {"legal": after}


def unlegal(before: list[Any] | None, line: dict[str, Any]) -> list[Any]:
    """The legal list a line describes (see ``legal_delta``)."""
    if "legal" in line:
        return list(line["legal"])
    gone = set(line["legal-"])
    return [item for i, item in enumerate(before or []) if i not in gone]


def play(case: Case, seed: int) -> Iterator[dict[str, Any]]:
    """The lines of one match of ``case`` (header, decisions, result), as dicts."""
    game = get_game(case.game)
    options = game.check_options(case.seats, case.options)
    yield {"game": case.game, "variant": case.variant, "seats": case.seats, "options": case.options, "seed": seed}
    state = game.setup(case.seats, seed, options)
    policy = random.Random(seed ^ 0x60D)
    claims_on = "claims" in game.info.extra_reply_fields and options.get("communication") == "claims"
    last: dict[str, Any] = {}
    last_legal: dict[int, list[Any]] = {}
    asked = [0] * case.seats
    d = 0
    while not game.is_over(state):
        batch = [(s, game.view(state, s), game.legal(state, s)) for s in game.to_act(state)]
        for s, view, legal in batch:
            action = legal[policy.randrange(len(legal))]
            line: dict[str, Any] = {"d": d, "seat": s, "view": delta(last, view)}
            line.update(legal_delta(last_legal.get(s), legal))
            line["action"] = action
            last, last_legal[s] = view, legal
            asked[s] += 1
            state = game.apply(state, s, action)
            if claims_on and asked[s] % 3 == 0:
                line["claims"] = sorted(policy.sample(range(4), policy.randrange(3)))
                state = game.apply_extras(state, s, {"claims": line["claims"]})
            d += 1
            yield line
    yield {"result": game.result(state).to_json()}


def render(case: Case) -> str:
    """The whole golden file of ``case``."""
    return "".join(dumps(line) + "\n" for seed in SEEDS for line in play(case, seed))


def pretty(value: Any) -> list[str]:
    """Lines for a readable diff."""
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def first_difference(case: Case) -> str | None:
    """Replay ``case``'s file through today's rules; a readable diff at the first
    decision where they differ, or None if the file still holds."""
    if not case.path.exists():
        return f"{case.path.name}: missing (run python -m tests.games.golden --update)"
    stored = [json.loads(line) for line in case.path.read_text(encoding="utf-8").splitlines()]
    fresh = [json.loads(dumps(line)) for seed in SEEDS for line in play(case, seed)]
    view_old: dict[str, Any] = {}
    view_new: dict[str, Any] = {}
    legal_old: dict[int, list[Any]] = {}
    legal_new: dict[int, list[Any]] = {}
    for number, (old, new) in enumerate(zip(stored, fresh), start=1):
        if "game" in old:
            view_old, view_new, legal_old, legal_new = {}, {}, {}, {}
        where = f"{case.path.name} line {number}"
        if "view" in old and "view" in new:
            s_old, s_new = old["seat"], new["seat"]
            view_old, view_new = undelta(view_old, old["view"]), undelta(view_new, new["view"])
            legal_old[s_old] = unlegal(legal_old.get(s_old), old)
            legal_new[s_new] = unlegal(legal_new.get(s_new), new)
            where += f" (decision {old['d']}, seat {s_old})"
            if s_old != s_new:
                return f"{where}: seat {s_new} is asked instead"
            pairs = {
                "view": (view_old, view_new),
                "legal": (legal_old[s_old], legal_new[s_new]),
                "action": (old.get("action"), new.get("action")),
                "claims": (old.get("claims"), new.get("claims")),
            }
            for key, (a, b) in pairs.items():
                if a != b and key == "view":
                    fields = [k for k in {**a, **b} if a.get(k) != b.get(k)]
                    return "\n".join(_diff(where, f"view[{k!r}]", a.get(k), b.get(k)) for k in fields)
                if a != b:
                    return _diff(where, key, a, b)
        elif old != new:
            return _diff(where, "line", old, new)
    if len(stored) != len(fresh):
        return f"{case.path.name}: {len(stored)} lines stored, {len(fresh)} now (the match ends elsewhere)"
    return None


def _diff(where: str, key: str, old: Any, new: Any) -> str:
    lines = difflib.unified_diff(pretty(old), pretty(new), "golden", "now", lineterm="", n=2)
    return f"{where}: {key} differs\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Check the golden files, or rewrite them with ``--update``."""
    ap = argparse.ArgumentParser(prog="python -m tests.games.golden", description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="rewrite every golden file from today's rules")
    args = ap.parse_args(argv)
    bad = 0
    for case in CASES:
        if args.update:
            case.path.write_text(render(case), encoding="utf-8")
            print(f"wrote {case.path.name} ({case.path.stat().st_size} bytes)")
            continue
        problem = first_difference(case)
        if problem:
            bad += 1
            print(problem)
    if not args.update:
        print(f"{len(CASES) - bad} of {len(CASES)} golden files hold")
    return 1 if bad else 0
