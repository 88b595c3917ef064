"""The database handle: one engine per store, sessions for reads and serialised writes."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import sessionmaker
from sqlmodel import Session

from dokoro_store.background.write_behind import DelayedStep
from dokoro_store.db import redaction, write_guard
from dokoro_store.db.dialect import DialectOps, PostgresOps, SqliteOps
from dokoro_store.db.sqlite_functions import install_math_functions
from dokoro_store.db.write_turn import TurnFile, TurnTimeout
from dokoro_store.errors import StoreUnavailableError

__all__ = ["Database", "describe_url", "normalise_url"]

# How long a writer waits for another process's write transaction before giving up.
# Writes are short; a wait this long means something is wedged, not merely busy.
SQLITE_BUSY_TIMEOUT_S = 30.0
# SQLite copies its write-ahead log back into the database file (a checkpoint, with an fsync) on
# the commit that takes the log past ``wal_autocheckpoint`` pages: that commit's caller waits for it
# (a remember at 100k memories took 150-250 ms instead of 30). Here a background step checkpoints a
# few seconds after the writes (:data:`CHECKPOINT_DELAY`), passively (readers and writers go on),
# and the commit-time checkpoint is kept only as a backstop for a log this far behind. Its fsync
# still slows a call that fsyncs at the same moment (a memory file: ~150 ms here), so it runs at
# most once per delay: after 1 s, one remember in fifteen met one; after 5 s, one in a hundred.
CHECKPOINT_PAGES = 10_000  # 40 MB of 4 KB pages
CHECKPOINT_DELAY = 5.0
_IMMEDIATE = "dokoro_immediate"
# Writers of other processes: SQLite's busy handler polls in sleeps of 1, 2, 5, 10, 15, 20, 25,
# 25, 25, 50, 50, 100 ms, so a writer waiting behind a 12 ms remember wakes after 18 or 33 ms, and
# one that keeps losing the race waits hundreds of ms (4 agents remembering at once: p95 534 ms).
# Writers on one machine queue instead on a lock file next to the database (db/write_turn.py); the
# busy timeout stays the backstop for a writer that does not take it.


def _sqlite_engine(path: Path) -> Engine:
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, decide when a transaction begins, so a write can
        # take the write lock up front (BEGIN IMMEDIATE) instead of failing half-way.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
        cursor.close()
        install_math_functions(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get(_IMMEDIATE, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def normalise_url(url: str) -> URL:
    """Parse a database URL; plain ``postgres://``/``postgresql://`` use the psycopg 3 driver."""
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def describe_url(url: URL) -> str:
    """The URL without its password, and where the server is, for messages."""
    if url.get_backend_name() == "sqlite":
        return f"SQLite file {url.database}"
    host = url.host or (url.query.get("host") if url.query else None) or "localhost"
    where = f"{host}:{url.port}" if url.port else str(host)
    return f"{url.render_as_string(hide_password=True)} (server {where})"


def _postgres_engine(url: URL) -> Engine:
    try:
        import psycopg  # noqa: F401  - only to give a clear message when the driver is missing
    except ImportError:
        raise StoreUnavailableError(
            "DOKORO_DATABASE_URL points at PostgreSQL but the psycopg driver is not installed; "
            "install the team extra: pip install 'dokoro-store[postgres]' (the unified `dokoro` has it)"
        ) from None
    engine = create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": 10})
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")
    except OperationalError as exc:
        engine.dispose()
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise StoreUnavailableError(
            f"cannot reach the team database at {describe_url(url)}: {reason}. "
            "Check DOKORO_DATABASE_URL (host, port, user, password, database name) and that the server "
            "is running and accepts connections from this machine. dokoro does not fall back to a local "
            "file, so the team's memory is never split."
        ) from exc
    return engine


class Database:
    """An engine plus the dialect operations of its backend."""

    def __init__(self, engine: Engine, ops: DialectOps) -> None:
        self.engine = engine
        self.ops = ops
        self._writer = engine.execution_options(**{_IMMEDIATE: True})
        self._plain_writer = engine.execution_options(**{_IMMEDIATE: True, write_guard.PLAIN: True})
        self._reads = sessionmaker(engine, class_=Session, expire_on_commit=False)
        self._writes = sessionmaker(self._writer, class_=Session, expire_on_commit=False)
        # Every string any write statement carries is redacted of secrets, and every object these
        # sessions flush (see db/redaction.py).
        redaction.install(engine, self._reads, self._writes)
        # The memory rows are written by the memory repository alone (see db/write_guard.py).
        write_guard.install(self._reads, self._writes)
        write_guard.install_plain(engine)
        # SQLite: this process's writers (a tool call, the write-behind steps, the outcome
        # capture) queue on a lock that hands over at once, rather than on SQLite's busy handler,
        # which polls in sleeps of 1, 2, 5, 10... ms. Other processes still queue on the latter.
        self._write_turn = threading.RLock() if ops.name == "sqlite" else None
        self._turn_file: TurnFile | None = None
        self._checkpoint = (
            DelayedStep(self.checkpoint, name="dokoro-wal-checkpoint", failure="dokoro: a WAL checkpoint failed")
            if ops.name == "sqlite"
            else None
        )

    @classmethod
    def open_sqlite(cls, path: Path) -> Database:
        database = cls(_sqlite_engine(path), SqliteOps(path.parent))
        database._turn_file = _turn_file(path)
        return database

    @classmethod
    def open_url(cls, url: str, lock_dir: Path) -> Database:
        try:
            parsed = normalise_url(url)
        except ArgumentError:
            raise StoreUnavailableError(
                f"{url!r} is not a database URL; use postgresql+psycopg://user:password@host:5432/dbname"
            ) from None
        if parsed.get_backend_name() == "sqlite":
            if not parsed.database:
                raise StoreUnavailableError("a sqlite URL needs a file path: sqlite:///path/to/dokoro.sqlite")
            return cls.open_sqlite(Path(parsed.database))
        if parsed.get_backend_name() == "postgresql":
            return cls(_postgres_engine(parsed), PostgresOps())
        raise StoreUnavailableError(
            f"unsupported database URL scheme {parsed.drivername!r}; use a folder path, "
            "sqlite:///file or postgresql+psycopg://user@host/db"
        )

    @property
    def url(self) -> URL:
        return self.engine.url

    @property
    def dialect(self) -> str:
        return self.ops.name

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reads (a deferred transaction, never blocks writers in WAL mode)."""
        with self._reads() as session:
            yield session

    @contextlib.contextmanager
    def write(self) -> Iterator[Session]:
        """A read-modify-write transaction that holds the write lock from its first statement.

        Commits on success, rolls back on any exception. Concurrent writers queue instead of
        failing with "database is locked": this process's on a lock (SQLite), other processes'
        on the busy timeout; either wait ends in :class:`StoreUnavailableError` after
        :data:`SQLITE_BUSY_TIMEOUT_S`.
        """
        with self._turn(), self._writes() as session:
            try:
                yield session
                session.commit()
                if self._checkpoint is not None:
                    self._checkpoint.schedule(CHECKPOINT_DELAY)
            except OperationalError as exc:
                session.rollback()
                if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                    raise StoreUnavailableError(
                        "the store stayed busy for too long (another process held the write lock); retry"
                    ) from exc
                raise
            except BaseException:
                session.rollback()
                raise

    @contextlib.contextmanager
    def reading(self) -> Iterator[Connection]:
        """A Core connection for a read of cached statements, in one short transaction (deferred:
        it never blocks writers in WAL mode): what a cheap read needs, without an ORM session."""
        with self.engine.connect() as connection:
            yield connection

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        """:meth:`write` for a plain write of Core statements: the same turn, the same write lock from
        the first statement (``BEGIN IMMEDIATE``), the same errors, and the statement hook that
        redacts every string it sends (db/redaction.py); no ORM session or unit of work. A memory row
        is refused here (db/write_guard.py): the memory repository writes them, through sessions."""
        with self._turn(), self._plain_writer.connect() as connection:
            try:
                with connection.begin():
                    yield connection
                if self._checkpoint is not None:
                    self._checkpoint.schedule(CHECKPOINT_DELAY)
            except OperationalError as exc:
                if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                    raise StoreUnavailableError(
                        "the store stayed busy for too long (another process held the write lock); retry"
                    ) from exc
                raise

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        turn = self._write_turn
        if turn is None:
            yield
            return
        deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
        if not turn.acquire(timeout=SQLITE_BUSY_TIMEOUT_S):
            raise StoreUnavailableError("the store stayed busy for too long (another write held it); retry")
        try:
            if self._turn_file is None:
                yield
                return
            try:
                self._turn_file.acquire(timeout=max(deadline - time.monotonic(), 0.0))
            except TurnTimeout:
                raise StoreUnavailableError(
                    "the store stayed busy for too long (another process held the write lock); retry"
                ) from None
            try:
                yield
            finally:
                self._turn_file.release()
        finally:
            turn.release()

    def refresh_statistics(self, *tables: str) -> None:
        """The planner's statistics of ``tables`` brought up to date after a bulk write (PostgreSQL:
        ANALYZE; SQLite: nothing, see :meth:`DialectOps.refresh_statistics`)."""
        with self.engine.begin() as connection:
            self.ops.refresh_statistics(connection, tables)

    def checkpoint(self) -> tuple[int, int, int] | None:
        """SQLite: copy the write-ahead log into the database file now, passively (no reader or
        writer waits for it; frames a reader still needs are left for the next one). Returns
        SQLite's (busy, frames in the log, frames checkpointed); None on PostgreSQL."""
        if self.ops.name != "sqlite":
            return None
        raw = self.engine.raw_connection()
        try:
            row = raw.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()  # type: ignore[union-attr]
        finally:
            raw.close()
        return (int(row[0]), int(row[1]), int(row[2])) if row else None

    def dispose(self) -> None:
        if self._checkpoint is not None:
            self._checkpoint.close()
        self.engine.dispose()
        if self._turn_file is not None:
            self._turn_file.close()


def _turn_file(database: Path) -> TurnFile:
    """The machine-wide write turn of one SQLite database: ``<name>.writer.lock`` beside it, placed
    by :func:`dokoro_store.walls.containment.lock_file` (no symlink); see :mod:`dokoro_store.db.write_turn`."""
    from dokoro_store.walls.containment import lock_file

    return TurnFile(lock_file(database.parent, database.parent, f"{database.name}.writer"))
