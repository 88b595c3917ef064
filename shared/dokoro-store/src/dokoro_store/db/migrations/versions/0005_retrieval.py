"""Retrieval: full-text indexes on docs, chunk and vector bookkeeping, summary embeddings.

SQLite: two external-content FTS5 indexes on ``docs`` kept in step by triggers — ``docs_fts``
(``porter unicode61``, words and their stems) and ``docs_trgm`` (trigrams: CJK text and substrings).
PostgreSQL: a generated ``tsvector`` column with a GIN index; a trigram GIN index when ``pg_trgm``
can be enabled; a pgvector column on ``chunks`` when the ``vector`` extension can be enabled.
Creating an extension may need privileges this database user lacks: each attempt runs in a
savepoint, and without it search falls back (ILIKE scan, exact vector scan) and says so.

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op
from dokoro_store.db.types import UtcDateTime
from sqlalchemy.exc import DBAPIError

revision = "0005"
down_revision = "0003"
branch_labels = None
depends_on = None

log = logging.getLogger("dokoro.store")

_SQLITE_FTS = [
    "CREATE VIRTUAL TABLE docs_fts USING fts5(title, content, content='docs', content_rowid='rowid', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE VIRTUAL TABLE docs_trgm USING fts5(title, content, content='docs', content_rowid='rowid', "
    "tokenize='trigram')",
    """CREATE TRIGGER docs_fts_ai AFTER INSERT ON docs BEGIN
        INSERT INTO docs_fts(rowid, title, content) VALUES (new.rowid, new.title, new.content);
        INSERT INTO docs_trgm(rowid, title, content) VALUES (new.rowid, new.title, new.content);
    END""",
    """CREATE TRIGGER docs_fts_ad AFTER DELETE ON docs BEGIN
        INSERT INTO docs_fts(docs_fts, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content);
        INSERT INTO docs_trgm(docs_trgm, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content);
    END""",
    """CREATE TRIGGER docs_fts_au AFTER UPDATE OF title, content ON docs BEGIN
        INSERT INTO docs_fts(docs_fts, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content);
        INSERT INTO docs_trgm(docs_trgm, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content);
        INSERT INTO docs_fts(rowid, title, content) VALUES (new.rowid, new.title, new.content);
        INSERT INTO docs_trgm(rowid, title, content) VALUES (new.rowid, new.title, new.content);
    END""",
    "INSERT INTO docs_fts(docs_fts) VALUES ('rebuild')",
    "INSERT INTO docs_trgm(docs_trgm) VALUES ('rebuild')",
]

# Long documents are cut for the tsvector (PostgreSQL caps one at 1 MB); vectors still see all of them.
_PG_TSVECTOR = """ALTER TABLE docs ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') ||
    setweight(to_tsvector('english'::regconfig, left(coalesce(content, ''), 200000)), 'B')
) STORED"""
_PG_TRGM_INDEX = (
    "CREATE INDEX ix_docs_trgm ON docs USING gin ((coalesce(title, '') || ' ' || coalesce(content, '')) gin_trgm_ops)"
)


def _try_extension(bind: sa.Connection, name: str) -> bool:
    try:
        with bind.begin_nested():
            bind.exec_driver_sql(f"CREATE EXTENSION IF NOT EXISTS {name}")
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        log.warning("dokoro: could not enable the PostgreSQL extension %s (%s); using the fallback", name, reason)
        return False
    return True


def upgrade() -> None:
    op.create_table(
        "doc_vectors",
        sa.Column("doc_id", sa.String(), sa.ForeignKey("docs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("content_hash", sa.String(), nullable=False),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.Column("chunk_count", sa.Integer(), nullable=False),
        sa.Column("embedder", sa.String(), nullable=True),
        sa.Column("last_indexed", UtcDateTime(), nullable=False),
    )
    op.create_table(
        "chunks",
        sa.Column("chunk_id", sa.String(), primary_key=True),
        sa.Column("doc_id", sa.String(), sa.ForeignKey("docs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("start_char", sa.Integer(), nullable=False),
        sa.Column("end_char", sa.Integer(), nullable=False),
        sa.Column("header_context", sa.Text(), nullable=True),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.Column("embedder", sa.String(), nullable=True),
        sa.Column("embedding", sa.LargeBinary(), nullable=True),
    )
    op.create_index("ix_chunks_doc_id", "chunks", ["doc_id"])
    op.create_index("ix_chunks_embedder", "chunks", ["embedder"])
    index_state = op.create_table(
        "index_state",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.Column("embedder", sa.String(), nullable=True),
        sa.Column("dimension", sa.Integer(), nullable=True),
        sa.Column("updated_at", UtcDateTime(), nullable=True),
    )
    op.bulk_insert(index_state, [{"id": 1, "generation": 0}])
    op.add_column("conversation_summaries", sa.Column("embedding", sa.LargeBinary(), nullable=True))
    op.add_column("conversation_summaries", sa.Column("embedder", sa.String(), nullable=True))

    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for statement in _SQLITE_FTS:
            bind.exec_driver_sql(statement)
    elif bind.dialect.name == "postgresql":
        bind.exec_driver_sql(_PG_TSVECTOR)
        bind.exec_driver_sql("CREATE INDEX ix_docs_fts ON docs USING gin (fts)")
        if _try_extension(bind, "pg_trgm"):
            bind.exec_driver_sql(_PG_TRGM_INDEX)
        if _try_extension(bind, "vector"):
            bind.exec_driver_sql("ALTER TABLE chunks ADD COLUMN embedding_pgv vector")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        for name in ("docs_fts_ai", "docs_fts_ad", "docs_fts_au"):
            bind.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
        bind.exec_driver_sql("DROP TABLE IF EXISTS docs_fts")
        bind.exec_driver_sql("DROP TABLE IF EXISTS docs_trgm")
    elif bind.dialect.name == "postgresql":
        bind.exec_driver_sql("DROP INDEX IF EXISTS ix_docs_trgm")
        bind.exec_driver_sql("DROP INDEX IF EXISTS ix_docs_fts")
        bind.exec_driver_sql("ALTER TABLE docs DROP COLUMN IF EXISTS fts")
    with op.batch_alter_table("conversation_summaries") as batch:
        batch.drop_column("embedder")
        batch.drop_column("embedding")
    op.drop_table("index_state")
    op.drop_table("chunks")
    op.drop_table("doc_vectors")
