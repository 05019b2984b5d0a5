"""``referee verify``: rebuild a whole published tournament from its files and the rules.

For every journal line: the deal is dealt again from the seed and its fingerprint
compared with ``deal_hash``; the match's transcript is played through the rules, each
action checked legal for that seat at that moment (and a fallback's action checked to be
the one the seeded fallback plays); the result's scores, ranks (forfeits applied), game
details and per-seat stats, the faults, the decision counts and the response times are
compared with the journal. Then the standings files are rendered again from the journal
by the publish functions and compared byte for byte with the files in the folder.

Without transcripts (``transcripts = "none"``) the deal fingerprints, the ranks as they
follow from the scores, and the standings files are checked; the report says what could
not be.

Once the seed is public, the schedule is derived again (``audit.schedule_check``): every
journal line must hold its fixture's id, seed and bots (a ladder's tables chosen again
from the journal before them), and every scheduled match be in the journal or dropped.

The journal lines come through its reader, checked against ``store.line.LINE``: their
shape is not checked again here.

Where the folder has replay packs (``store.packs``), every pack line must be whole, in its
pack and in index order, name a match of the journal, and hold that match's moves as its
transcript has them (seats, actions, who chose); every match with a transcript must have
its entry.

Where the journal records bot versions (``versions``), a problem at a decision names the
seat's bot and version, and the report names every bot's versions.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from referee.audit.schedule_check import NOT_YET, ScheduleCheck
from referee.bots.client.protocol import find_legal
from referee.errors import ReplayError
from referee.games.base import Game, IllegalAction, InvalidExtras, Result, ranks_from_scores
from referee.match.rules import deal_fingerprint, fallback_index, ranks_with_forfeits
from referee.record import MALFORMED
from referee.report.policy import standings
from referee.report.progress import OnProgress, nothing
from referee.report.publish import write_leaderboard
from referee.store import packs, transcripts
from referee.store.journal import journal_details
from referee.store.matches import game_of, options_of
from referee.store.tournament_file import load_output_dir

MAX_SHOWN = 20  # problems kept for the report; the count goes on
MATCHES_STEP = "matches verified"


VERSION_LINES = 10  # bots whose versions verify lists one line each; more are summarised


@dataclass
class Problem:
    """One mismatch: the match, the decision (index in the match, seat, the seat's
    decision number) when there is one, the field and what differs."""

    match: str
    field: str
    detail: str
    decision: tuple[int, int, int] | None = None
    who: str = ""  # the decision's seat: its bot, and its version where the journal has one

    def __str__(self) -> str:
        if self.match == "-":  # a file of the folder, not a match
            return f"{self.field}: {self.detail}"
        where = f"match {self.match}"
        if self.decision is not None:
            i, seat, d = self.decision
            where += f", decision {i + 1} (seat {seat}'s decision {d}{', ' + self.who if self.who else ''})"
        return f"{where}: {self.field}: {self.detail}"


@dataclass
class Report:
    """What ``verify`` checked and found."""

    folder: Path
    matches: int = 0
    replayed: int = 0
    decisions: int = 0
    files: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    not_checked: list[str] = field(default_factory=list)
    seconds: float = 0.0
    replay_seconds: float = 0.0  # reading transcripts and replaying, without the standings files
    cpu_seconds: float = 0.0  # this process's CPU time, the whole check
    replay_cpu_seconds: float = 0.0  # this process's CPU time, without the standings files
    versions: dict[str, dict[str, int]] = field(default_factory=dict)  # bot -> version -> matches, first seen first
    line: Mapping[str, Any] | None = None  # the journal line being checked (names a problem's seat)

    @property
    def ok(self) -> bool:
        """True when nothing differed."""
        return self.problem_count == 0

    def add(self, p: Problem) -> None:
        """Count ``p``; keep it when fewer than MAX_SHOWN are kept."""
        self.problem_count += 1
        if len(self.problems) < MAX_SHOWN:
            if p.decision is not None and self.line is not None and 0 <= p.decision[1] < len(self.line["bots"]):
                seat = p.decision[1]
                versions = self.line.get("versions")
                p.who = f"bot {self.line['bots'][seat]}" + (f" version {versions[seat]}" if versions else "")
            self.problems.append(p)

    def count_versions(self, rec: Mapping[str, Any]) -> None:
        """Count the version of every seat of the journal line ``rec``."""
        for bot, v in dict(zip(rec["bots"], rec.get("versions") or ())).items():  # a match once per bot
            per = self.versions.setdefault(bot, {})
            per[v] = per.get(v, 0) + 1

    def version_lines(self, every: bool = False) -> list[str]:
        """The bots' versions: a line per bot (its versions and their matches, oldest first)
        when ``every`` or for at most ``VERSION_LINES`` bots; else one summary line naming
        the bots with more than one version."""
        if every or len(self.versions) <= VERSION_LINES:
            return [
                f"  {bot}: " + ", ".join(f"version {v} ({n} matches)" for v, n in per.items())
                for bot, per in sorted(self.versions.items())
            ]
        several = sorted(
            ((b, len(per)) for b, per in self.versions.items() if len(per) > 1), key=lambda x: (-x[1], x[0])
        )
        named = ", ".join(f"{b} ({n})" for b, n in several[:VERSION_LINES])
        more = f" and {len(several) - VERSION_LINES} more" if len(several) > VERSION_LINES else ""
        alone = len(self.versions) - len(several)
        return [
            f"  versions: {alone} bot{'s' if alone != 1 else ''} played one version"
            + (f"; {len(several)} more than one: {named}{more}" if several else "")
            + " (--verbose lists every bot's)"
        ]

    def verdict(self) -> str:
        """The one-line verdict."""
        rate = self.replayed / self.replay_seconds if self.replay_seconds > 0 else 0.0
        what = (
            f"{self.matches} matches, {self.replayed} replayed through the rules ({self.decisions} decisions, "
            f"{rate:,.0f} matches/s), {len(self.files)} standings files re-rendered"
        )
        if self.versions:
            what += f", {len(self.versions)} bots in {sum(len(p) for p in self.versions.values())} versions"
        missing = f"; not checked: {'; '.join(self.not_checked)}" if self.not_checked else ""
        if self.ok:
            return f"verified {self.folder}: {what}, all consistent{missing}"
        more = f" (and {self.problem_count - 1} more)" if self.problem_count > 1 else ""
        return f"FAILED {self.folder}: {self.problems[0]}{more}; {what}{missing}"


PROGRESS_EVERY = 64  # matches between two progress reports (the display throttles further)


def verify(out: Path, on_progress: OnProgress = nothing) -> Report:
    """Check every match and the standings files of the output folder ``out``;
    ``on_progress`` is told how many matches are checked, then the files.

    A folder that is not a tournament's output raises LeaderboardError."""
    started, cpu = time.perf_counter(), time.process_time()
    tournament, lines = load_output_dir(out)
    records = list(lines)
    settings = tournament["settings"]
    report = Report(out, matches=len(records))
    game = game_of(settings)
    has_transcripts = transcripts.exists(out)
    pending: dict[str, transcripts.Transcript] = {}
    stream = transcripts.read_all(out) if has_transcripts else iter(())
    checker = _Checker(game, settings, report)
    fixtures = _schedule_check(tournament, out, report)
    total = len(records)
    moves: dict[int, bytes] = {}  # each match's moves, digested, for the packs' check
    for done, rec in enumerate(records):
        if done % PROGRESS_EVERY == 0:
            on_progress(done, total, MATCHES_STEP)
        report.line = rec
        report.count_versions(rec)
        mid = rec["id"]
        tr = _next_transcript(mid, stream, pending) if has_transcripts else None
        if tr is None:
            checker.without_transcript(rec)
            if has_transcripts:
                report.add(Problem(mid, "transcript", "no transcript for this journal line"))
        else:
            before = report.problem_count
            checker.recheck(rec, tr)
            if report.problem_count == before:  # a match named already is not named again by the packs
                moves[int(rec["index"])] = _moves_digest(tr.seats, tr.actions, tr.by)
        if fixtures is not None:  # after the match's own check: a changed seed is first a deal's problem
            fixtures.line(rec)
    if not has_transcripts and records and settings.get("transcripts") == "all":
        report.add(Problem("-", "transcripts", f"{out / transcripts.FOLDER}: missing, yet the run kept transcripts"))
    elif not has_transcripts and records:
        report.not_checked.append(
            f"actions, legality, scores, details and faults of {len(records)} matches (no transcripts: "
            'run with [tournament] transcripts = "all")'
        )
    report.line = None
    if fixtures is not None:  # a secret seed, revealed, is revealed once the run is complete
        report.not_checked.extend(fixtures.finish(bool(settings.get("seed_secret")) and "stopped" not in tournament))
    if packs.exists(out):  # after the journal's own checks: a line the journal lacks is named as such first
        _check_packs(out, {int(r["index"]): str(r["id"]) for r in records}, moves, report)
    on_progress(total, total, MATCHES_STEP)
    report.replay_seconds = time.perf_counter() - started
    report.replay_cpu_seconds = time.process_time() - cpu
    _check_files(out, tournament, records, report, on_progress)
    report.seconds = time.perf_counter() - started
    report.cpu_seconds = time.process_time() - cpu
    return report


def _moves_digest(seats: Sequence[int], actions: Sequence[Any], by: str) -> bytes:
    """A digest of a match's moves (seats, actions, who chose), as the transcript or a pack holds them."""
    moves = [list(seats), list(actions), by]
    try:
        raw = orjson.dumps(moves)
    except TypeError:  # an integer past 64 bits: the standard library's spelling
        raw = json.dumps(moves, separators=(",", ":")).encode()
    return hashlib.blake2b(raw, digest_size=16).digest()


def _check_packs(out: Path, ids: Mapping[int, str], moves: Mapping[int, bytes], report: Report) -> None:
    """The replay packs against the journal (``ids``: index -> id) and the transcripts' moves."""
    seen: set[int] = set()
    for path in packs.pack_files(out):
        entries, whole = packs.read_pack(path)
        where = f"{path.relative_to(out)}"
        if not whole:
            report.add(Problem("-", "packs", f"{where}: a line that is not a pack entry (torn or damaged)"))
        last = -1
        for mid, index, b64 in entries:
            if packs.pack_name(index) != path.name or index <= last:
                report.add(Problem(mid, "packs", f"{where}: entry {index} out of its pack or out of index order"))
            last = max(last, index)
            if ids.get(index) != mid:
                report.add(Problem(mid, "packs", f"{where}: entry {index} names a match not in the journal"))
                continue
            seen.add(index)
            try:
                doc = packs.inflate(b64)
                digest = _moves_digest(doc["seat"], doc["action"], doc["by"])
            except (ReplayError, KeyError, TypeError) as exc:
                report.add(Problem(mid, "packs", f"{where}: a damaged entry ({exc})"))
                continue
            if index in moves and digest != moves[index]:
                report.add(Problem(mid, "packs", f"{where}: its moves differ from the transcript's"))
    for index in sorted(moves.keys() - seen):  # matches whose transcript checked out
        report.add(Problem(ids[index], "packs", "no entry in the replay packs"))


def _schedule_check(tournament: Mapping[str, Any], out: Path, report: Report) -> ScheduleCheck | None:
    """The check of the journal against the schedule, once the seed is public (else a note)."""
    if tournament["settings"].get("seed") is None:
        report.not_checked.append(NOT_YET)
        return None
    try:
        return ScheduleCheck(tournament, out, lambda mid, what, detail: report.add(Problem(mid, what, detail)))
    except (ValueError, KeyError, TypeError) as exc:  # settings that check as fields yet make no schedule
        report.add(Problem("-", "schedule", f"tournament.json's settings make no schedule ({exc})"))
        return None


def _next_transcript(
    mid: str, stream: Iterator[transcripts.Transcript], pending: dict[str, transcripts.Transcript]
) -> transcripts.Transcript | None:
    """The transcript of ``mid``: transcripts come in journal order, except those of
    matches a kill cut before their journal line (skipped, kept until seen) and matches
    played again after a resume (the later copy wins)."""
    if mid in pending:
        return pending.pop(mid)
    for tr in stream:
        if tr.id == mid:
            return tr
        pending[tr.id] = tr
    return None


class _Checker:
    """Rechecks the matches of one tournament through the rules and compares them with the journal."""

    def __init__(self, game: Game, settings: Mapping[str, Any], report: Report) -> None:
        self.game = game
        self.settings = settings
        self.report = report
        self.on_fault = settings.get("on_fault", "fallback")
        self.max_faults = int(settings.get("max_faults", 10))
        self._options: dict[int, dict[str, Any]] = {}

    def options(self, n: int) -> dict[str, Any]:
        """The game's options for ``n`` seats, defaults filled."""
        if n not in self._options:
            self._options[n] = options_of(self.game, self.settings, n)
        return self._options[n]

    def without_transcript(self, rec: Mapping[str, Any]) -> None:
        """What can be checked from a journal line alone: the deal and the ranks."""
        mid = rec["id"]
        n = len(rec["bots"])
        state = self.game.setup(n, rec["seed"], self.options(n))
        if rec["deal_hash"] and not _same_deal(self.game, state, n, rec["deal_hash"]):
            self.report.add(Problem(mid, "deal_hash", f"the seed {rec['seed']} deals another hand"))
            return
        ranks = ranks_with_forfeits(rec["scores"], _plain_ranks(rec), rec["lower_is_better"], rec["forfeited"])
        if ranks != rec["ranks"]:
            self.report.add(Problem(mid, "ranks", f"journal {rec['ranks']}, the scores give {ranks}"))

    def recheck(self, rec: Mapping[str, Any], tr: transcripts.Transcript) -> None:
        """Play ``tr`` through the rules and compare everything with ``rec``."""
        game, add = self.game, self.report.add
        mid = rec["id"]
        if tr.seed != rec["seed"]:
            add(Problem(mid, "seed", f"journal {rec['seed']}, transcript {tr.seed}"))
            return
        n = len(rec["bots"])
        seed = rec["seed"]
        state = game.setup(n, seed, self.options(n))
        if rec["deal_hash"] and not _same_deal(game, state, n, rec["deal_hash"]):
            add(Problem(mid, "deal_hash", f"the seed {seed} deals another hand than the journal's fingerprint"))
            return
        if game.fast_replay and not tr.faults and not tr.extras and "f" not in tr.by and None not in tr.ms:
            # every decision the bot's own, answered without a fault: no fallback to check,
            # no views to build; the game plays the actions at once and checks each is legal
            if self._recheck_at_once(mid, rec, tr, state):
                return
            state = game.setup(n, seed, self.options(n))  # the ordinary way names what is wrong
        self._recheck_decisions(mid, rec, tr, state)

    def _recheck_at_once(self, mid: str, rec: Mapping[str, Any], tr: transcripts.Transcript, state: Any) -> bool:
        """``recheck`` through ``Game.replay``; False when the game refuses the transcript."""
        seats, ms = tr.seats, tr.ms
        n = len(rec["bots"])
        result = self.game.replay(state, seats, tr.actions)
        if result is None:
            return False
        lat: list[list[int]] = [[] for _ in range(n)]
        if "latency_ms" in rec:  # older journals: response times to compare
            for s, t in zip(seats, ms):
                lat[s].append(t)  # type: ignore[arg-type]
        self.report.replayed += 1
        self.report.decisions += len(seats)
        self._compare(mid, rec, result, [0] * n, [seats.count(s) for s in range(n)], [], lat)
        return True

    def _recheck_decisions(self, mid: str, rec: Mapping[str, Any], tr: transcripts.Transcript, state: Any) -> None:
        """``recheck`` one decision at a time from the deal ``state``; stops at the first problem."""
        game, report = self.game, self.report
        add = report.add
        n = len(rec["bots"])
        seats, actions, by, ms, fault_at, extras = tr.seats, tr.actions, tr.by, tr.ms, tr.faults, tr.extras
        total = len(seats)
        i = 0
        faults = [0] * n
        asked = [0] * n
        nth = [0] * n  # each seat's decision number
        lat: list[list[int]] = [[] for _ in range(n)]
        seen: list[tuple[int, int, str]] = []
        apply, to_act, is_over = game.apply, game.to_act, game.is_over
        while not is_over(state):
            for s in to_act(state):
                if i >= total:
                    add(Problem(mid, "moves", f"the transcript ends after {total} decisions; seat {s} is to act"))
                    return
                d = nth[s] if seats[i] == s else -1
                where = (i, s, d)
                if seats[i] != s:
                    add(Problem(mid, "seat", f"seat {s} is to act, the transcript has seat {seats[i]}", where))
                    return
                nth[s] += 1
                action, fault, was_asked = actions[i], fault_at.get(i), ms[i] is not None
                if by[i] == "f":
                    problem = self._fallback_problem(rec["seed"], state, action, fault, was_asked, where)
                    if problem is not None:
                        add(Problem(mid, *problem, where))
                        return
                elif not was_asked or fault not in (None, MALFORMED):
                    add(Problem(mid, "by", "marked as the bot's choice, yet the bot was not asked or faulted", where))
                    return
                if was_asked:
                    asked[s] += 1
                    lat[s].append(ms[i])  # type: ignore[arg-type]
                    if faults[s] > self.max_faults:
                        add(Problem(mid, "ms", f"seat {s} was asked past max_faults {self.max_faults}", where))
                        return
                try:  # apply refuses exactly what is not in legal (every game's contract), at a fraction of its cost
                    state = apply(state, s, action)
                except IllegalAction as exc:
                    add(Problem(mid, "action", f"{_short(action)} is not legal for seat {s} here ({exc})", where))
                    return
                if i in extras:
                    try:
                        state = game.apply_extras(state, s, extras[i])
                    except InvalidExtras:
                        if fault != MALFORMED:
                            add(Problem(mid, "fault", "reply fields the rules refuse, yet no malformed fault", where))
                            return
                if fault is not None:
                    faults[s] += 1
                    seen.append((s, d, fault))
                i += 1
        if i < total:
            add(Problem(mid, "moves", f"{total - i} decisions after the end of the match"))
            return
        report.replayed += 1
        report.decisions += total
        self._compare(mid, rec, game.result(state), faults, asked, seen, lat)

    def _fallback_problem(
        self, seed: int, state: Any, action: Any, fault: str | None, was_asked: bool, where: tuple[int, int, int]
    ) -> tuple[str, str] | None:
        """What is wrong with a decision marked as the fallback's (field, detail), if anything."""
        if fault is None and was_asked:
            return "by", "played by the fallback, yet the bot answered without a fault"
        _, s, d = where
        legal = self.game.legal(state, s)
        expected = legal[fallback_index(seed, s, d, len(legal))] if legal else None
        if find_legal(action, [expected]) < 0:
            return "action", f"{_short(action)} marked as the fallback's, the fallback plays {_short(expected)}"
        return None

    def _compare(
        self,
        mid: str,
        rec: Mapping[str, Any],
        result: Result,
        faults: list[int],
        asked: list[int],
        seen: list[tuple[int, int, str]],
        lat: list[list[int]],
    ) -> None:
        game, add = self.game, self.report.add
        n = len(rec["bots"])
        if list(result.scores) != list(rec["scores"]):
            add(Problem(mid, "scores", f"journal {rec['scores']}, the rules give {result.scores}"))
        if result.lower_is_better != rec["lower_is_better"]:
            add(
                Problem(mid, "lower_is_better", f"journal {rec['lower_is_better']}, the rules {result.lower_is_better}")
            )
        forfeited = [s for s in range(n) if faults[s] > 0] if self.on_fault == "forfeit" else []
        if forfeited != list(rec["forfeited"]):
            add(Problem(mid, "forfeited", f"journal {rec['forfeited']}, the faults give {forfeited}"))
        ranks = ranks_with_forfeits(result.scores, result.ranks, result.lower_is_better, forfeited)
        if ranks != list(rec["ranks"]):
            add(Problem(mid, "ranks", f"journal {rec['ranks']}, the rules give {ranks}"))
        # today's journal keeps the top-level summary; older journals the whole details
        details = rec["details"]
        expected = result.details if journal_details(details) != details else journal_details(result.details)
        if expected != details:
            key = _first_difference(expected, details)
            add(Problem(mid, f"details.{key}", "differs from what the rules give"))
        stats = [game.seat_stats(result, s) for s in range(n)]
        if "stats" in rec and stats != rec["stats"]:
            add(Problem(mid, "stats", f"journal {rec['stats']}, the rules give {stats}"))
        if "decisions" in rec and asked != list(rec["decisions"]):
            add(Problem(mid, "decisions", f"journal {rec['decisions']}, the transcript asked {asked}"))
        in_journal = sorted((f["seat"], f["decision"], f["kind"]) for f in rec["faults"] if f.get("phase") == "act")
        in_transcript = sorted(seen)
        if in_journal != in_transcript:
            diff = sorted(set(in_journal) ^ set(in_transcript))
            add(Problem(mid, "faults", f"journal and transcript differ at (seat, decision, kind) {diff[:3]}"))
        if "latency_ms" in rec:
            for s in range(n):
                mine = lat[s]
                theirs = [round(x * 10) for x in rec["latency_ms"][s]]
                if mine != theirs:
                    add(Problem(mid, f"latency_ms[{s}]", "the journal's response times differ from the transcript's"))
                    break


def _check_files(
    out: Path,
    tournament: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    report: Report,
    on_progress: OnProgress,
) -> None:
    """Render the standings files from the journal again and compare them byte for byte."""
    board = standings(tournament, records, out, tournament["settings"]["bots"], on_progress)
    with tempfile.TemporaryDirectory(prefix="referee-verify-") as tmp:
        for path in write_leaderboard(Path(tmp), board, on_progress=on_progress, bot_pages=False):
            mine = out / path.name
            if not mine.is_file():
                report.not_checked.append(f"{path.name} (not in the folder)")
                continue
            report.files.append(path.name)
            if mine.read_bytes() != path.read_bytes():
                report.add(Problem("-", path.name, "differs from the file the journal renders"))


def _same_deal(game: Game, state: Any, n: int, deal_hash: str) -> bool:
    """True when ``state`` is the deal of the fingerprint ``deal_hash`` (``match.deal_fingerprint``).

    orjson writes the sorted views as the stdlib does unless they hold floats or non-ASCII
    text; equal bytes mean equal views either way, so only a mismatch is checked again
    with the fingerprint's own encoder."""
    try:
        views = orjson.dumps([game.view(state, s) for s in range(n)], option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return deal_fingerprint(game, state, n) == deal_hash
    if hashlib.sha256(views).hexdigest()[:16] == deal_hash:
        return True
    return deal_fingerprint(game, state, n) == deal_hash


def _plain_ranks(rec: Mapping[str, Any]) -> list[int]:
    return ranks_from_scores(rec["scores"], rec["lower_is_better"])


def _first_difference(a: Any, b: Any) -> str:
    """The first key path where ``a`` and ``b`` differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k) != b.get(k):
                sub = _first_difference(a.get(k), b.get(k))
                return f"{k}.{sub}" if sub else str(k)
        return ""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for j, (x, y) in enumerate(zip(a, b)):
            if x != y:
                sub = _first_difference(x, y)
                return f"{j}.{sub}" if sub else str(j)
    return ""


def _short(action: Any) -> str:
    text = repr(action)
    return text if len(text) <= 80 else text[:77] + "..."
