"""Full text over session summaries: ``dokoro_session_recall`` takes candidates from it.

SQLite: an external-content FTS5 index ``summaries_fts`` (``porter unicode61``) on
``conversation_summaries.summary``, kept in step by triggers. PostgreSQL: a GIN expression index
on ``to_tsvector('english', summary)`` (no new column; the recall query repeats the expression).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

_SQLITE = [
    "CREATE VIRTUAL TABLE summaries_fts USING fts5(summary, content='conversation_summaries', "
    "content_rowid='id', tokenize='porter unicode61')",
    """CREATE TRIGGER summaries_fts_ai AFTER INSERT ON conversation_summaries BEGIN
        INSERT INTO summaries_fts(rowid, summary) VALUES (new.id, new.summary);
    END""",
    """CREATE TRIGGER summaries_fts_ad AFTER DELETE ON conversation_summaries BEGIN
        INSERT INTO summaries_fts(summaries_fts, rowid, summary) VALUES ('delete', old.id, old.summary);
    END""",
    """CREATE TRIGGER summaries_fts_au AFTER UPDATE OF summary ON conversation_summaries BEGIN
        INSERT INTO summaries_fts(summaries_fts, rowid, summary) VALUES ('delete', old.id, old.summary);
        INSERT INTO summaries_fts(rowid, summary) VALUES (new.id, new.summary);
    END""",
    "INSERT INTO summaries_fts(summaries_fts) VALUES ('rebuild')",
]


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.exec_driver_sql(
            "CREATE INDEX ix_summaries_fts ON conversation_summaries USING gin (to_tsvector('english', summary))"
        )
        return
    for statement in _SQLITE:
        bind.exec_driver_sql(statement)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.exec_driver_sql("DROP INDEX IF EXISTS ix_summaries_fts")
        return
    for name in ("summaries_fts_ai", "summaries_fts_ad", "summaries_fts_au"):
        bind.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
    bind.exec_driver_sql("DROP TABLE IF EXISTS summaries_fts")
