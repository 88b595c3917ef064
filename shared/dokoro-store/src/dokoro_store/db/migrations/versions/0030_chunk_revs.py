"""Chunks carry the index generation of their write (``chunks.rev``), and the documents whose
chunks a write dropped without new ones are logged (``index_drops``), so a cache of the vectors
catches up with what changed since it last looked instead of reading every vector again.

Every index write bumps ``index_state.generation`` (one row, locked by the bump until commit on
PostgreSQL, behind SQLite's one write lock), so generations commit in order: a reader that sees
generation ``g`` sees every write up to ``g``. An index write bumps first and stamps its chunks
with the new generation; a document deleted (or indexed again into no chunk) is logged at it.
``index_state.drops_from``: the log is complete above it (a clear of the index sets it to its
generation and empties the log; pruning old entries raises it). Existing chunks get 0.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("chunks", sa.Column("rev", sa.BigInteger(), nullable=False, server_default="0"))
    op.create_index("ix_chunks_rev", "chunks", ["rev"])
    op.add_column("index_state", sa.Column("drops_from", sa.BigInteger(), nullable=False, server_default="0"))
    op.create_table(
        "index_drops",
        sa.Column("rev", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("doc_id", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("rev", "doc_id"),
    )
    # Whatever was dropped before is unknown: a cache that looked before this revision reads again.
    op.execute("UPDATE index_state SET drops_from = generation")


def downgrade() -> None:
    op.drop_table("index_drops")
    with op.batch_alter_table("index_state") as batch:
        batch.drop_column("drops_from")
    op.drop_index("ix_chunks_rev", table_name="chunks")
    with op.batch_alter_table("chunks") as batch:
        batch.drop_column("rev")
