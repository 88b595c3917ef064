"""``docs.unextracted``: the documents not yet extracted into the entity graph (write-behind).

An index write marks each document it (re)indexed with the token of its write, in the same
transaction; a background step of the writing process extracts the marked documents in batches
shortly after, and clears the marks of exactly the writes it extracted (a document indexed again
meanwhile keeps its new mark). A process killed before that leaves its marks: the next one
(or the next graph read) completes them. The partial index holds only the marked rows, so
finding them reads a handful of index entries whatever the size of the store. NULL: extracted.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_WHERE = "unextracted IS NOT NULL"


def upgrade() -> None:
    op.add_column("docs", sa.Column("unextracted", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_docs_unextracted",
        "docs",
        ["unextracted"],
        sqlite_where=sa.text(_WHERE),
        postgresql_where=sa.text(_WHERE),
    )


def downgrade() -> None:
    op.drop_index("ix_docs_unextracted", table_name="docs")
    with op.batch_alter_table("docs") as batch:
        batch.drop_column("unextracted")
