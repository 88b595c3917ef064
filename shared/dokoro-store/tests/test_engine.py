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
