"""Bot versions: a fingerprint of the bot that played each match, computed on the head.

A bot's version is the first ``VERSION_HEX`` hex digits of a SHA-256 over:

- a started bot: its command as the file writes it, and the files of its folder (its
  ``workdir``; else the folder of the first file its command's arguments name, e.g.
  ``bot.py`` of ``python bot.py``; else the package of ``python -m PKG``; else the
  folder of the program itself unless it is the system's or Python's): every file's path
  relative to the folder, its size and its bytes, in path order, skipping ``.git``,
  ``__pycache__`` and ``*.pyc``; past ``MAX_FILES`` files or ``MAX_BYTES`` of content,
  the further files count by path and size only; the walk itself stops after
  ``MAX_ENTRIES`` files and folders (each folder's names in order), which the version
  then says, and the run says in a warning;
- a running bot: its URL;
- both: the ``version`` string its ``hello`` reply may carry (protocol.md).

So a changed file, command, URL or hello ``version`` makes a new version; the same bot
gives the same version on any machine (paths are relative, the token is left out).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from referee.bots.cage.sandbox import resolve_command
from referee.config.model import BotConfig, TournamentConfig

VERSION_HEX = 12
MAX_FILES = 10_000
MAX_ENTRIES = 4 * MAX_FILES  # files and folders the walk looks at, at most
MAX_BYTES = 64 * 1024 * 1024
_SKIP_DIRS = {".git", "__pycache__"}
log = logging.getLogger("referee")


def bot_folder(config: TournamentConfig, bot: BotConfig) -> Path | None:
    """The folder whose files make a started bot's version (see the module doc), or None."""
    if bot.workdir is not None:
        return bot.workdir
    argv = resolve_command(bot.command or (), config.path.resolve().parent)
    for i, arg in enumerate(argv[1:], start=1):
        if os.path.isabs(arg) and os.path.isfile(arg):
            return Path(arg).parent
        if arg == "-m" and i + 1 < len(argv):
            return _package_dir(argv[i + 1].split(".")[0])
    program = argv[0] if argv else ""
    if os.path.isabs(program) and os.path.isfile(program) and not _system(program):
        return Path(program).parent  # a compiled bot: its own folder
    return None


def _system(path: str) -> bool:
    """True for a program of the system or of this Python (an interpreter, not a bot)."""
    real = os.path.realpath(path)
    roots = ("/usr/", "/bin/", "/sbin/", "/opt/", sys.prefix + "/", sys.base_prefix + "/")
    return path.startswith(roots) or real.startswith(roots)


def _package_dir(top: str) -> Path | None:
    """The folder of the importable top-level package ``top`` (nothing is imported)."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def folder_digest(folder: Path) -> bytes:
    """The SHA-256 of ``folder``'s files as the module doc says."""
    return _digest(folder)[0]


def _digest(folder: Path) -> tuple[bytes, bool]:
    """``folder_digest`` and whether the walk saw every file (a walk stopped at
    ``MAX_ENTRIES`` is marked in the digest)."""
    h = hashlib.sha256()
    files = read = 0
    found, complete = _files(folder)
    if not complete:
        h.update(f"walk stopped at {MAX_ENTRIES} entries\0".encode())
    for rel, path in found:
        try:
            size = path.stat().st_size
        except OSError:
            continue
        h.update(f"{rel}\0{size}\0".encode("utf-8", "surrogateescape"))
        files += 1
        if files > MAX_FILES or read + size > MAX_BYTES:
            continue
        try:
            with open(path, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
        except OSError:
            continue
        read += size
    return h.digest(), complete


def _files(folder: Path) -> tuple[list[tuple[str, Path]], bool]:
    """(relative path, path) of every regular file under ``folder``, in path order, and
    whether the walk saw them all: it reads at most ``MAX_ENTRIES`` names of files and
    folders, folder by folder in a fixed order, so a bot folder of a million files costs
    the start of a run no more than the cap (and the same folder stops at the same file)."""
    found: list[tuple[str, Path]] = []
    left = MAX_ENTRIES
    stack = [str(folder)]
    while stack:
        entries: list[os.DirEntry[str]] = []
        try:
            with os.scandir(stack.pop()) as names:
                for entry in names:
                    entries.append(entry)
                    if len(entries) > left:
                        return sorted(found), False
        except OSError:
            continue
        left -= len(entries)
        below = []
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIP_DIRS:
                    below.append(entry.path)
            elif entry.is_file(follow_symlinks=False) and not entry.name.endswith(".pyc"):
                found.append((Path(entry.path).relative_to(folder).as_posix(), Path(entry.path)))
        stack.extend(reversed(below))
    return sorted(found), True


def bot_versions(config: TournamentConfig, hello: Mapping[str, str]) -> dict[str, str]:
    """Every bot's version (name -> hex id); ``hello``: the ``version`` each hello reply
    carried (name -> string, "" or absent when none)."""
    digests: dict[Path, bytes] = {}
    out: dict[str, str] = {}
    for b in config.bots:
        h = hashlib.sha256()
        if b.managed:
            h.update(b"command\0" + "\0".join(b.command or ()).encode("utf-8", "surrogateescape"))
            folder = bot_folder(config, b)
            if folder is not None:
                if folder not in digests:
                    digests[folder], complete = _digest(folder)
                    if not complete:
                        log.warning(
                            f"warning: bot {b.name!r}: its version counts the first {MAX_ENTRIES} files and folders "
                            f"of {folder} only (the fingerprint's cap: the rest was not walked)"
                        )
                h.update(b"\0files\0" + digests[folder])
        else:
            h.update(b"url\0" + (b.url or "").encode())
        h.update(b"\0hello\0" + hello.get(b.name, "").encode())
        out[b.name] = h.hexdigest()[:VERSION_HEX]
    return out
