"""``chunks.unmirrored``: the vectors not yet copied to LanceDB (write-behind).

An index write commits its vectors to the database only; on the embedded backend with LanceDB,
each new vector is marked with the token of its write until a mirror step copies it to the
LanceDB table (``index/vectors/lance/engine.py``). The partial index holds only the marked rows, so finding
them reads a handful of index entries whatever the size of the store. NULL: in the copy (or no
copy is kept: pgvector, the exact scan).

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_WHERE = "unmirrored IS NOT NULL"


def upgrade() -> None:
    op.add_column("chunks", sa.Column("unmirrored", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_chunks_unmirrored",
        "chunks",
        ["unmirrored"],
        sqlite_where=sa.text(_WHERE),
        postgresql_where=sa.text(_WHERE),
    )


def downgrade() -> None:
    op.drop_index("ix_chunks_unmirrored", table_name="chunks")
    with op.batch_alter_table("chunks") as batch:
        batch.drop_column("unmirrored")
