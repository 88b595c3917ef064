"""An index on ``docs.updated_at``: a search refresh looks only at the documents saved since its
last scan (``DocumentService.pending_changed``) instead of joining every document with its index
state on every call.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_docs_updated_at", "docs", ["updated_at"])


def downgrade() -> None:
    op.drop_index("ix_docs_updated_at", table_name="docs")
