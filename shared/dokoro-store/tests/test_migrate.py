"""Schema migrations: a new store starts at HEAD, an old one is brought there with its rows."""

from __future__ import annotations

from datetime import UTC, datetime

from alembic.config import Config
from alembic.script import ScriptDirectory
from dokoro_store import Store
from dokoro_store.db.engine import Database
from dokoro_store.db.migrate import HEADS, MIGRATIONS_DIR, current_heads, upgrade
from dokoro_store.models import ConversationSummary, EpisodeSession
from dokoro_store.paths import StorePaths
from sqlalchemy import inspect


def test_heads_name_every_head_of_the_migration_graph():
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))

    assert frozenset(ScriptDirectory.from_config(config).get_heads()) == HEADS


def test_a_fresh_store_is_at_head(store):
    assert current_heads(store.db) == HEADS
    tables = set(inspect(store.db.engine).get_table_names())
    assert {"sessions", "conversation_summaries", "docs", "questions", "alembic_version"} <= tables


def test_a_database_without_a_schema_has_no_revision(tmp_path):
    db = Database.open_sqlite(tmp_path / "empty.sqlite")
    try:
        assert current_heads(db) == frozenset()
    finally:
        db.dispose()


def test_a_store_at_an_old_revision_is_upgraded_on_open_and_keeps_its_rows(root, clock):
    paths = StorePaths(root)
    old = Database.open_sqlite(paths.sqlite_file)
    try:
        upgrade(old, "0001")
        assert current_heads(old) == {"0001"}
        assert "questions" not in inspect(old.engine).get_table_names()
        at = datetime(2026, 5, 12, 14, 32, tzinfo=UTC)
        with old.write() as session:
            session.add(EpisodeSession(id="s-old", started_at=at, status="completed"))
            session.flush()
            session.add(
                ConversationSummary(
                    session_id="s-old",
                    ai_model="claude-opus-4-7",
                    summary="written before questions moved to the database",
                    token_count=12,
                    started_at=at,
                    created_at=at,
                )
            )
    finally:
        old.dispose()

    with Store.open(root, clock=clock) as store:
        assert current_heads(store.db) == HEADS
        (hit,) = store.episodic.recall()
        assert hit.session_id == "s-old"
        assert hit.summary == "written before questions moved to the database"
        assert hit.started_at == datetime(2026, 5, 12, 14, 32, tzinfo=UTC)
        question = store.working.questions.add("does the new table work?").question
        assert [q.id for q in store.working.questions.list()] == [question.id]


def test_opening_an_up_to_date_store_again_changes_nothing(root, clock):
    with Store.open(root, clock=clock) as first:
        first.episodic.add_summary("s-1", "m", "kept")
    with Store.open(root, clock=clock) as again:
        assert current_heads(again.db) == HEADS
        assert [hit.summary for hit in again.episodic.recall()] == ["kept"]


def test_every_migration_file_is_named_after_its_revision():
    from dokoro_store.db.migrate import known_revisions

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    revisions = {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}
    assert revisions == set(known_revisions())


def test_a_store_written_by_a_newer_dokoro_is_refused_with_the_fix(tmp_path):
    import pytest
    from dokoro_store import StoreUnavailableError
    from sqlalchemy import text

    root = tmp_path / "dokoro"
    with Store.open(root) as store, store.db.engine.begin() as connection:
        connection.execute(text("INSERT INTO alembic_version (version_num) VALUES ('9999')"))
    with pytest.raises(StoreUnavailableError, match="newer dokoro"):
        Store.open(root)


def test_doctor_says_when_this_open_upgraded_an_old_store(tmp_path):
    from dokoro_store.housekeeping.health import diagnose

    root = tmp_path / "dokoro"
    old = Database.open_sqlite(StorePaths(root).sqlite_file)
    try:
        upgrade(old, "0001")
    finally:
        old.dispose()
    with Store.open(root) as store:
        (schema,) = [c for c in diagnose(store) if c.label == "Schema"]
        assert "upgraded on this open from 0001" in schema.value and schema.status == "ok"
    with Store.open(root) as again:
        (schema,) = [c for c in diagnose(again) if c.label == "Schema"]
        assert "upgraded" not in schema.value and "created" not in schema.value
