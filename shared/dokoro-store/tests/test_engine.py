"""The SQLite engine: per-connection PRAGMAs and write transactions."""

from __future__ import annotations

import pytest
from dokoro_store.db.engine import SQLITE_BUSY_TIMEOUT_S, Database
from dokoro_store.models import EpisodeSession
from sqlalchemy.exc import IntegrityError
from sqlmodel import select


def _pragmas(db: Database) -> tuple[str, int, int]:
    with db.engine.connect() as connection:
        journal = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
        foreign_keys = connection.exec_driver_sql("PRAGMA foreign_keys").scalar()
        busy = connection.exec_driver_sql("PRAGMA busy_timeout").scalar()
    return journal, foreign_keys, busy


def test_every_connection_uses_wal_foreign_keys_and_a_busy_timeout(store):
    assert _pragmas(store.db) == ("wal", 1, int(SQLITE_BUSY_TIMEOUT_S * 1000))


def test_a_new_pooled_connection_gets_the_pragmas_too(store):
    store.db.engine.dispose()  # drop pooled connections: the next one is opened afresh

    assert _pragmas(store.db) == ("wal", 1, int(SQLITE_BUSY_TIMEOUT_S * 1000))


def test_foreign_keys_are_enforced(store):
    from dokoro_store.models import ConversationSummary

    with pytest.raises(IntegrityError), store.db.write() as session:
        session.add(
            ConversationSummary(
                session_id="no-such-session",
                ai_model="m",
                summary="orphan",
                started_at=store.clock.now(),
                created_at=store.clock.now(),
            )
        )


def test_a_write_commits_on_success_and_rolls_back_on_error(store):
    with store.db.write() as session:
        session.add(EpisodeSession(id="kept", started_at=store.clock.now()))
    with pytest.raises(RuntimeError), store.db.write() as session:
        session.add(EpisodeSession(id="dropped", started_at=store.clock.now()))
        session.flush()
        raise RuntimeError("boom")

    with store.db.read() as session:
        assert [row.id for row in session.exec(select(EpisodeSession))] == ["kept"]


def test_writers_of_one_process_take_turns_and_all_commit(store):
    import threading

    def write(prefix: str) -> None:
        for i in range(20):
            with store.db.write() as session:
                session.add(EpisodeSession(id=f"{prefix}-{i}", started_at=store.clock.now()))

    threads = [threading.Thread(target=write, args=(name,)) for name in ("a", "b", "c")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with store.db.read() as session:
        assert len(list(session.exec(select(EpisodeSession)))) == 60


def test_a_write_held_past_the_timeout_makes_another_threads_write_fail_and_say_retry(store, monkeypatch):
    import threading

    import dokoro_store.db.engine as engine
    from dokoro_store.errors import StoreUnavailableError

    monkeypatch.setattr(engine, "SQLITE_BUSY_TIMEOUT_S", 0.2)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.db.write() as session:
            session.add(EpisodeSession(id="held", started_at=store.clock.now()))
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        with pytest.raises(StoreUnavailableError, match="retry"), store.db.write() as session:
            session.add(EpisodeSession(id="refused", started_at=store.clock.now()))
    finally:
        release.set()
        holder.join()
    with store.db.read() as session:
        assert [row.id for row in session.exec(select(EpisodeSession))] == ["held"]


def test_a_write_leaves_the_wal_checkpoint_to_a_background_step(store, monkeypatch):
    import threading

    from dokoro_store.db import engine

    with store.db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == engine.CHECKPOINT_PAGES
    ran = threading.Event()
    results: list[tuple[int, int, int] | None] = []
    checkpoint = store.db.checkpoint

    def observed() -> tuple[int, int, int] | None:
        results.append(checkpoint())
        ran.set()
        return results[-1]

    monkeypatch.setattr(store.db._checkpoint, "_step", observed)
    monkeypatch.setattr(engine, "CHECKPOINT_DELAY", 0.0)
    with store.db.write() as session:
        session.add(EpisodeSession(id="checkpointed", started_at=store.clock.now()))

    assert ran.wait(30)  # scheduled by the write, run on its own thread
    busy, frames, copied = results[0] or (1, 0, -1)
    assert busy == 0 and frames > 0 and copied == frames  # the whole log is in the database file now
    with store.db.read() as session:
        assert session.get(EpisodeSession, "checkpointed") is not None


def test_no_checkpoint_step_runs_after_the_database_is_disposed(store, monkeypatch):
    from dokoro_store.db import engine

    monkeypatch.setattr(engine, "CHECKPOINT_DELAY", 30.0)
    with store.db.write() as session:
        session.add(EpisodeSession(id="last", started_at=store.clock.now()))
    assert store.db._checkpoint.due
    store.db.dispose()
    assert not store.db._checkpoint.due  # cancelled with the engine


_OTHER_WRITER = r"""
import sys, time
from pathlib import Path
from dokoro_store.db.engine import Database
from dokoro_store.models import EpisodeSession
from datetime import datetime, timezone

db = Database.open_sqlite(Path(sys.argv[1]))
started = time.monotonic()  # before "ready": the parent holds the turn 0.5 s after reading it
print("ready", flush=True)
with db.write() as session:
    session.add(EpisodeSession(id="other", started_at=datetime.now(timezone.utc)))
print(f"{time.monotonic() - started:.3f}", flush=True)
db.dispose()
"""


def test_a_writer_in_another_process_waits_for_the_machine_wide_write_turn_and_then_commits(store):
    """Writers of several processes queue on a lock file beside the database (not only on
    SQLite's sleeping busy handler): while this process holds a write, the other's waits on it."""
    import fcntl
    import subprocess
    import sys
    import time

    lock = store.paths.sqlite_file.with_name(f"{store.paths.sqlite_file.name}.writer.lock")
    with subprocess.Popen(
        [sys.executable, "-c", _OTHER_WRITER, str(store.paths.sqlite_file)], stdout=subprocess.PIPE, text=True
    ) as other:
        assert other.stdout is not None
        with store.db.write() as session:
            session.add(EpisodeSession(id="here", started_at=store.clock.now()))
            assert lock.is_file()
            # Held: nobody else on this machine can take the turn now.
            with lock.open("a") as probe, pytest.raises(BlockingIOError):
                fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            assert other.stdout.readline().strip() == "ready"
            time.sleep(0.5)  # the other process is waiting for the turn meanwhile
        waited = float(other.stdout.readline())
        assert other.wait(30) == 0
    assert waited >= 0.5  # it could not write while this process held the turn
    with store.db.read() as session:
        assert sorted(row.id for row in session.exec(select(EpisodeSession))) == ["here", "other"]
    with lock.open("a") as probe:  # and the turn is free again
        fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(probe.fileno(), fcntl.LOCK_UN)


def test_a_write_turn_held_elsewhere_past_the_timeout_says_retry_and_writes_nothing(store, monkeypatch):
    import fcntl

    import dokoro_store.db.engine as engine
    from dokoro_store.errors import StoreUnavailableError

    monkeypatch.setattr(engine, "SQLITE_BUSY_TIMEOUT_S", 0.3)
    lock = store.paths.sqlite_file.with_name(f"{store.paths.sqlite_file.name}.writer.lock")
    with lock.open("a") as holder:  # another writer on this machine holds the turn
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        with (
            pytest.raises(StoreUnavailableError, match=r"another process held the write lock\); retry"),
            store.db.write() as session,
        ):
            session.add(EpisodeSession(id="refused", started_at=store.clock.now()))
    with store.db.write() as session:  # released: writes go through again
        session.add(EpisodeSession(id="later", started_at=store.clock.now()))
    with store.db.read() as session:
        assert [row.id for row in session.exec(select(EpisodeSession))] == ["later"]


def test_a_nested_write_keeps_the_machine_wide_turn_until_the_outermost_write_ends(store):
    """Re-entrant: a write inside a write of the same thread does not wait for itself, and its end
    does not hand the turn to another process while the outer write still runs."""
    import fcntl

    lock = store.paths.sqlite_file.with_name(f"{store.paths.sqlite_file.name}.writer.lock")

    def turn_is_held() -> bool:
        with lock.open("a") as probe:
            try:
                fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(probe.fileno(), fcntl.LOCK_UN)
            return False

    with store.db.write() as outer:
        outer.add(EpisodeSession(id="outer", started_at=store.clock.now()))
        with store.db.write() as inner:
            inner.add(EpisodeSession(id="inner", started_at=store.clock.now()))
        assert turn_is_held()
    assert not turn_is_held()
    with store.db.read() as session:
        assert sorted(row.id for row in session.exec(select(EpisodeSession))) == ["inner", "outer"]


# ---------------------------------------------------------------------- plain writes (Core, no session)
def test_a_plain_write_commits_redacts_what_it_sends_and_rolls_back_on_error(any_store):
    from dokoro_store.db.model_tables import table_of
    from sqlalchemy import insert

    sessions = table_of(EpisodeSession)
    secret = "sk-ant-api03-" + "x" * 90
    with any_store.db.writing() as connection:
        connection.execute(
            insert(sessions).values(id="kept", started_at=any_store.clock.now(), summary=f"key {secret}")
        )
    with pytest.raises(IntegrityError), any_store.db.writing() as connection:
        connection.execute(insert(sessions).values(id="lost", started_at=any_store.clock.now()))
        connection.execute(insert(sessions).values(id="kept", started_at=any_store.clock.now()))  # a clash

    with any_store.db.reading() as connection:
        rows = connection.execute(select(sessions.c.id, sessions.c.summary).order_by(sessions.c.id)).all()
    assert [(row.id, row.summary) for row in rows] == [("kept", "key [REDACTED:anthropic-key]")]


def test_a_plain_write_never_writes_a_memory_row(any_store):
    from dokoro_store.db.model_tables import table_of
    from dokoro_store.db.write_guard import GuardedWriteError
    from dokoro_store.models import Memory

    with pytest.raises(GuardedWriteError, match="memory rows are written by"), any_store.db.writing() as connection:
        connection.execute(table_of(Memory).delete())


def test_a_plain_write_takes_the_machine_wide_turn_and_hands_it_back(store):
    import fcntl

    lock = store.paths.sqlite_file.with_name(f"{store.paths.sqlite_file.name}.writer.lock")

    def turn_is_held() -> bool:
        with lock.open("a") as probe:
            try:
                fcntl.flock(probe.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(probe.fileno(), fcntl.LOCK_UN)
            return False

    with store.db.writing() as connection:
        connection.exec_driver_sql("SELECT 1")
        assert turn_is_held()
    assert not turn_is_held()
