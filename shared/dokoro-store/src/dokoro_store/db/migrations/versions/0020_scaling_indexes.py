"""Indexes that keep remember and vector search fast at 100k memories.

- ``memory_entities``: one row per (memory, entity), indexed by entity, filled from each memory's
  ``entities`` list. The conflict gate finds the memories sharing an entity with a new one by a
  join on it, instead of reading every active memory.
- PostgreSQL with pgvector: a typed column per embedder dimension (``embedding_v384``,
  ``embedding_v512``, ``embedding_v768``, ``embedding_v1024``: the bundled ONNX and static models,
  the hashing floor, Ollama's nomic-embed-text and mxbai-embed-large) with an HNSW index (cosine)
  on each. pgvector indexes only a column of fixed dimension, and the untyped ``embedding_pgv``
  of 0005 has none; it stays for the vectors of any other dimension (scanned exactly).
  Existing vectors move to their typed column.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-30
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

# Keep in step with dokoro_store.index.vectors.pgvector.TYPED_DIMENSIONS.
_DIMENSIONS = (384, 512, 768, 1024)


def _has_pgvector_column(bind: sa.Connection) -> bool:
    return bool(
        bind.exec_driver_sql(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = 'chunks' AND column_name = 'embedding_pgv'"
        ).scalar()
    )


def upgrade() -> None:
    op.create_table(
        "memory_entities",
        sa.Column("memory_id", sa.String(), sa.ForeignKey("memories.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("entity", sa.String(), primary_key=True),
    )
    op.create_index("ix_memory_entities_entity", "memory_entities", ["entity", "memory_id"])
    bind = op.get_bind()
    rows = []
    for memory_id, entities in bind.execute(sa.text("SELECT id, entities FROM memories")).all():
        names = json.loads(entities) if isinstance(entities, str) else (entities or [])
        rows += [{"memory_id": memory_id, "entity": name} for name in dict.fromkeys(str(n) for n in names)]
    if rows:
        table = sa.table("memory_entities", sa.column("memory_id", sa.String()), sa.column("entity", sa.String()))
        op.bulk_insert(table, rows)

    if bind.dialect.name == "postgresql" and _has_pgvector_column(bind):
        for dim in _DIMENSIONS:
            bind.exec_driver_sql(f"ALTER TABLE chunks ADD COLUMN embedding_v{dim} vector({dim})")
            bind.exec_driver_sql(
                f"UPDATE chunks SET embedding_v{dim} = CAST(embedding_pgv AS vector({dim})), embedding_pgv = NULL "
                f"WHERE embedding_pgv IS NOT NULL AND vector_dims(embedding_pgv) = {dim}"
            )
            bind.exec_driver_sql(
                f"CREATE INDEX ix_chunks_v{dim}_hnsw ON chunks USING hnsw (embedding_v{dim} vector_cosine_ops)"
            )


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql" and _has_pgvector_column(bind):
        for dim in _DIMENSIONS:
            bind.exec_driver_sql(
                f"UPDATE chunks SET embedding_pgv = CAST(embedding_v{dim} AS vector) WHERE embedding_v{dim} IS NOT NULL"
            )
            bind.exec_driver_sql(f"DROP INDEX IF EXISTS ix_chunks_v{dim}_hnsw")
            bind.exec_driver_sql(f"ALTER TABLE chunks DROP COLUMN IF EXISTS embedding_v{dim}")
    op.drop_index("ix_memory_entities_entity", table_name="memory_entities")
    op.drop_table("memory_entities")
