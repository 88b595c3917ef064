"""The memory files' manifest: what this folder last rendered or read, file by file.

It is local to the workspace folder (``.dokoro/index/memory-files.sqlite``), never in the shared
database: on a team PostgreSQL every machine renders the memories into its own folder, and one
machine's files say nothing about another's. It is a cache: deleted, it is rebuilt on the next
memory call by comparing each file with its row (equal files are adopted as they are).

For every file: the memory it holds, its stat (modification time in ns, size), the digest of
the fields it showed when last in step with its row (:func:`~.markdown.fields_digest`)
and the row's change number (``rev``) then. A file a person deleted stays as a *tombstone*
(no stat), so its memory is not rendered again until the memory changes. A file that holds no
memory (an unreadable file, a copy) is *ignored* until its stat changes, with a note saying why.
Directory modification times and the highest ``rev`` rendered are kept too.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

__all__ = ["FileEntry", "Manifest", "ManifestFile"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, memory_id TEXT, mtime_ns INTEGER, size INTEGER, "
    "digest TEXT, rev INTEGER NOT NULL DEFAULT 0, note TEXT)",
    "CREATE INDEX IF NOT EXISTS ix_files_memory ON files (memory_id)",
    # The files that hold no memory (unreadable, refused, copies), reported on every call until fixed.
    "CREATE INDEX IF NOT EXISTS ix_files_noted ON files (path) WHERE note IS NOT NULL",
    "CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)
_VERSION = "1"


@dataclass(frozen=True)
class FileEntry:
    """One file of the manifest."""

    path: str
    memory_id: str | None
    mtime_ns: int | None
    size: int | None
    digest: str | None
    rev: int
    note: str | None = None

    @property
    def tombstone(self) -> bool:
        """The file was deleted by a person; its memory is not rendered again until it changes."""
        return self.mtime_ns is None

    @property
    def ignored(self) -> bool:
        """The file holds no memory (unreadable, or a copy of another memory's file)."""
        return self.memory_id is None

    def same_stat(self, mtime_ns: int, size: int) -> bool:
        return self.mtime_ns == mtime_ns and self.size == size


_Row = tuple[str, str | None, int | None, int | None, str | None, int, str | None]


def _entry(row: sqlite3.Row | tuple[object, ...]) -> FileEntry:
    # The columns' types (TEXT, INTEGER) are what sqlite3 returns: no conversion (the rolling sweep
    # reads thousands of entries per call).
    return FileEntry(*cast(_Row, tuple(row)))


class Manifest:
    """The manifest of one folder, in one transaction (:meth:`ManifestFile.open`)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        for attempt in (1, 2):
            connection = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
            try:
                connection.execute("PRAGMA journal_mode=TRUNCATE")
                connection.execute("PRAGMA synchronous=OFF")
                for statement in _SCHEMA:
                    connection.execute(statement)
                return connection
            except sqlite3.OperationalError:  # locked, or the disk: not the file's fault
                connection.close()
                raise
            except sqlite3.DatabaseError:
                connection.close()
                if attempt == 2:
                    raise
                # Damaged (a machine crash mid-write): it is only a cache; start it again.
                for leftover in (path, path.with_name(path.name + "-journal")):
                    leftover.unlink(missing_ok=True)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ meta
    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def rev(self) -> int:
        """The highest change number rendered from the database."""
        return int(self.meta("rev") or 0)

    @rev.setter
    def rev(self, value: int) -> None:
        if value != self.rev:  # a call that rendered nothing writes nothing
            self.set_meta("rev", str(value))

    def reset(self) -> None:
        """Forget everything (a rebuild follows)."""
        for table in ("files", "dirs", "meta"):
            self._db.execute(f"DELETE FROM {table}")

    # ------------------------------------------------------------------ files
    _COLUMNS = "path, memory_id, mtime_ns, size, digest, rev, note"

    def get(self, path: str) -> FileEntry | None:
        row = self._db.execute(f"SELECT {self._COLUMNS} FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else _entry(row)

    def of_memory(self, memory_id: str) -> FileEntry | None:
        """The file of a memory (its ignored copies aside)."""
        row = self._db.execute(
            f"SELECT {self._COLUMNS} FROM files WHERE memory_id = ? ORDER BY path LIMIT 1",
            (memory_id,),
        ).fetchone()
        return None if row is None else _entry(row)

    def of_memories(self, memory_ids: Sequence[str]) -> dict[str, FileEntry]:
        found: dict[str, FileEntry] = {}
        for start in range(0, len(memory_ids), 500):
            batch = list(memory_ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            for row in self._db.execute(
                f"SELECT {self._COLUMNS} FROM files WHERE memory_id IN ({marks}) ORDER BY path DESC",
                batch,
            ):
                entry = _entry(row)
                found[str(entry.memory_id)] = entry
        return found

    def in_dir(self, directory: str) -> dict[str, FileEntry]:
        """The entries of the files directly in ``directory`` (a relative path), by file name."""
        prefix = directory.rstrip("/") + "/"
        rows = self._db.execute(
            f"SELECT {self._COLUMNS} FROM files WHERE path >= ? AND path < ?",
            (prefix, prefix[:-1] + "0"),  # "0" sorts right after "/"
        )
        entries: dict[str, FileEntry] = {}
        for row in rows:
            entry = _entry(row)
            name = entry.path[len(prefix) :]
            if "/" not in name:
                entries[name] = entry
        return entries

    def put(self, entry: FileEntry) -> None:
        self._db.execute(
            f"INSERT OR REPLACE INTO files ({self._COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (entry.path, entry.memory_id, entry.mtime_ns, entry.size, entry.digest, entry.rev, entry.note),
        )

    def drop(self, path: str) -> None:
        self._db.execute("DELETE FROM files WHERE path = ?", (path,))

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM files").fetchone()[0])

    def memory_counts(self) -> tuple[int, int]:
        """How many files hold a memory, and how many of those a person deleted (tombstones)."""
        row = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(mtime_ns IS NULL), 0) FROM files WHERE memory_id IS NOT NULL"
        ).fetchone()
        total, tombstones = int(row[0]), int(row[1])
        return total - tombstones, tombstones

    def more_than(self, n: int) -> bool:
        """Whether the manifest names more than ``n`` files (reads at most ``n + 1`` rows)."""
        sql = "SELECT COUNT(*) FROM (SELECT 1 FROM files LIMIT ?)"
        return int(self._db.execute(sql, (n + 1,)).fetchone()[0]) > n

    def noted(self, limit: int | None = None) -> list[FileEntry]:
        """Files that hold no memory, with the reason (unreadable files, copies), at most ``limit``."""
        sql = f"SELECT {self._COLUMNS} FROM files WHERE note IS NOT NULL ORDER BY path"
        rows = self._db.execute(sql + " LIMIT ?", (limit,)) if limit is not None else self._db.execute(sql)
        return [_entry(row) for row in rows]

    def noted_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM files WHERE note IS NOT NULL").fetchone()[0])

    def entries(self) -> list[FileEntry]:
        """Every entry (a rebuild keeps what the folder knew before it starts again)."""
        return [_entry(row) for row in self._db.execute(f"SELECT {self._COLUMNS} FROM files")]

    def window(self, limit: int, after: int) -> tuple[list[FileEntry], int]:
        """The next ``limit`` entries of a rolling sweep after the entry ``after`` (wrapping
        around), and where the sweep goes on next time. The place is the caller's to keep (in
        memory: a call that finds nothing writes nothing)."""
        rows = self._db.execute(
            f"SELECT rowid, {self._COLUMNS} FROM files WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (after, limit),
        ).fetchall()
        if len(rows) < limit:
            rows += self._db.execute(
                f"SELECT rowid, {self._COLUMNS} FROM files WHERE rowid <= ? ORDER BY rowid LIMIT ?",
                (after, limit - len(rows)),
            ).fetchall()
        return [_entry(tuple(row[1:])) for row in rows], (int(rows[-1][0]) if rows else after)

    def stat_window(self, limit: int, after: int) -> tuple[list[tuple[str, int, int]], int]:
        """:meth:`window` for the rolling sweep: the path and stat of each file (tombstones left out),
        read as plain rows — the sweep compares thousands per call and needs only these."""
        sql = (
            "SELECT rowid, path, mtime_ns, size FROM files WHERE rowid {} ? AND mtime_ns IS NOT NULL "
            "ORDER BY rowid LIMIT ?"
        )
        rows = self._db.execute(sql.format(">"), (after, limit)).fetchall()
        if len(rows) < limit:
            rows += self._db.execute(sql.format("<="), (after, limit - len(rows))).fetchall()
        return [(str(r[1]), int(r[2]), int(r[3] or 0)) for r in rows], (int(rows[-1][0]) if rows else after)

    # ------------------------------------------------------------------ directories
    def dirs(self) -> dict[str, int]:
        return {str(path): int(mtime) for path, mtime in self._db.execute("SELECT path, mtime_ns FROM dirs")}

    def set_dir(self, path: str, mtime_ns: int) -> None:
        self._db.execute("INSERT OR REPLACE INTO dirs (path, mtime_ns) VALUES (?, ?)", (path, mtime_ns))

    def drop_dirs(self, paths: Iterable[str]) -> None:
        self._db.executemany("DELETE FROM dirs WHERE path = ?", [(p,) for p in paths])


class ManifestFile:
    """One process's connection to a folder's manifest, kept open between uses (opening it cost a
    third of a millisecond on every memory call); thread-safe.

    Each :meth:`open` is one transaction for the database ``database`` (a URL without secrets, or
    the embedded file's name): a manifest written for another database is emptied first, one written
    under ``formerly`` (the same database's older name) is kept and renamed. Commits on success.
    The file is a cache, written on every memory call: its commits are not synced to disk (a crash
    of the machine may lose or damage it; a damaged one is deleted and rebuilt), and the journal is
    a rollback journal, so a commit costs no checkpoint (callers hold the folder's lock). A file
    deleted or replaced since the last use (its inode changed) is opened again, never written
    through the old handle.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        # Reentrant: a nested use in one thread fails at once (a transaction within a transaction)
        # instead of waiting for itself.
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None

    @contextlib.contextmanager
    def open(self, database: str, *, formerly: str | None = None) -> Iterator[Manifest]:
        with self._lock:
            manifest = self._begin(database, formerly)
            try:
                yield manifest
                manifest._db.execute("COMMIT")
            except BaseException:
                self._abandon()
                raise

    @contextlib.contextmanager
    def peek(self, database: str, *, formerly: str | None = None) -> Iterator[Manifest | None]:
        """The manifest, read only (a deferred transaction: another process reconciling the folder does
        not hold it up): None when there is none, or it was written for another database."""
        with self._lock:
            if not self._path.exists():
                yield None
                return
            connection = self._connect()
            connection.execute("BEGIN")
            try:
                manifest = Manifest(connection)
                fits = manifest.meta("database") in (database, formerly) and manifest.meta("version") == _VERSION
                yield manifest if fits else None
            finally:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")

    def _begin(self, database: str, formerly: str | None) -> Manifest:
        for attempt in (1, 2):
            connection = self._connect()
            try:
                connection.execute("BEGIN IMMEDIATE")
                manifest = Manifest(connection)
                written_for = manifest.meta("database")
                if written_for not in (database, formerly) or manifest.meta("version") != _VERSION:
                    manifest.reset()
                    written_for = None
                if written_for != database:
                    manifest.set_meta("database", database)
                    manifest.set_meta("version", _VERSION)
                return manifest
            except sqlite3.OperationalError:  # locked, or the disk: not the file's fault
                self._abandon()
                raise
            except sqlite3.DatabaseError:
                self._abandon()
                if attempt == 2:
                    raise
                # Damaged in place since the last use: a fresh connection finds it so and starts it again.
        raise AssertionError("unreachable")

    def _abandon(self) -> None:
        """Roll back what is open and let go of the connection: the next use starts afresh."""
        if self._connection is not None and self._connection.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._connection.execute("ROLLBACK")
        self._drop()

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _connect(self) -> sqlite3.Connection:
        try:
            stat = self._path.stat()
            identity: tuple[int, int] | None = (stat.st_dev, stat.st_ino)
        except FileNotFoundError:
            identity = None
        if self._connection is not None and identity == self._identity:
            return self._connection
        self._drop()
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = Manifest._connect(self._path)
        stat = self._path.stat()
        self._identity = (stat.st_dev, stat.st_ino)
        return self._connection

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = None
        self._identity = None
