"""Moving in from the original TypeScript dokoro: its store converted, backed up first, verified.

A folder the original wrote holds its SQLite file at the very path this dokoro uses
(``.dokoro/db/dokoro.sqlite``) with another schema. :func:`convert_in_place` runs when such a
store is opened: under a lock (several servers may open it at once), it

1. copies the original's database (SQLite's backup API: a consistent snapshot, write-ahead log
   included) and its ``.mcp`` files to ``.dokoro/backup/original-<UTC stamp>/``;
2. reads the copy (:mod:`.reading`) and writes its history into a new database of this schema
   beside the old one, through the import of :mod:`dokoro_store.moving.backup` (ids kept);
3. verifies the counts: every session, summary, outcome, note, block, handoff, presence, claim,
   document, entity, relation, plan and question of the original is a row of the new database;
4. puts the new database in the original's place (one rename) and records what it did in
   ``conversion.json`` in the backup folder.

Nothing of the original is deleted: its database lives on in the backup folder, its files
(``.mcp/plans``, ``questions.json``, ``session.json``, ``daily/``, ``current.md``) stay where
they are (the plan files and the session file are the formats this dokoro reads and renders).
A crash before the rename leaves the original as it was; the next open starts again.

:func:`import_original` brings an original store's history into any open store (another folder,
a team PostgreSQL): ``dokoro migrate --from-original``. Both are idempotent.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dokoro_store.db.engine import Database
from dokoro_store.db.migrate import upgrade
from dokoro_store.errors import StoreUnavailableError
from dokoro_store.moving.backup import BACKUP_FORMAT, BACKUP_VERSION, ImportPlan, apply_import, plan_import
from dokoro_store.moving.original.reading import (
    OriginalContents,
    is_original_database,
    may_be_original_database,
    read_original,
)
from dokoro_store.moving.transfer import canonical_row, store_tables
from dokoro_store.paths import StorePaths
from dokoro_store.walls.containment import plain_file
from dokoro_store.walls.files import atomic_write_text, file_lock

__all__ = [
    "MoveIn",
    "convert_in_place",
    "find_conversion",
    "import_original",
    "original_database",
    "preview_original",
]

log = logging.getLogger("dokoro.store")

_LOCK = "original-conversion"
# How long the conversion waits for other readers of the original's database to let go of it.
_RELEASE_WAIT_S = 30.0
_MARKER = "conversion.json"


@dataclass
class MoveIn:
    """What moving in from the original did (or, in a preview, would do)."""

    source: Path  # the original's folder
    backup: Path | None  # where the original's database and files were copied first
    counts: dict[str, int]  # what the original held, by kind
    imported: int  # rows written
    already_there: int  # rows the store held already (a second run)
    conflicts: int
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    converted_at: str | None = None

    def summary(self) -> str:
        held = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in self.counts.items() if count)
        where = f"; the original's database and files are backed up in {self.backup}" if self.backup else ""
        return f"moved in from the original dokoro store {self.source}: {held or 'nothing'}{where}"

    def to_json(self) -> dict[str, Any]:
        return {
            "source": str(self.source),
            "backup": str(self.backup) if self.backup else None,
            "counts": self.counts,
            "imported": self.imported,
            "already_there": self.already_there,
            "conflicts": self.conflicts,
            "notes": self.notes,
            "seconds": round(self.seconds, 3),
            "converted_at": self.converted_at,
        }


def _document(contents: OriginalContents) -> dict[str, Any]:
    """The original's rows as a backup document of this dokoro (what :mod:`.backup` imports)."""
    tables = {table.name: table for table in store_tables()}
    rows: dict[str, list[dict[str, Any]]] = {}
    for name, values in contents.tables.items():
        table = tables[name]
        rows[name] = [canonical_row(table, {c.name: value.get(c.name) for c in table.columns}) for value in values]
    return {"format": BACKUP_FORMAT, "version": BACKUP_VERSION, "tables": rows}


def _verify(db: Database, contents: OriginalContents, plan_after: ImportPlan) -> None:
    """Every row of the original is in ``db``: a second plan finds nothing new and no conflict."""
    if plan_after.new_rows or plan_after.conflicts:
        missing = {t.table: len(t.new) for t in plan_after.tables if t.new}
        conflicting = sorted({c.table for c in plan_after.conflicts})
        raise StoreUnavailableError(
            f"moving in from the original dokoro did not verify (missing {missing}, conflicts in {conflicting}); "
            "the original store was left as it was"
        )
    expected = sum(len(rows) for rows in contents.tables.values())
    if plan_after.duplicates < expected:
        raise StoreUnavailableError(
            f"moving in from the original dokoro did not verify ({plan_after.duplicates} of {expected} rows found); "
            "the original store was left as it was"
        )


def original_database(root: Path) -> Path | None:
    """The original's database of the folder ``root``: the live one when not converted yet, else
    the backup copy the conversion kept; None when the folder is no original store."""
    live = StorePaths(root).sqlite_file
    if is_original_database(live):
        return live
    found = find_conversion(root)
    if found is not None:
        copy = found[0] / "dokoro.sqlite"
        if is_original_database(copy):
            return copy
    return None


def find_conversion(root: Path) -> tuple[Path, dict[str, Any]] | None:
    """The newest backup folder of a conversion of ``root`` and its record, or None."""
    backups = StorePaths(root).data_dir / "backup"
    if not backups.is_dir():
        return None
    for folder in sorted(backups.glob("original-*"), reverse=True):
        marker = folder / _MARKER
        if plain_file(root, marker):
            try:
                record = json.loads(marker.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue
            if isinstance(record, dict):
                return folder, record
    return None


def preview_original(root: Path, now: datetime) -> tuple[OriginalContents, Path]:
    """What the original store at ``root`` holds (nothing written); and its database read."""
    database = original_database(root)
    live = StorePaths(root).sqlite_file
    if database is None and live.is_file() and not live.is_symlink() and live.stat().st_size == 0:
        raise StoreUnavailableError(
            f"{live} is empty (0 bytes): the original dokoro's history is not in it; put its database back "
            "from a copy and run this again"
        )
    if database is None:
        raise StoreUnavailableError(
            f"{root} holds no store of the original dokoro (no .dokoro/db/dokoro.sqlite with its schema_version "
            "table, and no backup of one); pass the folder the original wrote (usually ./dokoro)"
        )
    snapshot = _snapshot_dir(root, now)
    try:
        copy = snapshot / "dokoro.sqlite"
        _backup_database(database, copy)
        return read_original(copy, root, now=now, shown=database), database
    finally:
        shutil.rmtree(snapshot, ignore_errors=True)


def _snapshot_dir(root: Path, now: datetime) -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix=f"dokoro-original-{now:%Y%m%dT%H%M%S}-"))


def import_original(
    root: Path, db: Database, now: datetime, *, progress: Callable[[str, int, int], None] | None = None
) -> MoveIn:
    """Bring the history of the original store at ``root`` into ``db`` (any backend): new rows are
    added, rows already there are skipped, a conflicting row is reported and left as it is."""
    started = time.monotonic()
    contents, _database = preview_original(root, now)
    upgrade(db)
    document = _document(contents)
    plan = plan_import(db, document)
    imported = apply_import(db, plan, progress=progress)
    return MoveIn(
        source=root,
        backup=None,
        counts=contents.counts,
        imported=imported,
        already_there=plan.duplicates,
        conflicts=len(plan.conflicts),
        notes=contents.notes,
        seconds=time.monotonic() - started,
    )


def _backup_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite file (its write-ahead log included), by SQLite's backup API."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
    finally:
        src.close()


def _backup_files(paths: StorePaths, folder: Path) -> None:
    """Copy the original's ``.mcp`` JSON files (plans, questions, session, status) into ``folder``."""
    mcp = paths.mcp_dir
    if not mcp.is_dir() or mcp.is_symlink():
        return
    for path in sorted(mcp.rglob("*.json")):
        if "locks" in path.relative_to(mcp).parts or not plain_file(paths.root, path):
            continue
        target = folder / ".mcp" / path.relative_to(mcp)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def _release_journal(database: Path) -> None:
    """Fold the original's write-ahead log into its file and end WAL mode, so no ``-wal`` file of
    the old database is left to be replayed onto the new one after the rename."""
    deadline = time.monotonic() + _RELEASE_WAIT_S
    while True:
        connection = sqlite3.connect(database, timeout=5.0)
        try:
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            mode = connection.execute("PRAGMA journal_mode=DELETE").fetchone()
            break
        except sqlite3.OperationalError as exc:
            # A reader that is just looking (another process's first check) goes away in a moment.
            if time.monotonic() >= deadline:
                raise StoreUnavailableError(
                    f"cannot convert the original dokoro's database {database}: {exc}. Stop the original "
                    "dokoro's servers (they hold the file) and start this one again"
                ) from exc
            time.sleep(0.05)
        finally:
            connection.close()
    if not mode or str(mode[0]).lower() != "delete":
        raise StoreUnavailableError(
            f"cannot convert the original dokoro's database {database}: another process keeps it in WAL mode. "
            "Stop the original dokoro's servers and start this one again"
        )


def _convert(paths: StorePaths, folder: Path, building: Path, now: datetime) -> tuple[OriginalContents, int]:
    """Back the original up into ``folder``, convert it into ``building`` and verify it; ready to
    be renamed into the original's place (its journal released). Returns what was read and how
    many rows were imported."""
    copy = folder / "dokoro.sqlite"
    _backup_database(paths.sqlite_file, copy)
    _backup_files(paths, folder)
    contents = read_original(copy, paths.root, now=now, shown=paths.sqlite_file.relative_to(paths.root))
    for leftover in (building, Path(f"{building}-wal"), Path(f"{building}-shm")):
        leftover.unlink(missing_ok=True)
    db = Database.open_sqlite(building)
    try:
        upgrade(db)
        document = _document(contents)
        plan = plan_import(db, document)
        imported = apply_import(db, plan)
        _verify(db, contents, plan_import(db, document))
    finally:
        db.dispose()
    # One file to move: the new database leaves WAL mode (the next open turns it on again).
    connection = sqlite3.connect(building)
    try:
        connection.execute("PRAGMA journal_mode=DELETE")
    finally:
        connection.close()
    Path(f"{building}.writer.lock").unlink(missing_ok=True)
    _release_journal(paths.sqlite_file)
    return contents, imported


# What a store folder holds once a dokoro (the original or this one) has used it.
_USED = (".mcp/plans", ".mcp/questions.json", ".mcp/session.json", "daily", "current.md")


def _refuse_empty(paths: StorePaths) -> None:
    """Refuse a database file of zero bytes in a folder a dokoro has used: its store is gone (a
    copy cut short, a disk full), and opening it would quietly start an empty one over it."""
    try:
        empty = (
            paths.sqlite_file.is_file() and not paths.sqlite_file.is_symlink() and paths.sqlite_file.stat().st_size == 0
        )
    except OSError:
        return
    used = [name for name in _USED if (paths.root / name).exists()]
    if empty and used:
        raise StoreUnavailableError(
            f"the database {paths.sqlite_file.relative_to(paths.root)} is empty (0 bytes) in a folder a dokoro has "
            f"used ({', '.join(used)}): its rows are gone and nothing was opened. Put the database back from a "
            "copy (or `dokoro import` a backup into a new store), or delete the empty file to start a new database"
        )


def convert_in_place(paths: StorePaths, now: datetime) -> MoveIn | None:
    """Convert the original's store at ``paths`` into this dokoro's (see the module docstring);
    None when it is not (or no longer) an original store."""
    _refuse_empty(paths)
    if not may_be_original_database(paths.sqlite_file):
        return None
    with file_lock(paths.locks_dir, _LOCK, within=paths.root):
        if not is_original_database(paths.sqlite_file):
            return None  # another process converted it while this one waited
        started = time.monotonic()
        folder = paths.data_dir / "backup" / f"original-{now:%Y%m%dT%H%M%SZ}"
        counter = 2
        while folder.exists():
            folder = paths.data_dir / "backup" / f"original-{now:%Y%m%dT%H%M%SZ}-{counter}"
            counter += 1
        building = paths.db_dir / "dokoro.sqlite.converting"
        try:
            contents, imported = _convert(paths, folder, building, now)
        except BaseException:
            # A refused attempt (a schema the original never wrote, the original's servers holding
            # its file, a kill) leaves nothing behind: the original is as it was, and no backup
            # folder of an attempt that converted nothing piles up at every start.
            shutil.rmtree(folder, ignore_errors=True)
            with contextlib.suppress(OSError):
                folder.parent.rmdir()  # the backup folder, when this attempt made it
            for leftover in (building, Path(f"{building}-wal"), Path(f"{building}-shm")):
                leftover.unlink(missing_ok=True)
            raise
        building.replace(paths.sqlite_file)
        moved = MoveIn(
            source=paths.root,
            backup=folder,
            counts=contents.counts,
            imported=imported,
            already_there=0,
            conflicts=0,
            notes=contents.notes,
            seconds=time.monotonic() - started,
            converted_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        atomic_write_text(folder / _MARKER, json.dumps(moved.to_json(), indent=2) + "\n", within=paths.root)
    log.warning("dokoro: %s", moved.summary())
    return moved
