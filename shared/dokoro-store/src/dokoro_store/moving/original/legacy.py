"""The original dokoro's legacy place: ``<project>/.dokoro/`` moved into the store folder, once.

Before its data lived in ``DOKORO_PATH/.dokoro``, the original kept it beside the workspace folder,
in ``<project>/.dokoro`` (the project being the workspace folder's parent). The original moved it
into place on its first open (reference §1.3); so does this dokoro, before the store is opened
(:meth:`dokoro_store.store.Store.open`, on the embedded SQLite store), and the moved database is
then converted as any store of the original (:mod:`.moving_in`: backed up, converted, verified):

1. **found** only when ``<project>/.dokoro`` is a real folder (never a symlink) whose
   ``db/dokoro.sqlite`` is the original's (its ``schema_version`` table, no revision of ours):
   one ``lstat`` per open when there is none;
2. **backed up first**: the legacy folder is copied whole (links copied as links, never followed)
   to ``.dokoro/backup/legacy-<UTC stamp>/`` of the store folder; an empty database this dokoro
   made in the store folder meanwhile (a server started there before answered "no past sessions")
   is set aside into the same backup;
3. **moved**: every file of the legacy folder goes to the same place under ``DOKORO_PATH/.dokoro``
   (folders merged; a file already there is never overwritten, the legacy one stays and is named
   in the record); the legacy folder is removed when emptied;
4. **told once**: the record ``legacy-move.json`` in the backup folder, a warning on stderr, and
   the next tool answer of this process.

When the store folder already holds a database with data, nothing is moved: the canonical store
is kept, and the same warning (once, recorded in ``.dokoro/backup/legacy-left.json``) names
``dokoro migrate --from-original <project>``, which brings the legacy history in beside it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from dokoro_store.moving.original.reading import is_original_database
from dokoro_store.paths import StorePaths
from dokoro_store.walls.files import atomic_write_text, file_lock

__all__ = ["LegacyMove", "legacy_folder", "move_legacy"]

log = logging.getLogger("dokoro.store")

_LOCK = "original-legacy-move"
_MOVED = "legacy-move.json"
_LEFT = "legacy-left.json"
# The tables whose rows are data somebody stored (the original's list, reference §1.3, and ours):
# a database with none of them filled is "trivially empty". Bookkeeping (tool outcomes, presence)
# does not count: a server started on the empty store records both before anyone noticed.
_DATA_TABLES = (
    "docs",
    "file_claims",
    "sessions",
    "entities",
    "shared_notes",
    "shared_blocks",
    "handoffs",
    "conversation_summaries",
    "memories",
    "plans",
    "questions",
    "tracking_items",
    "weekly_items",
    "task_timers",
)


@dataclass
class LegacyMove:
    """What moving the legacy folder did."""

    source: str  # the legacy folder, relative to the project (".dokoro")
    backup: Path
    moved: list[str] = field(default_factory=list)  # files moved, relative to the legacy folder
    kept: list[str] = field(default_factory=list)  # legacy files left: the store folder had its own
    set_aside: list[str] = field(default_factory=list)  # the store's empty database, into the backup

    def summary(self, paths: StorePaths) -> str:
        kept = f"; {len(self.kept)} file(s) the store already had were left in place" if self.kept else ""
        return (
            f"moved the original dokoro's store from its legacy place ({paths.root.parent.name}/.dokoro) into "
            f"{paths.root.name}/.dokoro: {len(self.moved)} file(s){kept}; a copy was kept first in "
            f"{paths.root.name}/.dokoro/backup/{self.backup.name}"
        )


def legacy_folder(paths: StorePaths) -> Path:
    """Where the original kept a project's data before ``DOKORO_PATH/.dokoro``."""
    return paths.root.parent / ".dokoro"


def _real_folder(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode)


def _trivially_empty(database: Path) -> bool:
    """No database there, or one in which no table of stored data holds a row (either schema)."""
    if not database.exists():
        return True
    if database.is_symlink() or not database.is_file():
        return False
    try:
        connection = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            return not any(
                connection.execute(f'SELECT 1 FROM "{name}" LIMIT 1').fetchone()
                for name in _DATA_TABLES
                if name in tables
            )
        finally:
            connection.close()
    except sqlite3.DatabaseError:
        return False  # not a database we can read: never set aside


def _files(folder: Path) -> list[Path]:
    """Every file (or link) under ``folder``, relative to it, without following links."""
    found: list[Path] = []
    for current, dirs, names in os.walk(folder, followlinks=False):
        base = Path(current)
        found += [(base / name).relative_to(folder) for name in names]
        # A link to a folder is listed by os.walk among dirs: moved as a link, never entered.
        found += [(base / name).relative_to(folder) for name in dirs if (base / name).is_symlink()]
    return sorted(found)


def _special_files(folder: str, names: list[str]) -> set[str]:
    """What a copy leaves out: anything but folders, regular files and links (a FIFO would block it)."""
    skipped = set()
    for name in names:
        mode = os.lstat(Path(folder) / name).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            skipped.add(name)
    return skipped


def _remove_empty(folder: Path) -> None:
    for current, _dirs, _names in sorted(os.walk(folder, followlinks=False), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):  # not empty: a file was kept
            Path(current).rmdir()


def _backup_folder(paths: StorePaths, now: datetime) -> Path:
    base = paths.data_dir / "backup" / f"legacy-{now:%Y%m%dT%H%M%SZ}"
    folder, counter = base, 2
    while folder.exists():
        folder = base.with_name(f"{base.name}-{counter}")
        counter += 1
    return folder


def move_legacy(paths: StorePaths, now: datetime, tell: Callable[[str], None]) -> LegacyMove | None:
    """Move the original's legacy folder into the store folder (see the module); None when there is
    none, when it was moved or left before, or when the store already holds data (then said once).
    ``tell`` takes the notice for the agent's next tool answer (the store's announcements)."""
    legacy = legacy_folder(paths)
    if not _real_folder(legacy) or legacy.resolve() == paths.data_dir.resolve():
        return None
    left = paths.data_dir / "backup" / _LEFT
    if left.is_file() or not is_original_database(legacy / "db" / "dokoro.sqlite"):
        return None  # none, or said once already: the store keeps its own data
    with file_lock(paths.locks_dir, _LOCK, within=paths.root):
        if not _real_folder(legacy) or not is_original_database(legacy / "db" / "dokoro.sqlite"):
            return None  # another process moved it while this one waited
        if not _trivially_empty(paths.sqlite_file):
            tell(f"⚠️ {_tell_left(paths, left, now)}.")
            return None
        done = _move(paths, legacy, now)
        tell(f"📦 {done.summary(paths)}.")
        return done


def _tell_left(paths: StorePaths, record: Path, now: datetime) -> str:
    message = (
        f"the original dokoro's legacy store {paths.root.parent.name}/.dokoro was left where it is: "
        f"{paths.root.name}/.dokoro already holds a store with data. Bring its history in beside it with "
        f"`dokoro migrate --from-original {paths.root.parent}`"
    )
    record.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        record, json.dumps({"at": f"{now:%Y-%m-%dT%H:%M:%SZ}", "note": message}, indent=2) + "\n", within=paths.root
    )
    log.warning("dokoro: %s", message)
    return message


def _move(paths: StorePaths, legacy: Path, now: datetime) -> LegacyMove:
    backup = _backup_folder(paths, now)
    # 1. A copy of everything first (links copied as links), and the store's empty database set aside.
    shutil.copytree(legacy, backup / "legacy", symlinks=True, ignore=_special_files)
    done = LegacyMove(source=".dokoro", backup=backup)
    for name in ("dokoro.sqlite", "dokoro.sqlite-wal", "dokoro.sqlite-shm"):
        empty = paths.db_dir / name
        if empty.is_file() and not empty.is_symlink():
            (backup / "store-db").mkdir(parents=True, exist_ok=True)
            empty.replace(backup / "store-db" / name)
            done.set_aside.append(name)
    # 2. Every file moved to its place; one the store folder already has stays in the legacy folder.
    for relative in _files(legacy):
        source, target = legacy / relative, paths.data_dir / relative
        if target.exists() or target.is_symlink():
            done.kept.append(relative.as_posix())
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        source.replace(target)
        done.moved.append(relative.as_posix())
    _remove_empty(legacy)
    record = {
        "moved_at": f"{now:%Y-%m-%dT%H:%M:%SZ}",
        "from": f"{paths.root.parent.name}/.dokoro",
        "moved": done.moved,
        "kept_in_legacy_folder": done.kept,
        "store_database_set_aside": done.set_aside,
    }
    atomic_write_text(backup / _MOVED, json.dumps(record, indent=2) + "\n", within=paths.root)
    log.warning("dokoro: %s", done.summary(paths))
    return done
