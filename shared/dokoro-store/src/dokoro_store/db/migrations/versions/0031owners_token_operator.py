"""Operator tokens of the shared HTTP server (``api_tokens.operator``): the actions that rebuild or
read the whole store (a full reindex) are an operator's; an ordinary token is an agent's.

Revision ID: 0031owners
Revises: 0031files
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031owners"
down_revision = "0031files"  # chained after files when the branches met
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("operator", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("operator")
