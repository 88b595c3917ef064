"""Partial indexes of what is indexed without vectors: the session summaries not yet embedded
(``conversation_summaries.embedding IS NULL``) and the documents whose index has no embedder yet
(``doc_vectors.embedder IS NULL``).

Writes answer once their row and full text are committed, and their vectors are embedded just
behind them by the writing process (write-behind). The row itself is the durable mark: a process
killed before embedding leaves it unembedded, and the next one finds it through these indexes,
which hold only the unembedded rows, whatever the size of the store.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_summaries_unembedded",
        "conversation_summaries",
        ["id"],
        sqlite_where=sa.text("embedding IS NULL"),
        postgresql_where=sa.text("embedding IS NULL"),
    )
    op.create_index(
        "ix_doc_vectors_unembedded",
        "doc_vectors",
        ["doc_id"],
        sqlite_where=sa.text("embedder IS NULL"),
        postgresql_where=sa.text("embedder IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_doc_vectors_unembedded", table_name="doc_vectors")
    op.drop_index("ix_summaries_unembedded", table_name="conversation_summaries")
